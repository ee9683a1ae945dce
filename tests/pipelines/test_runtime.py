"""The process's set-up and the runtime: set-up only when asked (once), one catalog per runtime, the database closed
with the runtime that made it, and cached spaCy Docs that no caller can change for the next."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from haystack import component
from pydantic import SecretStr

from components.settings import Settings
from pipelines.runtime import Runtime, RuntimeClosed
from tests.fresh_process import reported, run_python

ECHO_CATALOG = (
    "pipelines:\n  echo:\n    inputs: {value: [echo.value]}\n    outputs: {value: echo.value}\n"
    "    pipeline:\n      components:\n        echo: {type: tests.pipelines.test_runtime.Closable}\n"
)
CLOSED: list[str] = []
TESTS_ALLOWED = {"HAYSTACK_DESERIALIZATION_ALLOWLIST": "tests.*"}  # the catalog's component lives in this module


@pytest.fixture(autouse=True)
def _tests_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in TESTS_ALLOWED.items():
        monkeypatch.setenv(name, value)


@component
class Closable:
    """Echoes its input; records being closed."""

    @component.output_types(value=str)
    def run(self, value: str) -> dict[str, Any]:
        return {"value": value}

    def close(self) -> None:
        CLOSED.append("echo")


SET_UP_SCRIPT = """
import gc, json, logging, sys
from haystack import tracing
from pipelines.catalog import PipelineCatalog
from pipelines import runtime, timing

def state():
    return {
        "records": logging.getLogRecordFactory() is not logging.LogRecord,
        "tracer": timing.installed(),
    }

catalog = PipelineCatalog.loads(sys.argv[1])
before_run = state()
timings = catalog.run("echo", {"value": "x"})["timings"]
after_run = state()
unset_frozen = gc.get_freeze_count()
runtime.setup()
factory = logging.getLogRecordFactory()
set_up = state()
runtime.setup()
again = logging.getLogRecordFactory() is factory and timing.installed()
timed = catalog.run("echo", {"value": "x"})["timings"]
before_warm_up = gc.get_freeze_count()
warmed = PipelineCatalog.loads(sys.argv[1])
warmed.get("echo")
frozen = gc.get_freeze_count()
print(json.dumps({"unset_frozen": unset_frozen, "before_warm_up": before_warm_up, "warmed_frozen": frozen,
                  "before_run": before_run, "after_run": after_run, "untimed": sorted(timings), "set_up": set_up,
                  "once": again, "timed": sorted(timed)}))
