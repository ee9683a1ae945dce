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
    "ingest.cli",
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


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from components.database import DatabaseUnavailable
    from components.knowledge_base.store import KnowledgeBaseUnavailable
    from components.redaction import RedactingStream, install_log_redaction

    # Whatever a command prints or logs passes through the one redaction (keys echoed by upstream errors).
    install_log_redaction()
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(stdout), RedactingStream(stderr)
    try:
        return int(args.func(args) or 0)
    except (UserError, DatabaseUnavailable, KnowledgeBaseUnavailable, ValueError) as exc:
        print(f"research: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("research: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout, sys.stderr = stdout, stderr


if __name__ == "__main__":
    sys.exit(main())
