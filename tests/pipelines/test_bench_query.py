"""The query bench measures keyword search as it answers once warm: from its in-memory postings where kept."""

from __future__ import annotations

from types import SimpleNamespace

from pipelines.bench import wait_for_keyword_memory


class _Memory:
    def __init__(self, loaded: bool = True) -> None:
        self.waited: list[float] = []
        self.loaded = loaded

    def wait(self, timeout_s: float = 60.0) -> bool:
        self.waited.append(timeout_s)
        return self.loaded


def test_the_bench_waits_for_the_keyword_postings_the_store_keeps() -> None:
    memory = _Memory()
    assert wait_for_keyword_memory(SimpleNamespace(index=SimpleNamespace(keyword_memory=memory)), timeout_s=5.0)
    assert memory.waited == [5.0]


def test_a_load_still_running_at_the_timeout_is_said() -> None:
    store = SimpleNamespace(index=SimpleNamespace(keyword_memory=_Memory(loaded=False)))
    assert wait_for_keyword_memory(store, timeout_s=0.1) is False


def test_a_store_without_in_memory_postings_is_not_waited_for() -> None:
    assert wait_for_keyword_memory(SimpleNamespace(index=SimpleNamespace()))  # Qdrant, Milvus: nothing to wait for
    assert wait_for_keyword_memory(SimpleNamespace())


def test_the_catalog_the_bench_measures_names_its_collection_without_touching_the_environment() -> None:
    import os

    from components.settings import get_settings
    from pipelines.bench import _catalog_for

    environment, settings = dict(os.environ), get_settings()
    catalog = _catalog_for("bench_v3_tarrowby")
    assert catalog.settings.kb_collection == "bench_v3_tarrowby"
    assert dict(os.environ) == environment and get_settings() is settings


def _replay_script():
    from tests.script_modules import load_script

    return load_script("replay_bench_questions")


def test_the_answer_replay_reads_the_base_the_bench_builds_and_refuses_one_without_its_chunks(
    monkeypatch, tmp_path, capsys
) -> None:
    # The replay that proves a speed change keeps every answer must read the bench's own base: when the base moved to
    # a new collection and the replay did not, both files held answers from an empty base and compared equal.
    import components.knowledge_base.factory as factory
    import pipelines.bench as bench
    import pipelines.runtime as runtime

    opened: list[str] = []
    catalogs: list[str] = []

    def open_base(settings, collection=None):
        opened.append(collection)
        return SimpleNamespace(count_chunks=lambda: 7)

    monkeypatch.setattr(factory, "open_knowledge_base", open_base)
    monkeypatch.setattr(bench, "_catalog_for", lambda collection: catalogs.append(collection))
    monkeypatch.setattr(runtime, "setup", lambda: None)
    out = tmp_path / "answers.jsonl"
    assert _replay_script().write(out, 12, 3) == 2
    assert opened == catalogs == [bench.bench_collection(12)]
    assert "holds 7 chunks, not 12" in capsys.readouterr().err
    assert not out.exists()


def test_the_answer_replay_says_which_file_it_cannot_read_without_a_stack_trace(monkeypatch, tmp_path, capsys):
    written = tmp_path / "before.jsonl"
    written.write_text('{"question": "Who founded Tarrowby?"}\n', encoding="utf-8")
    missing = tmp_path / "after.jsonl"
    monkeypatch.setattr("sys.argv", ["replay_bench_questions.py", "compare", str(written), str(missing)])
    assert _replay_script().main() == 2
    assert f"cannot read {missing}" in capsys.readouterr().err
