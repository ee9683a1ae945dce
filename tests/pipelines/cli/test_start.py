"""What `research` does at start: nothing heavy for --help, only what a command uses, quiet output, -v working,
the same default sources as the app, and the answer's confidence when the result has one."""

from __future__ import annotations

import ast
import json
import logging
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from components.contracts import ARXIV_SORT_OPTIONS
from components.contracts.selection import DEFAULT_SOURCES, SELECTION_HELP
from pipelines.cli import arxiv as arxiv_command
from pipelines.cli import ask as ask_command
from pipelines.cli import main
from pipelines.research_result import ResearchResult
from tests.contract_servers import free_port
from tests.fresh_process import REPO_ROOT, reported, run_python

HEAVY = ("torch", "haystack", "spacy", "sentence_transformers", "transformers", "pgserver", "psycopg", "hayhooks")

HELP_SCRIPT = """
import contextlib, io, json, sys
from pipelines.cli import build_parser, main
commands = next(a for a in build_parser()._actions if a.dest == "command").choices
for argv in [["--help"]] + [[name, "--help"] for name in commands]:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main(argv)
heavy = %r
print(json.dumps({"commands": sorted(commands), "loaded": [m for m in heavy if sys.modules.get(m) is not None]}))
"""


class TestFastStart:
    def test_help_of_every_command_imports_nothing_heavy(self) -> None:
        done = reported(run_python(HELP_SCRIPT % (HEAVY,)))
        assert {"ask", "docs", "ingest", "serve", "bench"} <= set(done["commands"])
        assert done["loaded"] == []

    def test_spelled_out_choices_match_the_data_model(self) -> None:
        assert ask_command.SELECTION_HELP == SELECTION_HELP
        assert ask_command.DEFAULT_SOURCES_HELP == ",".join(DEFAULT_SOURCES)
        assert arxiv_command.ARXIV_SORT_OPTIONS == ARXIV_SORT_OPTIONS

    @pytest.mark.integration
    def test_cold_ask_embeds_without_torch_once_ingest_exported_the_model(self, database_url, tmp_path) -> None:
        from components.embedding.runtime import settings_export_ready
        from components.settings import reload_settings

        (tmp_path / "zorblat.md").write_text(
            "# Zorblat\n\nThe Zorblat library was written by Mirela Quandt in 2019. It parses star charts.\n"
        )
        env = {"KB_COLLECTION": f"t_cold_{tmp_path.name[-8:].replace('-', '_')}"}
        ingest = "import sys\nfrom pipelines.cli import main\nsys.argv = ['research', 'ingest', sys.argv[1]]\nmain()"
        done = run_python(ingest, str(tmp_path / "zorblat.md"), env=env, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        assert settings_export_ready(reload_settings())
        script = (
            "import json, sys\nfrom pipelines.cli import main\n"
            "sys.argv = ['research', 'ask', 'Who wrote the Zorblat library?', '--local', '--json']\nrc = main()\n"
            "from components.embedding.model import get_embedding_model\n"
            f"print(json.dumps({{'rc': rc, 'runtime': get_embedding_model().runtime, "
            f"'loaded': [m for m in {HEAVY!r} if sys.modules.get(m) is not None]}}))"
        )
        done = run_python(script, env=env, timeout=600)
        report = reported(done)
        assert report["rc"] == 0 and report["runtime"] == "onnx"
        assert "torch" not in report["loaded"] and "sentence_transformers" not in report["loaded"]
        answer = json.loads(done.stdout[: done.stdout.rindex("\n{")])
        assert "Mirela Quandt" in answer["answer"]

    @pytest.mark.integration
    def test_docs_list_loads_neither_torch_nor_spacy(self, database_url) -> None:
        script = (
            "import json, sys\nfrom pipelines.cli import main\nsys.argv = ['research', 'docs', 'list']\nrc = main()\n"
            f"print(json.dumps({{'rc': rc, 'loaded': [m for m in {HEAVY!r} if sys.modules.get(m) is not None]}}))"
        )
        done = reported(run_python(script))
        assert done["rc"] == 0
        assert "torch" not in done["loaded"] and "spacy" not in done["loaded"]
        assert "sentence_transformers" not in done["loaded"]


class TestDefaultSources:
    def test_ask_without_sources_asks_what_the_app_asks(self, monkeypatch, capsys) -> None:
        import pipelines.runtime as runtime_module

        asked = {}

        class Catalog:
            def research(self, question, sources=None, as_of=None, top_k=None, session_id=None, as_typed=False):
                asked["sources"] = sources
                return ResearchResult(question=question, answer="Nothing.", chunks=[])

        monkeypatch.setattr(runtime_module.Runtime, "catalog", Catalog())
        monkeypatch.setattr(ask_command, "_knowledge_base_is_empty", lambda: False)
        assert main(["ask", "What is Zorblat?", "--local"]) == 0
        # The app's Ask page preselects DEFAULT_SOURCES (tests/app/test_ask_page.py checks the widget).
        assert asked["sources"] == list(DEFAULT_SOURCES) == ["auto"]
        assert "Answer\n  Nothing." in capsys.readouterr().out


def _result(**extra) -> dict:
    base = ResearchResult(
        question="Who founded Quillmark and when?",
        answer="Mira Tallow [1]. She founded Quillmark in 1987 [1].",
        short_answer="Mira Tallow",
        source_selection={"sources": ["kb", "graph"], "reasons": {"kb": ["always searched"], "graph": ["Quillmark"]}},
    ).model_dump(mode="json")
    return {**base, **extra}


class TestConfidence:
    def test_a_sure_short_answer_and_each_part_are_shown_with_their_confidence(self) -> None:
        text = ask_command.format_result(
            _result(
                short_answer_confidence=0.87,
                parts=[
                    {
                        "question": "Who founded Quillmark?",
                        "short_answer": "Mira Tallow",
                        "short_answer_confidence": 0.91,
                        "sure": True,
                    },
                    {
                        "question": "When was Quillmark founded?",
                        "short_answer": "1987",
                        "short_answer_confidence": 0.21,
                        "sure": False,
                    },
                ],
            )
        )
        assert text.startswith("Short answer: Mira Tallow  [sure (0.87)]\n")
        assert "  - Who founded Quillmark?: Mira Tallow  [sure (0.91)]" in text
        # A part the product is not sure of shows no short answer: the cited sentences are the evidence.
        assert "  - When was Quillmark founded?: (no short answer)  [not sure (0.21)]" in text
        assert "1987" not in text.split("Answer\n")[0]

    def test_a_short_answer_held_back_reads_as_not_sure_and_names_none(self) -> None:
        part = {
            "question": "Who founded Quillmark",
            "short_answer": "Mira Tallow",
            "short_answer_confidence": 0.42,
            "sure": False,
        }
        text = ask_command.format_result(_result(short_answer="", short_answer_confidence=0.42, parts=[part]))
        assert text.startswith("Short answer: not sure (confidence 0.42), so none is given")
        assert "Mira Tallow" not in text.split("Answer\n")[0]  # one part: no parts list under the line

    def test_a_result_without_confidence_reads_as_before(self) -> None:
        text = ask_command.format_result(_result())
        assert text.startswith("Short answer: Mira Tallow\n\nAnswer\n")
        assert "sure" not in text and "confidence" not in text
        assert "Sources chosen from the question (auto): kb: always searched; graph: Quillmark" in text


class TestServerAddress:
    def test_a_question_answered_with_torch_leaves_the_onnx_export_for_the_next(self, monkeypatch) -> None:
        calls: list[str] = []

        class Model:
            runtime = "torch"

            def use_onnx_export(self) -> str:
                calls.append(self.runtime)
                return "onnx"

        monkeypatch.setattr("components.embedding.model.get_embedding_model", lambda: Model())
        ask_command.prepare_fast_start()
        assert calls == ["torch"]
        Model.runtime = "onnx"
        ask_command.prepare_fast_start()
        assert calls == ["torch"]

    def test_nobody_listening_costs_a_refused_connection(self, monkeypatch) -> None:
        from components.settings import reload_settings

        monkeypatch.setenv("HAYHOOKS_PORT", str(free_port()))
        reload_settings()
        started = time.perf_counter()
        assert ask_command.ask_server({"question": "Anyone there?", "sources": None}) is None
        assert time.perf_counter() - started < ask_command.CONNECT_TIMEOUT_S + 0.2


RESERVED = set(vars(logging.LogRecord("n", 0, "p", 0, "m", None, None))) | {"message", "asctime"}
LOG_METHODS = {"debug", "info", "warning", "error", "exception", "critical", "log"}


class TestVerboseLogging:
    def test_no_log_call_passes_a_log_record_attribute(self) -> None:
        """Haystack's logger turns keyword arguments into `extra`; `name=` (or `msg=`, `args=` ...) overwrites the
        record's own attribute and raises KeyError as soon as the level is enabled (`research -v`)."""
        found = []
        for folder in ("components", "pipelines", "ingest", "app"):
            for path in sorted((REPO_ROOT / folder).rglob("*.py")):
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in LOG_METHODS:
                        for keyword in node.keywords:
                            if keyword.arg in RESERVED - {"exc_info", "stack_info", "stacklevel"}:
                                found.append(f"{Path(path).relative_to(REPO_ROOT)}:{node.lineno} {keyword.arg}=")
                            if keyword.arg == "extra" and isinstance(keyword.value, ast.Dict):
                                found += [
                                    f"{Path(path).relative_to(REPO_ROOT)}:{node.lineno} extra {key.value}"
                                    for key in keyword.value.keys
                                    if isinstance(key, ast.Constant) and key.value in RESERVED
                                ]
        assert found == []


class TestClosedOutput:
    def test_a_reader_that_goes_away_is_not_a_traceback(self) -> None:
        """`research settings | head -1`: the reader closes the pipe before the command has written; the command
        ends quietly (exit 0) instead of printing BrokenPipeError twice."""
        process = subprocess.Popen(
            [sys.executable, "-m", "pipelines.cli", "settings", "--markdown"],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        process.stdout.close()
        stderr = process.stderr.read().decode()
        assert process.wait(timeout=60) == 0, stderr
        assert "Traceback" not in stderr and "BrokenPipe" not in stderr

    def test_a_nul_character_in_the_question_is_one_sentence(self, capsys) -> None:
        assert main(["ask", "Who founded\x00 it?", "--local"]) == 1
        assert capsys.readouterr().err.strip() == "research: The question holds a NUL character; remove it."


class _FakeServer(ThreadingHTTPServer):
    """A stand-in for `research serve` on 127.0.0.1: answers `POST /research/run` with a fixed status and body."""

    def __init__(self, status: int, body: dict) -> None:
        self.status, self.body, self.requests = status, body, []
        self.delay_s = 0.0  # how long it thinks before answering
        super().__init__(("127.0.0.1", 0), _FakeHandler)


class _FakeHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the http.server interface
        length = int(self.headers.get("Content-Length") or 0)
        self.server.requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": json.loads(self.rfile.read(length))}
        )
        time.sleep(self.server.delay_s)
        payload = json.dumps(self.server.body).encode()
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture()
def fake_server(monkeypatch):
    from components.settings import reload_settings

    servers = []

    def start(status: int = 200, body: dict | None = None) -> _FakeServer:
        server = _FakeServer(status, body if body is not None else {"result": _result(short_answer_confidence=0.9)})
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        monkeypatch.setenv("HAYHOOKS_PORT", str(server.server_address[1]))
        monkeypatch.setenv("API_TOKEN", "t0ken-for-tests")
        reload_settings()
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
    monkeypatch.undo()
    reload_settings()


class TestServerPath:
    def test_the_server_answers_with_the_token_and_the_default_sources(self, fake_server, capsys) -> None:
        server = fake_server()
        assert main(["ask", "Who founded Quillmark?"]) == 0
        captured = capsys.readouterr()
        assert captured.out == ask_command.format_result(_result(short_answer_confidence=0.9))
        assert (
            captured.err.strip() == f"(answered by the server at 127.0.0.1:{server.server_address[1]}; "
            "--local answers here)"
        )
        (request,) = server.requests
        assert request["path"] == "/research/run" and request["auth"] == "Bearer t0ken-for-tests"
        # No sources named: the server applies the one default (auto), as the CLI does in-process.
        assert request["body"] == {"question": "Who founded Quillmark?"}

    def test_ask_through_the_server_loads_nothing_heavy(self, fake_server) -> None:
        server = fake_server()
        script = (
            "import json, sys\nfrom pipelines.cli import main\nrc = main(['ask', 'Who founded Quillmark?'])\n"
            f"print(json.dumps({{'rc': rc, 'loaded': [m for m in {HEAVY!r} if sys.modules.get(m) is not None]}}))"
        )
        env = {"HAYHOOKS_PORT": str(server.server_address[1]), "API_TOKEN": "t0ken-for-tests"}
        done = reported(run_python(script, env=env))
        assert done == {"rc": 0, "loaded": []}

    def test_a_refused_token_is_one_sentence(self, fake_server, capsys) -> None:
        fake_server(401, {"detail": "Missing or invalid bearer token"})
        assert main(["ask", "Who founded Quillmark?"]) == 1
        err = capsys.readouterr().err
        assert "wants a token: set API_TOKEN" in err and "t0ken-for-tests" not in err

    def test_bad_input_is_the_servers_sentence(self, fake_server, capsys) -> None:
        fake_server(422, {"detail": "Unknown source tv; choose from kb, graph."})
        assert main(["ask", "Who founded Quillmark?", "--sources", "kb,tv"]) == 1
        assert capsys.readouterr().err.strip() == "research: Unknown source tv; choose from kb, graph."

    def test_a_port_that_is_not_the_server_is_answered_here(self, fake_server, monkeypatch, capsys) -> None:
        fake_server(404, {"detail": "Not Found"})
        answered_here = []
        monkeypatch.setattr(ask_command, "ask_here", lambda request: answered_here.append(request) or _result())
        assert main(["ask", "Who founded Quillmark?"]) == 0
        assert answered_here and "answered by the server" not in capsys.readouterr().err

    def test_the_client_waits_for_the_budget_the_pipeline_yaml_gives(
        self, fake_server, monkeypatch, tmp_path, capsys
    ) -> None:
        """The question budget is in the research pipeline's YAML: a server given a longer one than
        QUESTION_BUDGET_S may answer after the setting's time, and the client must not hang up and ask again here."""
        from components.settings import reload_settings

        server = fake_server()
        server.delay_s = 0.6
        catalog = tmp_path / "pipelines.yaml"
        catalog.write_text("pipelines:\n  research:\n    pipeline:\n      metadata:\n        question_budget_s: 3\n")
        monkeypatch.setenv("PIPELINES_FILE", str(catalog))
        monkeypatch.setenv("QUESTION_BUDGET_S", "0.2")
        reload_settings()
        monkeypatch.setattr(ask_command, "READ_MARGIN_S", 0.0)
        answered_here = []
        monkeypatch.setattr(ask_command, "ask_here", lambda request: answered_here.append(request) or _result())
        assert main(["ask", "Who founded Quillmark?"]) == 0
        assert not answered_here
        assert "answered by the server" in capsys.readouterr().err
