"""`GraphSearch`, the research pipeline's graph branch: knowledge-base passages found by a walk from the
question's entities, on the real embedded knowledge base and graph."""

from __future__ import annotations

import datetime as dt
from unittest.mock import Mock

import pytest

from components.contracts import StatusKind, document_to_chunk
from components.graph.graph_search import GraphSearch
from components.graph.store import GraphStore, GraphUnavailable

# The question names the company; its founder's birthplace is in another document that never names the company.
NORDVIK = "Nordvik Aviation was founded by Marta Olsen in 1994. Nordvik Aviation builds seaplanes in Norway."
OLSEN = "Marta Olsen was born in Trondheim in 1961. Marta Olsen studied engineering in Bergen."
LINDQVIST = "Lindqvist Motors was founded by Erik Lund in 1990. Erik Lund was born in Uppsala."
QUESTION = "Where was the founder of Nordvik Aviation born?"


@pytest.fixture(scope="module")
def bridge_collection(database_url):
    """A knowledge base and its graph holding the three documents, ingested like any corpus."""
    import uuid

    from components.graph.factory import graph_store_from_settings
    from components.graph.ingest_hook import GraphIngestHook
    from components.knowledge_base.factory import open_knowledge_base
    from ingest.ingestor import Ingestor, document_id_for

    collection = f"walk_{uuid.uuid4().hex[:10]}"
    kb, graph = open_knowledge_base(collection=collection), graph_store_from_settings(collection)
    ingestor = Ingestor(store=kb, hooks=[GraphIngestHook(store=graph)])
    ids = {}
    for name, text, date in (
        ("nordvik", NORDVIK, dt.date(2019, 3, 1)),
        ("olsen", OLSEN, dt.date(2020, 5, 1)),
        ("lindqvist", LINDQVIST, dt.date(2019, 3, 1)),
    ):
        ingestor.ingest_text(text, name.title(), f"test:{name}", date=date)
        ids[name] = document_id_for(f"test:{name}")
    yield collection, ids
    graph.drop()
    kb.drop()


def searcher(collection: str) -> GraphSearch:
    """A warmed-up graph branch over `collection`, as the pipeline makes it (models loaded before questions)."""
    search = GraphSearch(collection=collection, top_k=5, timeout_s=30.0)
    search.warm_up()
    return search


class TestGraphSearch:
    def test_to_dict_from_dict(self):
        search = GraphSearch(collection="research", top_k=7, facts_per_passage=2, damping=0.6, timeout_s=3.0)
        data = search.to_dict()
        assert data["init_parameters"] == {
            "collection": "research",
            "top_k": 7,
            "facts_per_passage": 2,
            "damping": 0.6,
            "embedding_model": search.embedding_model,
            "timeout_s": 3.0,
            "document_store": None,
            "graph_store": {
                "type": "components.graph.postgres_store.PostgresGraphStore",
                "init_parameters": {"collection": "research"},
            },
            "min_event_confidence": None,
            "breaker": {"failures": 5, "cooldown_s": 30.0},
            "spacy_model": search.spacy_model,
            "document_field": "",
        }
        again = GraphSearch.from_dict(data)
        assert (again.collection, again.top_k, again.facts_per_passage, again.damping, again.timeout_s) == (
            "research",
            7,
            2,
            0.6,
            3.0,
        )

    def test_skips_when_not_selected(self):
        result = GraphSearch().run(query="Nordvik", sources=["web", "kb"])
        assert result["status"].status is StatusKind.SKIPPED and result["documents"] == []

    @pytest.mark.integration
    def test_the_walk_returns_the_second_hop_passage(self, bridge_collection):
        collection, ids = bridge_collection
        result = searcher(collection).run(query=QUESTION, sources=["graph"])
        assert result["status"].status is StatusKind.SUCCESS
        chunks = [document_to_chunk(document) for document in result["documents"]]
        # The company's passage, then the founder's, reached through her name; the other company never.
        assert [chunk.source_id for chunk in chunks][:2] == [ids["nordvik"], ids["olsen"]]
        assert ids["lindqvist"] not in {chunk.source_id for chunk in chunks}
        first, second = chunks[0], chunks[1]
        assert first.source_type.value == "kb" and first.ranks == {"graph": 1} and second.ranks == {"graph": 2}
        assert "Trondheim" in second.text and second.source_title == "Olsen"
        assert second.metadata["collection_name"] == collection and second.metadata["chunk_index"] == 0
        assert 0.0 < second.semantic_relevance <= 1.0
        assert first.metadata["graph_walk_score"] > second.metadata["graph_walk_score"] > 0
        # Each passage carries the facts read in it about the entities the walk reached.
        facts = first.metadata["graph_facts"]
        assert facts and all(fact["document_id"] == ids["nordvik"] for fact in facts)
        assert any("Marta Olsen" in fact["entities"] for fact in facts)

    @pytest.mark.integration
    def test_as_of_and_filters_restrict_the_passages(self, bridge_collection):
        collection, ids = bridge_collection
        search = searcher(collection)
        before = search.run(query=QUESTION, as_of="2019-12-31")["documents"]
        assert [d.meta["source_id"] for d in before] == [ids["nordvik"]]  # the founder's document is dated 2020
        only = search.run(query=QUESTION, filters={"document_ids": [ids["olsen"]]}, top_k=3)["documents"]
        assert [d.meta["source_id"] for d in only] == [ids["olsen"]]
        bad = search.run(query=QUESTION, filters={"date_from": "01/01/2020"})["status"]
        assert bad.status is StatusKind.ERROR
        assert "date_from must be a date as YYYY-MM-DD, not '01/01/2020'" in bad.message

    @pytest.mark.integration
    def test_a_question_naming_no_entity_finds_nothing(self, bridge_collection):
        collection, _ = bridge_collection
        result = searcher(collection).run(query="what is the weather like today")
        assert result["status"].status is StatusKind.SUCCESS and result["documents"] == []

    def test_a_store_fault_is_a_status_not_an_exception(self):
        store = Mock(spec=GraphStore)
        store.graph_version.side_effect = GraphUnavailable("The graph tables cannot be created: server closed")
        search = GraphSearch(timeout_s=10.0, graph_store=store)
        result = search.run(query=QUESTION)
        assert result["documents"] == [] and result["status"].status is StatusKind.ERROR
        assert "server closed" in result["status"].message

    @pytest.mark.integration
    def test_passages_stand_when_their_facts_cannot_be_read(self, bridge_collection, monkeypatch):
        collection, ids = bridge_collection
        search = searcher(collection)

        def broken(*args, **kwargs):
            raise GraphUnavailable("The graph cannot be read: connection reset")

        monkeypatch.setattr(search._store, "best_entity_facts", broken)
        result = search.run(query=QUESTION)
        assert result["status"].status is StatusKind.PARTIAL and "facts could not be read" in result["status"].message
        assert [d.meta["source_id"] for d in result["documents"]][:2] == [ids["nordvik"], ids["olsen"]]
        assert not any(d.meta.get("graph_facts") for d in result["documents"])

    def test_bad_input_is_a_status_not_an_exception(self):
        assert GraphSearch().run(query="  ")["status"].message == "query is empty"
        status = GraphSearch().run(query="Nordvik", as_of="yesterday")["status"]
        assert status.status is StatusKind.ERROR and "as_of 'yesterday' is not an ISO date" in status.message
