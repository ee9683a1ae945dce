"""MemoryWriter: each answered question is remembered, with its entities, on the embedded table or on Zep."""

from __future__ import annotations

import json

import pytest
from haystack import Document
from haystack.dataclasses import GeneratedAnswer

from components.contracts import RankedDocuments, StatusKind
from components.memory import MemoryWriter
from components.memory.backends import make_memory_store


class TestMemoryWriter:
    def test_init_validates_its_values(self) -> None:
        with pytest.raises(ValueError, match="memory backend"):
            MemoryWriter(backend="sqlite")
        with pytest.raises(ValueError, match="SQL identifier"):
            MemoryWriter(table="Bad-Name")

    def test_to_dict_from_dict(self) -> None:
        writer = MemoryWriter(backend="embedded", table="mem_a", timeout_s=3.0, retries=1)
        data = writer.to_dict()
        assert data["type"] == "components.memory.writer.MemoryWriter"
        again = MemoryWriter.from_dict(data)
        assert (again.backend, again.table, again.timeout_s, again.retries) == ("embedded", "mem_a", 3.0, 1)

    def test_blank_answer_is_not_remembered(self) -> None:
        result = MemoryWriter().run(query="Who?", answer="  ")
        assert result["status"].status is StatusKind.SKIPPED and result["interaction_id"] == ""

    def test_require_session_skips_anonymous_interactions(self) -> None:
        writer = MemoryWriter(require_session=True)
        assert MemoryWriter.from_dict(writer.to_dict()).require_session is True
        result = writer.run(query="Who?", answer="Globex.")
        assert result["status"].status is StatusKind.SKIPPED and "no session_id" in result["status"].message

    def test_a_writer_requiring_a_session_says_it_is_idle_only_for_a_question_given_none(self) -> None:
        writer = MemoryWriter(require_session=True)
        assert writer.idle_for({"query": "Who?", "session_id": None}) is True
        assert writer.idle_for({"query": "Who?", "session_id": "  "}) is True
        assert writer.idle_for({"query": "Who?", "session_id": "s1"}) is False
        # A session fed by another component is known only at run time: never idle.
        assert writer.idle_for({"query": "Who?"}) is False
        assert MemoryWriter().idle_for({"session_id": None}) is False

    def test_an_answer_citing_nothing_is_not_remembered(self) -> None:
        result = MemoryWriter().run(query="Who?", answer="No source answered.", documents=[], session_id="s")
        assert result["status"].status is StatusKind.SKIPPED and "cites no evidence" in result["status"].message

    def test_an_answer_built_only_from_memory_is_not_remembered_again(self) -> None:
        recalled = Document(content="Globex.", meta={"source_type": "memory"})
        result = MemoryWriter().run(query="Who?", answer="Globex [1].", documents=[recalled], session_id="s")
        assert result["status"].status is StatusKind.SKIPPED
        assert "repeats earlier conversation" in result["status"].message

    def test_the_answer_builders_view_is_read_as_its_list(self) -> None:
        recalled = RankedDocuments((Document(content="Globex.", meta={"source_type": "memory"}),))
        result = MemoryWriter().run(query="Who?", answer="Globex [1].", documents=recalled, session_id="s")
        assert "repeats earlier conversation" in result["status"].message
        nothing = MemoryWriter().run(
            query="Who?", answer="No source answered.", documents=RankedDocuments(), session_id="s"
        )
        assert "cites no evidence" in nothing["status"].message

    def test_over_long_input_is_a_status(self) -> None:
        result = MemoryWriter().run(query="x" * 5000, answer="y")
        assert result["status"].status is StatusKind.ERROR and "too long" in result["status"].message


