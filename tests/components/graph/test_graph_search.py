"""`GraphSearch`, the research pipeline's graph branch, on the real embedded store."""

from __future__ import annotations

import pytest

from components.contracts import StatusKind, document_to_chunk
from components.graph.graph_search import GraphSearch


class TestGraphSearch:
    def test_init_validates(self):
        with pytest.raises(ValueError, match="top_k"):
            GraphSearch(top_k=0)
        with pytest.raises(ValueError, match="timeout_s"):
            GraphSearch(timeout_s=0)
        with pytest.raises(ValueError, match="collection"):
            GraphSearch(collection=" ")

    def test_to_dict_from_dict(self):
        search = GraphSearch(collection="research", top_k=7, timeout_s=3.0)
        data = search.to_dict()
        assert data["init_parameters"] == {"collection": "research", "top_k": 7,
                                           "embedding_model": search.embedding_model, "timeout_s": 3.0}
        again = GraphSearch.from_dict(data)
        assert (again.collection, again.top_k, again.timeout_s) == ("research", 7, 3.0)

    def test_skips_when_not_selected(self):
        result = GraphSearch().run(query="Airbus", sources=["web", "kb"])
        assert result["status"].status is StatusKind.SKIPPED and result["documents"] == []

    @pytest.mark.integration
    def test_run_returns_attributed_graph_chunks(self, shared_airbus_store):
        search = GraphSearch(collection=shared_airbus_store.collection, top_k=5)
        result = search.run(query="What happened to Airbus?", sources=["graph"])
        assert result["status"].status is StatusKind.SUCCESS and 1 <= len(result["documents"]) <= 5
        chunk = document_to_chunk(result["documents"][0])
        assert chunk.source_type.value == "graph" and chunk.source_id.startswith("airbus-")
        assert chunk.metadata["fact_uuid"] == chunk.id and chunk.metadata["chunk_id"]
        assert chunk.metadata["valid_at"] and "Airbus" in chunk.metadata["entities"]

    @pytest.mark.integration
    def test_as_of_restricts_to_facts_valid_then(self, shared_airbus_store):
        search = GraphSearch(collection=shared_airbus_store.collection, top_k=50)
        later = search.run(query="Enders Airbus", as_of="2020-06-01")["documents"]
        earlier = search.run(query="Enders Airbus", as_of="2015")["documents"]
        led = "Enders led the company from 2012 until 2019."
        assert led in [d.content for d in earlier] and led not in [d.content for d in later]
        assert all(d.meta["valid_at"] <= "2015-12-31" for d in earlier)

    @pytest.mark.integration
    def test_relevance_from_the_query_embedding(self, shared_airbus_store, embedding_model):
        search = GraphSearch(collection=shared_airbus_store.collection, top_k=5)
        query = "bribery investigation settlement"
        result = search.run(query=query, query_embedding=embedding_model.embed_one(query).tolist())
        scores = [d.meta["semantic_relevance"] for d in result["documents"]]
        assert scores == sorted(scores, reverse=True) and 0.0 < scores[0] <= 1.0
        assert "bribery" in result["documents"][0].content
        # The facts' embeddings are kept, so the next question about them embeds nothing new.
        uuids = [d.id for d in result["documents"]]
        assert set(shared_airbus_store.fact_embeddings(uuids, search.embedding_model)) == set(uuids)
        calls = []
        real_embed = embedding_model.embed
        embedding_model.embed = lambda texts, **kw: calls.append(texts) or real_embed(texts, **kw)
        try:
            again = search.run(query=query, query_embedding=embedding_model.embed_one(query).tolist())
        finally:
            del embedding_model.embed
        assert [d.meta["semantic_relevance"] for d in again["documents"]] == pytest.approx(scores, abs=1e-5)
        assert calls == []  # the facts' embeddings are stored and the question's is cached per process

    @pytest.mark.integration
    def test_document_filters_apply_to_facts(self, shared_airbus_store):
        search = GraphSearch(collection=shared_airbus_store.collection, top_k=50)
        result = search.run(query="Airbus", filters={"document_ids": ["airbus-2019"], "top_k": 3})
        assert 1 <= len(result["documents"]) <= 3
        assert {d.meta["source_id"] for d in result["documents"]} == {"airbus-2019"}
        later = search.run(query="Airbus", filters={"date_from": "2020-01-01"})["documents"]
        assert later and {d.meta["source_id"] for d in later} == {"airbus-2020"}
        bad = search.run(query="Airbus", filters={"date_from": "01/01/2020"})["status"]
        assert bad.status is StatusKind.ERROR and "date_from '01/01/2020' is not an ISO date" in bad.message

    def test_bad_input_is_a_status_not_an_exception(self):
        assert GraphSearch().run(query="  ")["status"].message == "query must not be empty"
        status = GraphSearch().run(query="Airbus", as_of="yesterday")["status"]
        assert status.status is StatusKind.ERROR and "as_of 'yesterday' is not an ISO date" in status.message

    @pytest.mark.integration
    async def test_run_async_matches_run(self, shared_airbus_store):
        search = GraphSearch(collection=shared_airbus_store.collection, top_k=5)
        sync = search.run(query="Airbus A380")
        result = await search.run_async(query="Airbus A380")
        assert [d.id for d in result["documents"]] == [d.id for d in sync["documents"]]
        assert (await search.run_async(query="Airbus", sources=["web"]))["status"].status is StatusKind.SKIPPED
