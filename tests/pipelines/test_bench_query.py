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
