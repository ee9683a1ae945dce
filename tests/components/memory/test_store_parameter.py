"""The memory components make their store in `warm_up()` from their own configuration, or are given one."""

from __future__ import annotations

import datetime as dt
from unittest.mock import Mock

import pytest

import components.memory.backends as backends
from components.contracts import StatusKind
from components.memory import MemoryRecall, MemoryWriter
from components.memory.embedded import EmbeddedMemoryStore
from components.memory.store import Interaction, MemoryStore, RecalledInteraction
from components.memory.zep import ZepMemoryStore


class TestMemoryStoreParameter:
    def test_a_given_store_takes_the_writes_and_answers_the_recall(self, embedding_model) -> None:  # noqa: ANN001
        store = Mock(spec=MemoryStore)
        store.backend = "embedded"
        writer = MemoryWriter(memory_store=store)
        assert writer.run(query="Who bought Acme?", answer="Globex did [1].", session_id="s1")["status"].ok
        written = store.add.call_args.args[0]
        assert (written.session_id, written.query) == ("s1", "Who bought Acme?")
        assert len(store.add.call_args.args[1]) == embedding_model.dimension
        store.search.return_value = [
            RecalledInteraction(
                Interaction("s1", "Who bought Acme?", "Globex did.", "Globex did.", created_at=dt.datetime.now(dt.UTC)),
                cosine=0.9,
            )
        ]
        result = MemoryRecall(memory_store=store).run(query="Who bought Acme?", session_id="s1")
        assert result["status"].status is StatusKind.SUCCESS
        assert [document.meta["source_type"] for document in result["documents"]] == ["memory"]
        assert store.search.call_args.args[0].session_id == "s1"

    def test_each_component_makes_its_own_store_once_from_its_configuration(self, monkeypatch) -> None:  # noqa: ANN001
        made: list[tuple] = []

        def make(backend, table, url, key, timeout_s, dimension=384, settings=None):  # noqa: ANN001, ANN202
            made.append((backend, table, url, key))
            return Mock(spec=MemoryStore)

        monkeypatch.setattr("components.memory.backends.make_memory_store", make)
        monkeypatch.setenv("ZEP_API_KEY", "k-from-env")
        recall = MemoryRecall(backend="zep", zep_api_url="http://127.0.0.1:9/")
        writer = MemoryWriter(backend="embedded", table="notes_memory")
        assert made == []  # nothing is made at init
        recall.warm_up()
        writer.warm_up()
        recall.warm_up()
        assert made == [
            ("zep", "memory_interactions", "http://127.0.0.1:9/", "k-from-env"),
            ("embedded", "notes_memory", None, "k-from-env"),
        ]
        assert recall._store() is not writer._store()

    def test_the_store_is_made_for_the_configured_backend(self) -> None:
        embedded = backends.make_memory_store("embedded", "notes_memory", None, None, 5.0)
        assert isinstance(embedded, EmbeddedMemoryStore) and embedded.table == "notes_memory"
        zep = backends.make_memory_store("zep", "memory_interactions", "http://127.0.0.1:9", "k", 5.0)
        assert isinstance(zep, ZepMemoryStore) and zep.api_url == "http://127.0.0.1:9"
        assert backends.make_memory_store("embedded", "notes_memory", None, None, 5.0) is not embedded

    def test_a_zep_without_url_warms_up_and_each_run_says_so(self, monkeypatch) -> None:  # noqa: ANN001
        monkeypatch.delenv("ZEP_API_URL", raising=False)
        recall = MemoryRecall(backend="zep")
        recall.warm_up()
        status = recall.run(query="Who bought Acme?")["status"]
        assert status.status is StatusKind.ERROR and status.message == "The zep memory backend needs ZEP_API_URL."

    def test_bad_store_parameter_and_no_registry(self) -> None:
        with pytest.raises(ValueError, match="memory_store must be a MemoryStore"):
            MemoryWriter(memory_store="embedded")
        assert not hasattr(backends, "_STORES") and not hasattr(backends, "open_memory_store")
        assert "memory_store" not in MemoryRecall(memory_store=Mock(spec=MemoryStore)).to_dict()["init_parameters"]
