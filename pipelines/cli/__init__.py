"""`research`: the command line of the research assistant.

Each command group lives in its own module with a `register(subparsers)` function that adds its parser and sets
`func` (taking the parsed args, returning an exit code). Errors a user can cause are printed as one sentence.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

# Each module adds its commands; order is the order of `research --help`.
COMMAND_MODULES = (
    "pipelines.cli.ask",
    "pipelines.cli.ingest",
    "pipelines.cli.docs",
    "pipelines.cli.kb",
    "pipelines.cli.status",
    "pipelines.cli.bench",
    "pipelines.cli.app",
    "pipelines.cli.settings",
    "pipelines.cli.serve",
    "pipelines.cli.tools",
    "pipelines.cli.entity",
    "pipelines.cli.eval",
    "pipelines.cli.arxiv",
    "pipelines.cli.fit",
)


class UserError(Exception):
    """An error caused by the user's input or setup; printed as its message, without a traceback."""


# Errors of the setup a user fixes (no database, no knowledge base), printed as their sentence. Their modules are
# not imported for this: an exception of a class whose module was never imported cannot have been raised, and a
# command that does not touch the stores (`ask` through the server) must not load them to end.
SETUP_ERRORS = (
    ("components.database", "DatabaseUnavailable"),
    ("components.knowledge_base.store", "KnowledgeBaseUnavailable"),
    ("components.text.language", "LanguageModelMismatch"),  # two spacy_model values in the process's pipelines
    ("components.text.language", "LanguageModelMissing"),  # SPACY_MODEL / spacy_model names no installed pipeline
)


def _user_errors() -> tuple[type[BaseException], ...]:
    loaded = [getattr(sys.modules[module], name) for module, name in SETUP_ERRORS if module in sys.modules]
    return (UserError, ValueError, *loaded)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="research",
        description="Ask questions of your knowledge base, the graph, the web, arXiv and memory; get cited answers.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens (to stderr)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        # A command module that cannot be imported is a broken install, never a command quietly missing.
        importlib.import_module(name).register(subparsers)
    return parser


def _quiet_start(args: argparse.Namespace, whole_process: bool) -> None:
    """Before a command imports anything heavy: no progress bars for loading a model from disk, no torch for a
    command that never embeds, and (without -v) no log records on the terminal: what went wrong with a source is
    in the answer's status lines, an error a user can fix is printed as one sentence."""
    verbose = args.verbose
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    # Hugging Face's bars (`Loading weights: 100%`) are for loading a model, never for waiting on work; the
    # commands that do wait (ingest, bench) draw their own bars.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "info" if verbose else "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    without_torch = getattr(args, "without_torch", False)
    if callable(without_torch):  # a command that does without torch only in some cases (`ask`) says when
        without_torch = without_torch(args)
    if whole_process and without_torch:
        # Haystack imports torch (about 1.5 s) for its device helpers only; a command that reads the stores and
        # never embeds (it sets `without_torch`) does without it. A command that wrongly sets it fails loudly.
        # Only when the process is this command (`research ...`): a host calling `main([...])` keeps torch.
        sys.modules.setdefault("torch", None)
    # A server's log is what its operator reads (`logs_are_output`): its warnings stay; elsewhere the answer says it.
    quiet = logging.WARNING if getattr(args, "logs_are_output", False) else logging.ERROR
    # Before any import that configures logging, so this is the root's set-up (a host that configured logging
    # itself, e.g. a test runner, keeps its own).
    logging.basicConfig(level=logging.INFO if verbose else quiet, format="%(levelname)s %(name)s: %(message)s")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _quiet_start(args, whole_process=argv is None)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from components.redaction import RedactingStream
    from pipelines.runtime import close_process_runtime, setup

    # Whatever a command prints or logs passes through the one redaction (keys echoed by upstream errors). The rest
    # of the set-up (Haystack's) comes with the runtime of a command that runs pipelines (`process_runtime()`).
    setup(pipelines=False)
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(stdout), RedactingStream(stderr)
    try:
        return int(args.func(args) or 0)
    except (UserError, ValueError, RuntimeError) as exc:
        if not isinstance(exc, _user_errors()):
            raise
        print(f"research: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("research: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`research docs show ID | head`): what it did not read is not an error of ours.
        # Point stdout at /dev/null so the interpreter's final flush does not fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
        return 0
    finally:
        close_process_runtime()  # one command, one runtime: the next command (a host calling `main`) starts afresh
        sys.stdout, sys.stderr = stdout, stderr


if __name__ == "__main__":
    sys.exit(main())