@pytest.mark.integration
class TestMemoryWriterEmbedded:
    def test_writes_one_interaction_with_entities_and_sources(
        self,
        database_url,
        embedding_model,
        collection_name,  # noqa: ANN001
    ) -> None:
        cited = Document(
            id="kb-1",
            content="Globex bought Acme.",
            meta={"source_type": "kb", "source_id": "doc-9", "source_title": "Deal memo", "entities": ["Globex"]},
        )
        answer = GeneratedAnswer(data="Globex bought Acme Corp [1].", query="Who bought Acme Corp?", documents=[cited])
        writer = MemoryWriter(backend="embedded", table=collection_name, timeout_s=10)
        result = writer.run(query="Who bought Acme Corp?", answers=[answer], session_id="s9", user_id="ana")
        assert result["status"].status is StatusKind.SUCCESS and result["interaction_id"]
        store = make_memory_store("embedded", collection_name, None, None, 10.0)
        assert store.count("s9") == 1
        with store._connection_pool().connection() as conn:
            row = conn.execute(
                f"SELECT query, response_summary, entities, cited_sources, user_id FROM {collection_name}"
            ).fetchone()
        assert row[0] == "Who bought Acme Corp?" and row[1] == "Globex bought Acme Corp."
        assert row[2] == ["Globex", "Acme Corp"]
        assert row[3] == [
            {"id": "kb-1", "source_type": "kb", "source_id": "doc-9", "source_title": "Deal memo", "source_url": None}
        ]
        assert row[4] == "ana"

    def test_session_defaults_to_default(self, database_url, embedding_model, collection_name) -> None:  # noqa: ANN001
        writer = MemoryWriter(backend="embedded", table=collection_name, timeout_s=10)
        assert writer.run(query="Q?", answer="A.")["status"].ok
        assert make_memory_store("embedded", collection_name, None, None, 10.0).count("default") == 1


class TestMemoryWriterZep:
    def test_creates_user_session_and_two_messages(self, zep_env) -> None:  # noqa: ANN001
        writer = MemoryWriter(backend="zep", zep_api_url=zep_env.base_url, timeout_s=10)
        status = writer.run(query="Who bought Acme?", answer="Globex [1].", session_id="z2", user_id="ben")["status"]
        assert status.status is StatusKind.SUCCESS, status.message
        assert "ben" in zep_env.users and zep_env.sessions["z2"]["user_id"] == "ben"
        question, answer = zep_env.messages["z2"]
        assert (question["role_type"], question["content"]) == ("user", "Who bought Acme?")
        assert (answer["role_type"], answer["content"]) == ("assistant", "Globex [1].")
        assert answer["metadata"]["prior_query"] == "Who bought Acme?"
        assert answer["metadata"]["entity_references"] == ["Acme"]
        # A second write in the same session does not try to create it again.
        writer.run(query="And when?", answer="In 2021.", session_id="z2", user_id="ben")
        creates = [r for r in zep_env.requests if r["path"] == "/api/v2/sessions"]
        assert len(creates) == 1 and len(zep_env.messages["z2"]) == 4

    def test_recreates_a_session_the_server_lost(self, zep_env) -> None:  # noqa: ANN001
        writer = MemoryWriter(backend="zep", zep_api_url=zep_env.base_url, timeout_s=10)
        assert writer.run(query="Q1?", answer="A1.", session_id="z3")["status"].ok
        zep_env.reset()
        assert writer.run(query="Q2?", answer="A2.", session_id="z3")["status"].ok
        assert [m["content"] for m in zep_env.messages["z3"]] == ["Q2?", "A2."]

    def test_server_down_is_an_error_status(self, monkeypatch) -> None:  # noqa: ANN001
        from tests.contract_servers import free_port

        monkeypatch.delenv("ZEP_API_URL", raising=False)
        monkeypatch.setenv("ZEP_API_KEY", "any")
        writer = MemoryWriter(backend="zep", zep_api_url=f"http://127.0.0.1:{free_port()}", timeout_s=10, retries=0)
        status = writer.run(query="Q?", answer="A.")["status"]
        assert status.status is StatusKind.ERROR and "cannot reach" in status.message

    def test_500_then_success_is_retried(self, zep_env) -> None:  # noqa: ANN001
        zep_env.fail("500", path="/api/v2/sessions/z4/memory", times=1)
        writer = MemoryWriter(backend="zep", zep_api_url=zep_env.base_url, timeout_s=10, retries=1)
        status = writer.run(query="Q?", answer="A.", session_id="z4")["status"]
        assert status.status is StatusKind.SUCCESS and status.attempts == 2
        assert json.loads(zep_env.requests[-1]["body"])["messages"][0]["content"] == "Q?"