"""


@pytest.mark.integration
def test_the_set_up_is_explicit_and_happens_once() -> None:
    # A fresh process: this test session made its own set-up already.
    done = reported(run_python(SET_UP_SCRIPT, ECHO_CATALOG, env=TESTS_ALLOWED, timeout=600))
    nothing = {"records": False, "tracer": False}
    # Constructing a catalog, building and running its pipeline patch nothing (and time nothing but the total).
    assert done["before_run"] == nothing and done["after_run"] == nothing
    assert done["untimed"] == ["total_ms"]
    # `setup()` sets the log record factory and the tracer, once.
    assert done["set_up"] == {"records": True, "tracer": True}
    assert done["once"] is True
    assert done["timed"] == ["echo", "total_ms"]
    # Only a set-up process freezes its heap, once a pipeline is warmed (what the warm-up loaded is then skipped by
    # every later collection); setting up freezes nothing by itself.
    assert done["unset_frozen"] == 0 and done["before_warm_up"] == 0
    assert done["warmed_frozen"] > 0


def echo_runtime(work_dir: Path, settings: Settings | None = None) -> Runtime:
    path = work_dir / f"catalog-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(ECHO_CATALOG, encoding="utf-8")
    return Runtime(settings, pipelines_file=path)


class TestRuntime:
    def test_two_runtimes_do_not_share_a_catalog(self, work_dir: Path) -> None:
        with echo_runtime(work_dir) as first, echo_runtime(work_dir) as second:
            assert first.catalog is first.catalog
            assert first.catalog is not second.catalog
            assert first.catalog.get("echo") is not second.catalog.get("echo")
            CLOSED.clear()
            first.close()
            assert CLOSED == ["echo"]  # the closed runtime's components are closed, not the other's
            assert second.catalog.run("echo", {"value": "still here"})["value"] == "still here"
        assert CLOSED == ["echo", "echo"]

    def test_used_only_between_start_and_close(self, work_dir: Path) -> None:
        runtime = echo_runtime(work_dir)
        with pytest.raises(RuntimeClosed, match="start the runtime"):
            _ = runtime.catalog
        with runtime:
            assert runtime.catalog.names() == ["echo"]
        with pytest.raises(RuntimeClosed, match="closed"):
            _ = runtime.catalog
        with pytest.raises(RuntimeClosed, match="closed"):
            runtime.start()
        runtime.close()  # idempotent

    @pytest.mark.integration
    def test_closing_a_runtime_closes_the_pools_it_made(self, work_dir: Path, settings, database_url: str) -> None:
        from components.database import connection_pool_for

        # Its own URL (the session's server under another application name), so the pool is made under the runtimes.
        url = f"{database_url}{'&' if '?' in database_url else '?'}application_name=rt_{uuid.uuid4().hex[:6]}"
        own = settings.model_copy(update={"database_url": SecretStr(url)})
        first, second = echo_runtime(work_dir, own).start(), echo_runtime(work_dir, own).start()
        pool = first.connection_pool()
        assert second.connection_pool() is pool and connection_pool_for(url) is pool  # one pool, as components get
        with pool.connection() as connection:
            assert connection.execute("SELECT 1").fetchone() == (1,)
        first.close()
        assert not pool.closed  # the other runtime still holds the database
        second.close()
        assert pool.closed
        # The session's pool, made before any runtime, is not the runtimes' to close.
        session_pool = connection_pool_for(database_url)
        with echo_runtime(work_dir).start() as third:
            assert third.connection_pool() is session_pool
        assert not session_pool.closed

    @pytest.mark.integration
    def test_closing_a_runtime_closes_its_components_knowledge_bases(
        self, work_dir: Path, database_url: str, collection_name: str
    ) -> None:
        path = work_dir / "search.yaml"
        path.write_text(
            "pipelines:\n  search:\n    inputs: {query: [search.query]}\n    outputs: {documents: search.documents}\n"
            "    pipeline:\n      components:\n        search:\n"
            "          type: components.knowledge_base.search.KnowledgeBaseSearch\n"
            f"          init_parameters: {{mode: keyword, collection: {collection_name}}}\n",
            encoding="utf-8",
        )
        closed = []
        with Runtime(pipelines_file=path) as runtime:
            assert runtime.catalog.run("search", {"query": "Quillmoor"})["documents"] == []  # an empty collection
            search = runtime.catalog.get("search")
            knowledge_base = search.get_component("search")._kb.get()
            original = knowledge_base.close
            knowledge_base.close = lambda: closed.append(True) or original()
        assert closed == [True]
        assert search.get_component("search")._kb._store is None


class TestCachedDocs:
    TEXT = "Ada Brennick founded Quillmoor Labs in Vellport in 2011."

    @pytest.mark.parametrize("name", ["parse", "parse_syntax", "parse_question"])
    def test_a_callers_changes_are_not_seen_by_the_next(self, name: str) -> None:
        from components.text import language

        analyse = getattr(language, name)
        text = f"{self.TEXT} ({name})"
        first = analyse(text)
        entities = [(ent.text, ent.label_) for ent in first.ents]
        first.ents = []
        first.user_data["seen"] = True
        first[0].lemma_ = "changed"
        second = analyse(text)
        assert analyse.cache_info().hits >= 1  # it came from the cache
        assert second is not first
        assert [(ent.text, ent.label_) for ent in second.ents] == entities
        assert "seen" not in second.user_data and second[0].lemma_ != "changed"

    def test_parsed_lines_too(self) -> None:
        from components.text.language import analyse_text, sentence_spans

        text = f"{self.TEXT} She left in 2019.\nThe lab closed."
        (_, doc), _ = analyse_text(text)
        entities = [ent.text for ent in doc.ents]
        spans = sentence_spans(text)
        doc.ents = []
        doc.user_data["seen"] = True
        (_, again), _ = analyse_text(text)
        assert again is not doc and "seen" not in again.user_data
        assert [ent.text for ent in again.ents] == entities != []
        assert sentence_spans(text) == spans


@pytest.mark.integration
def test_a_runtime_after_a_closed_one_counts_as_a_user_of_the_embedded_server(tmp_path: Path, settings) -> None:
    """The embedded PostgreSQL stops when its last user process detaches: a process that closed a runtime (detaching)
    while another process kept the server running, and then started a new runtime, must be counted again, or the
    other process's exit stops the server under it."""
    import os
    import subprocess

    from pgserver.utils import DiskList

    own = settings.model_copy(update={"database_url": None, "research_data_dir": tmp_path})
    handles = DiskList(tmp_path / "pg" / ".handle_pids.json")
    other = subprocess.Popen(["sleep", "600"])  # another process of the user, attached to the same server
    try:
        with Runtime(own).start() as first:
            with first.connection_pool().connection() as connection:
                assert connection.execute("SELECT 1").fetchone() == (1,)
            handles.get_and_add(other.pid)
        assert handles.get() == [other.pid]  # this process detached; the other keeps the server running
        second = Runtime(own).start()
        try:
            with second.connection_pool().connection() as connection:
                assert connection.execute("SELECT 1").fetchone() == (1,)
            assert sorted(handles.get()) == sorted([other.pid, os.getpid()])
        finally:
            handles.get_and_remove(other.pid)  # the other process leaves first, so closing stops the server
            second.close()
    finally:
        other.kill()
        other.wait()
        _stop_left_server(tmp_path / "pg")


