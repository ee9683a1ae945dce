"""MemoryRecall: the memory branch of the research pipeline, on the embedded PostgreSQL table and on Zep."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time

import pytest
from haystack import Document

from components.contracts import StatusKind, document_to_chunk
from components.memory import Interaction, MemoryRecall, MemoryWriter
from components.memory.backends import make_memory_store


def _remember(table: str, embedding_model, interaction: Interaction) -> None:  # noqa: ANN001
    from components.memory.store import memory_chunk_text

    store = make_memory_store("embedded", table, None, None, 10.0)
    store.add(interaction, embedding_model.embed_one(memory_chunk_text(interaction)).tolist())


class TestMemoryRecall:
    def test_init_validates_its_values(self) -> None:
        with pytest.raises(ValueError, match="memory backend"):
            MemoryRecall(backend="redis")
        with pytest.raises(ValueError, match="num_results"):
            MemoryRecall(num_results=0)
        with pytest.raises(ValueError, match="SQL identifier"):
            MemoryRecall(table="memory; DROP TABLE x")

    def test_to_dict_from_dict_round_trip_without_the_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("ZEP_API_KEY", "secret-value")
        recall = MemoryRecall(backend="zep", zep_api_url="http://127.0.0.1:9", num_results=5, timeout_s=2.0)
        data = recall.to_dict()
        assert data["init_parameters"]["zep_api_key"] == {
            "type": "env_var",
            "env_vars": ["ZEP_API_KEY"],
            "strict": False,
        }
        assert "secret-value" not in repr(data)
        again = MemoryRecall.from_dict(data)
        assert (again.backend, again.num_results, again.timeout_s, again.zep_api_url) == (
            "zep",
            5,
            2.0,
            "http://127.0.0.1:9",
        )

    def test_skipped_when_memory_not_selected(self) -> None:
        result = MemoryRecall().run(query="anything", sources=["kb", "web"])
        assert result["documents"] == []
        assert result["status"].status is StatusKind.SKIPPED and result["status"].source == "memory"

    def test_skipped_when_filters_restrict_to_documents(self) -> None:
        result = MemoryRecall().run(query="anything", filters={"doc_types": ["pdf"]})
        assert result["status"].status is StatusKind.SKIPPED and "certain documents" in result["status"].message

    def test_bad_input_is_a_status_not_an_exception(self, embedding_model) -> None:  # noqa: ANN001
        recall = MemoryRecall()
        empty = recall.run(query="   ")
        assert empty["status"].status is StatusKind.ERROR and empty["status"].message == "the question is empty"
        number = recall.run(query=7)  # type: ignore[arg-type]
        assert number["status"].message == "the question must be text, not int"
        window = recall.run(query="Acme", time_window="since spring")
        assert window["status"].status is StatusKind.ERROR and "time_window" in window["status"].message
        as_of = recall.run(query="Acme", as_of="yesterday")
        assert as_of["status"].status is StatusKind.ERROR and "as_of" in as_of["status"].message

    # num_results is checked by the shared `clamp`, whose ValueError once escaped `run` (only SourceError was caught).
    BAD_NUM_RESULTS = ["three", True, float("nan")]

    @pytest.mark.parametrize("num_results", BAD_NUM_RESULTS)
    def test_bad_num_results_is_a_status_not_an_exception(self, num_results) -> None:  # noqa: ANN001
        result = MemoryRecall().run(query="Acme", num_results=num_results)
        status = result["status"]
        assert result["documents"] == [] and status.source == "memory"
        assert status.status is StatusKind.ERROR and status.attempts == 0
        assert status.message == f"num_results must be a number, not {num_results!r}"

    @pytest.mark.parametrize("num_results", BAD_NUM_RESULTS)
    async def test_bad_num_results_is_a_status_on_the_async_path_too(self, num_results) -> None:  # noqa: ANN001
        result = await MemoryRecall().run_async(query="Acme", num_results=num_results)
        status = result["status"]
        assert result["documents"] == [] and status.source == "memory"
        assert status.status is StatusKind.ERROR and status.attempts == 0
        assert status.message == f"num_results must be a number, not {num_results!r}"


@pytest.mark.integration
class TestMemoryRecallEmbedded:
    def test_recall_finds_the_relevant_interaction_with_attribution(
        self,
        database_url,
        embedding_model,
        collection_name,  # noqa: ANN001
    ) -> None:
        writer = MemoryWriter(backend="embedded", table=collection_name, timeout_s=10)
        cited = [Document(content="Globex bought Acme.", meta={"source_type": "graph", "entities": ["Globex"]})]
        first = writer.run(
            query="Who acquired Acme Corp?",
            answer="Globex acquired Acme Corp in 2021 [1].",
            documents=cited,
            session_id="s1",
            user_id="ana",
        )
        assert first["status"].status is StatusKind.SUCCESS, first["status"].message
        writer.run(query="What is the boiling point of water?", answer="100 °C at sea level.", session_id="s1")
        recall = MemoryRecall(backend="embedded", table=collection_name, timeout_s=10)
        result = recall.run(query="We discussed the Acme acquisition, who bought it?", session_id="s1", num_results=1)
        assert result["status"].status is StatusKind.SUCCESS
        [document] = result["documents"]
        chunk = document_to_chunk(document)
        assert chunk.metadata["prior_query"] == "Who acquired Acme Corp?"
        assert chunk.metadata["prior_response_summary"] == "Globex acquired Acme Corp in 2021."
        assert chunk.metadata["session_id"] == "s1"
        assert set(chunk.metadata["entity_references"]) >= {"Globex", "Acme Corp"}
        assert chunk.id == f"memory:{first['interaction_id']}"
        assert 0.3 < chunk.semantic_relevance <= 1.0 and chunk.score_kind.value == "cosine"

    def test_session_user_time_window_and_as_of_restrict_recall(
        self,
        database_url,
        embedding_model,
        collection_name,  # noqa: ANN001
    ) -> None:
        now = dt.datetime.now(dt.UTC)
        for session, user, days_ago, query in [
            ("s1", "ana", 0, "Acme revenue in 2024"),
            ("s2", "ben", 0, "Acme revenue in 2023"),
            ("s1", "ana", 40, "Acme revenue in 2022"),
        ]:
            _remember(
                collection_name,
                embedding_model,
                Interaction(
                    session_id=session,
                    user_id=user,
                    query=query,
                    response="It grew.",
                    response_summary="It grew.",
                    created_at=now - dt.timedelta(days=days_ago),
                ),
            )
        recall = MemoryRecall(backend="embedded", table=collection_name, timeout_s=10, num_results=10)

        def queries(**kwargs) -> set[str]:  # noqa: ANN003
            result = recall.run(query="Acme revenue", **kwargs)
            assert result["status"].ok, result["status"].message
            return {document.meta["prior_query"] for document in result["documents"]}

        assert queries() == {"Acme revenue in 2024", "Acme revenue in 2023", "Acme revenue in 2022"}
        assert queries(session_id="s2") == {"Acme revenue in 2023"}
        assert queries(user_id="ana") == {"Acme revenue in 2024", "Acme revenue in 2022"}
        assert queries(time_window="7d") == {"Acme revenue in 2024", "Acme revenue in 2023"}
        as_of = (now - dt.timedelta(days=10)).date().isoformat()
        assert queries(as_of=as_of) == {"Acme revenue in 2022"}
        assert queries(filters={"field": "meta.session_id", "operator": "==", "value": "s2"}) == {
            "Acme revenue in 2023"
        }

    def test_num_results_defaults_to_three_and_is_clamped(
        self,
        database_url,
        embedding_model,
        collection_name,  # noqa: ANN001
    ) -> None:
        for index in range(5):
            _remember(
                collection_name,
                embedding_model,
                Interaction(
                    session_id="s",
                    query=f"Question {index} about Acme",
                    response="Answer.",
                    response_summary="Answer.",
                ),
            )
        recall = MemoryRecall(backend="embedded", table=collection_name, timeout_s=10)
        assert len(recall.run(query="Acme")["documents"]) == 3
        assert len(recall.run(query="Acme", num_results=0)["documents"]) == 1
        assert len(recall.run(query="Acme", num_results=500)["documents"]) == 5

    def test_auto_selects_memory_and_another_source_skips_it(
        self, database_url, embedding_model, collection_name
    ) -> None:  # noqa: ANN001, E501
        _remember(
            collection_name,
            embedding_model,
            Interaction(
                session_id="s",
                query="Where is Globex based?",
                response="Springfield.",
                response_summary="Springfield.",
            ),
        )
        recall = MemoryRecall(backend="embedded", table=collection_name, timeout_s=10)
        sync = recall.run(query="Globex headquarters")
        result = recall.run(query="Globex headquarters", sources=["auto"])
        assert [d.id for d in result["documents"]] == [d.id for d in sync["documents"]] and result["documents"]
        skipped = recall.run(query="Globex", sources=["kb"])
        assert skipped["status"].status is StatusKind.SKIPPED

    def test_an_unreachable_database_is_a_status(self, monkeypatch: pytest.MonkeyPatch, collection_name) -> None:  # noqa: ANN001
        from components.memory.embedded import EmbeddedMemoryStore

        def broken(self, pool) -> None:  # noqa: ANN001
            raise ConnectionError("connection refused")

        monkeypatch.setattr(EmbeddedMemoryStore, "_create_schema", broken)
        recall = MemoryRecall(backend="embedded", table=collection_name + "_x", timeout_s=10, retries=0)
        result = recall.run(query="Acme")
        assert result["documents"] == [] and result["status"].status is StatusKind.ERROR
        assert "cannot reach" in result["status"].message


class TestMemoryRecallZep:
    def _seed(self, zep_env) -> str:  # noqa: ANN001
        writer = MemoryWriter(backend="zep", zep_api_url=zep_env.base_url, timeout_s=10)
        status = writer.run(
            query="Who acquired Acme Corp?",
            answer="Globex acquired Acme Corp in 2021 [1].",
            entities=["Globex"],
            session_id="z1",
            user_id="ana",
        )["status"]
        assert status.status is StatusKind.SUCCESS, status.message
        return "z1"

    def test_recall_through_zep_python(self, zep_env, embedding_model) -> None:  # noqa: ANN001
        self._seed(zep_env)
        zep_env.add_fact("z1", "Globex is headquartered in Springfield.")
        recall = MemoryRecall(backend="zep", zep_api_url=zep_env.base_url, timeout_s=10)
        result = recall.run(query="Who acquired Acme?", user_id="ana", session_id="z1")
        assert result["status"].status is StatusKind.SUCCESS, result["status"].message
        chunks = [document_to_chunk(d) for d in result["documents"]]
        # Question and answer messages of one interaction collapse into one chunk.
        assert len(chunks) == 1
        assert chunks[0].metadata["prior_query"] == "Who acquired Acme Corp?"
        assert chunks[0].metadata["session_id"] == "z1"
        assert "Globex" in chunks[0].metadata["entity_references"]
        assert chunks[0].semantic_relevance > 0.3  # local cosine, the same scale as every source
        search = [r for r in zep_env.requests if r["path"] == "/api/v2/sessions/search"]
        sent = json.loads(search[-1]["body"])
        assert (sent["user_id"], sent["session_ids"], sent["search_scope"]) == ("ana", ["z1"], "messages")

    def test_429_with_retry_after_is_retried(self, zep_env, embedding_model) -> None:  # noqa: ANN001
        self._seed(zep_env)
        zep_env.fail("429", path="/api/v2/sessions/search", times=1, retry_after=0.3)
        recall = MemoryRecall(backend="zep", zep_api_url=zep_env.base_url, timeout_s=10, retries=2)
        started = time.monotonic()
        result = recall.run(query="Acme acquisition", session_id="z1")
        assert result["status"].status is StatusKind.SUCCESS and result["status"].attempts == 2
        assert time.monotonic() - started >= 0.3 and result["documents"]

    @pytest.mark.parametrize(
        ("mode", "expected", "words"),
        [
            ("500", StatusKind.ERROR, "HTTP 500"),
            ("malformed", StatusKind.ERROR, ""),
            ("hang", StatusKind.TIMEOUT, "did not answer within 1 s"),
        ],
    )
    def test_faults_become_statuses(self, zep_env, embedding_model, mode, expected, words) -> None:  # noqa: ANN001
        zep_env.fail(mode)
        # Only the hang is about the timeout; the other faults get 10 s so a slow answer on a loaded machine is not
        # mistaken for a timeout.
        timeout_s = 1 if mode == "hang" else 10
        recall = MemoryRecall(backend="zep", zep_api_url=zep_env.base_url, timeout_s=timeout_s, retries=0)
        started = time.monotonic()
        result = recall.run(query="Acme", session_id="z1")
        elapsed = time.monotonic() - started
        # The hang lasts 120 s: within a few seconds proves the 1 s timeout ended it (room for a loaded machine),
        # and the lower bound that it waited for it. A 500 or a malformed body is reported without waiting out 10 s.
        assert (0.9 <= elapsed < 1 + 4.0) if mode == "hang" else elapsed < 5.0, elapsed
        assert result["documents"] == [] and result["status"].status is expected
        assert words in result["status"].message

    @pytest.mark.parametrize(
        ("body", "words"),
        [
            (b'{"results": [{"message": {"content": "cut off', "it is not valid JSON (Unterminated string"),
            (b'{"results": "not a list"}', "it is JSON but not the shape Zep documents (at results)"),
            (b"<html><body>Bad gateway: upstream returned garbage", "it is not valid JSON (Expecting value"),
        ],
    )
    def test_a_malformed_answer_names_zep_and_what_was_wrong(self, zep_env, embedding_model, body, words) -> None:  # noqa: ANN001
        zep_env.malformed_body = body
        zep_env.fail("malformed", path="/api/v2/sessions/search")
        status = MemoryRecall(backend="zep", zep_api_url=zep_env.base_url, timeout_s=10, retries=0).run(
            query="Acme", session_id="z1"
        )["status"]
        assert status.status is StatusKind.ERROR and status.source == "memory"
        assert status.message.startswith("Zep's answer to the memory search is malformed: ")
        assert words in status.message and "\n" not in status.message

    def test_wrong_key_is_an_auth_status(self, zep_env, embedding_model, monkeypatch) -> None:  # noqa: ANN001
        monkeypatch.setenv("ZEP_API_KEY", "wrong")
        recall = MemoryRecall(backend="zep", zep_api_url=zep_env.base_url, timeout_s=10, retries=0)
        status = recall.run(query="Acme")["status"]
        assert status.status is StatusKind.ERROR and "not authorised" in status.message

    def test_zep_without_key_is_a_clear_status(self, zep_env, monkeypatch, embedding_model) -> None:  # noqa: ANN001
        monkeypatch.delenv("ZEP_API_KEY")
        status = MemoryRecall(backend="zep", zep_api_url=zep_env.base_url, timeout_s=10).run(query="Acme")["status"]
        assert status.status is StatusKind.ERROR and "ZEP_API_KEY" in status.message

    def test_zep_without_url_is_a_clear_status(self, monkeypatch, embedding_model) -> None:  # noqa: ANN001
        monkeypatch.delenv("ZEP_API_URL", raising=False)
        status = MemoryRecall(backend="zep", timeout_s=10).run(query="Acme")["status"]
        assert status.status is StatusKind.ERROR and "ZEP_API_URL" in status.message

    async def test_concurrent_questions_on_zep(self, zep_env, embedding_model) -> None:  # noqa: ANN001
        self._seed(zep_env)
        recall = MemoryRecall(backend="zep", zep_api_url=zep_env.base_url, timeout_s=10)
        # As `Pipeline.run_async` runs a sync component: each question in a worker thread of its own.
        results = await asyncio.gather(
            asyncio.to_thread(recall.run, query="Acme"), asyncio.to_thread(recall.run, query="Globex")
        )
        assert all(r["status"].ok and r["documents"] for r in results)


@pytest.mark.external
class TestMemoryRecallRealZep:
    def test_round_trip_on_the_real_service(self, embedding_model, monkeypatch) -> None:  # noqa: ANN001
        import os
        import uuid

        # The test conftest removes ZEP_API_URL so nothing reaches Zep by accident; these name the real one.
        url, key = os.environ.get("RESEARCH_TEST_ZEP_API_URL"), os.environ.get("RESEARCH_TEST_ZEP_API_KEY")
        if not (url and key):
            pytest.skip("RESEARCH_TEST_ZEP_API_URL and RESEARCH_TEST_ZEP_API_KEY are not set")
        monkeypatch.setenv("ZEP_API_KEY", key)
        session = f"ra-test-{uuid.uuid4().hex[:8]}"
        writer = MemoryWriter(backend="zep", zep_api_url=url)
        assert writer.run(query="What is Haystack?", answer="A framework.", session_id=session)["status"].ok
        status = MemoryRecall(backend="zep", zep_api_url=url).run(query="Haystack", session_id=session)["status"]
        assert status.ok, status.message


@pytest.mark.integration
class TestMemoryRecallInPipeline:
    async def test_branch_survives_yaml_and_runs_concurrently(
        self,
        database_url,
        embedding_model,
        collection_name,  # noqa: ANN001
    ) -> None:
        from haystack import Pipeline

        from components.embedding import QueryEmbedder

        _remember(
            collection_name,
            embedding_model,
            Interaction(
                session_id="p1",
                query="What is HNSW?",
                response="A graph index.",
                response_summary="A graph index.",
            ),
        )
        pipeline = Pipeline()
        pipeline.add_component("embedder", QueryEmbedder())
        pipeline.add_component("memory", MemoryRecall(backend="embedded", table=collection_name, timeout_s=10))
        pipeline.connect("embedder.embedding", "memory.query_embedding")
        again = Pipeline.from_dict(pipeline.to_dict(), allowed_modules=["components", "haystack"])
        data = {"embedder": {"query": "HNSW index"}, "memory": {"query": "HNSW index", "session_id": "p1"}}
        result = await again.run_async(data)
        [document] = result["memory"]["documents"]
        assert document.meta["prior_query"] == "What is HNSW?" and result["memory"]["status"].ok