@pytest.mark.integration
def test_a_runtime_after_a_closed_one_starts_the_server_its_other_user_stopped(tmp_path: Path, settings) -> None:
    """This process detached (closing its runtime) while another process used the embedded server; that process then
    left and the server stopped. A new runtime of this process starts it again instead of naming a dead server."""
    import os
    import signal
    import subprocess
    import time

    from pgserver.utils import DiskList

    own = settings.model_copy(update={"database_url": None, "research_data_dir": tmp_path})
    folder = tmp_path / "pg"
    handles = DiskList(folder / ".handle_pids.json")
    other = subprocess.Popen(["sleep", "600"])
    try:
        with Runtime(own).start() as first:
            first.database_url()
            handles.get_and_add(other.pid)
        # The other process leaves as the server's last user: the server stops.
        postmaster = int((folder / "postmaster.pid").read_text().splitlines()[0])
        handles.get_and_remove(other.pid)
        os.kill(postmaster, signal.SIGINT)
        for _ in range(100):
            if not (folder / "postmaster.pid").exists():
                break
            time.sleep(0.1)
        with Runtime(own).start() as second:
            with second.connection_pool().connection() as connection:
                assert connection.execute("SELECT 1").fetchone() == (1,)
            assert handles.get() == [os.getpid()]
    finally:
        other.kill()
        other.wait()
        _stop_left_server(tmp_path / "pg")


def _stop_left_server(folder: Path) -> None:
    """Stop a server a failing test left running in its own folder."""
    import os
    import signal

    pid_file = folder / "postmaster.pid"
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text().splitlines()[0]), signal.SIGINT)
        except (ProcessLookupError, ValueError):
            pass


def test_the_embedding_model_is_the_components_by_name_not_the_runtimes() -> None:
    # Components load the model in warm_up() by the name their init parameters give (serialised in the YAML), from
    # the process's cache by name; a runtime-held model would be a second, unused way to reach it.
    from components.embedding import QueryEmbedder

    assert not hasattr(Runtime, "embedding_model")
    first, second = QueryEmbedder(), QueryEmbedder()
    first.warm_up()
    second.warm_up()
    assert first._model is second._model  # noqa: SLF001 - one copy per model name in the process


def test_a_closed_catalog_gives_its_frozen_pipelines_back_to_the_collector(monkeypatch) -> None:
    import gc
    import weakref

    from pipelines import heap
    from pipelines.catalog import PipelineCatalog

    monkeypatch.setattr(heap, "_on", True)  # as in a set-up process
    catalog = PipelineCatalog.loads(ECHO_CATALOG)
    pipeline = catalog.get("echo")
    assert gc.get_freeze_count() > 0  # the warm-up froze the heap, this pipeline with it
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle  # something a component holds in a reference cycle, as models and clients do
    component = next(part for _, part in pipeline.walk())
    component.held = cycle
    gone = weakref.ref(pipeline)
    cycle_gone = weakref.finalize(component, lambda: None)
    gc.collect()
    gc.freeze()  # the component's cycle is frozen with the rest, as the next warm-up would do
    del pipeline, component, cycle
    catalog.close()
    gc.collect()
    assert gone() is None and not cycle_gone.alive
