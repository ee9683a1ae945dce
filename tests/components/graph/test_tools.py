"""The tool contracts: shapes, clamps and clear errors, over the real embedded store."""

from __future__ import annotations

import time

import pytest

from components.contracts import ContextChunk, SourceType
from components.graph.tools import GraphTools, parse_bound
from components.validation import clamp

pytestmark = pytest.mark.integration


@pytest.fixture()
def tools(shared_nordvik_store):
    return GraphTools(shared_nordvik_store)


def timeline_of(tools, entity_name, start_date=None, end_date=None):
    """The `get_entity_timeline` contract's entries, as the tool builds them."""
    return [hit.fact.contract() for hit in tools.timeline_hits(entity_name, start_date, end_date)[1]]


class TestGraphTools:
    def test_graph_search_contract(self, tools):
        facts = tools.graph_search("Nordvik NV900")
        assert facts
        for fact in facts:
            assert {"fact", "uuid", "valid_at", "invalid_at", "source_node_uuid"} <= set(fact)
            assert fact["document_id"].startswith("nordvik-")
        assert len(tools.graph_search("Nordvik", limit=1)) == 1
        assert len(tools.graph_search("Nordvik", limit=0)) == 1  # clamped to 1
        assert len(tools.graph_search("Nordvik", limit=500)) <= 50

    @pytest.mark.parametrize("query", ["", "   ", None, "x" * 1001])
    def test_graph_search_refuses_bad_queries(self, tools, query):
        with pytest.raises(ValueError, match="query"):
            tools.graph_search(query)

    def test_relationships_contract_and_depth_clamp(self, tools):
        result = tools.get_entity_relationships("Johan Lindqvist", depth=2)
        assert set(result) >= {"central_entity", "related_facts", "search_method"}
        assert result["central_entity"] == "Johan Lindqvist" and result["search_method"] == "graph_traversal"
        assert {item["hop"] for item in result["related_facts"]} == {1, 2}
        assert tools.get_entity_relationships("Johan Lindqvist", depth=0)["depth"] == 1
        assert tools.get_entity_relationships("Johan Lindqvist", depth=99)["depth"] == 5
        shallow = tools.get_entity_relationships("Johan Lindqvist", depth=-3)["related_facts"]
        assert shallow and all(item["hop"] == 1 for item in shallow)

    def test_relationships_of_an_unknown_name_fall_back_to_text_search(self, tools):
        result = tools.get_entity_relationships("bribery")
        assert result["search_method"] == "text_search" and result["central_entity"] == "bribery"
        assert any("bribery" in item["fact"] for item in result["related_facts"])
        with pytest.raises(ValueError, match="entity_name is empty"):
            tools.get_entity_relationships("  ")

    def test_timeline_ordered_and_filtered(self, tools):
        timeline = timeline_of(tools, "Nordvik")
        assert [item["valid_at"] for item in timeline] == sorted(item["valid_at"] for item in timeline)
        only_2019 = timeline_of(tools, "Nordvik", start_date="2019-01-01", end_date="2019-12-31")
        assert only_2019 and all(item["valid_at"].startswith("2019") for item in only_2019)
        assert timeline_of(tools, "Nordvik", start_date="2019-02", end_date="2019-02") == [
            item for item in only_2019 if item["valid_at"].startswith("2019-02")
        ]
        assert timeline_of(tools, "Nordvik", start_date="2030") == []
        assert timeline_of(tools, "Nobody Known") == []

    @pytest.mark.parametrize(
        ("start", "end", "message"),
        [
            ("2019-13-01", None, "start_date '2019-13-01' is not an ISO date"),
            ("last year", None, "start_date 'last year' is not an ISO date"),
            (None, "31/12/2019", "end_date '31/12/2019' is not an ISO date"),
            ("2020", "2019", "start_date 2020 is after end_date 2019"),
        ],
    )
    def test_timeline_refuses_malformed_dates(self, tools, start, end, message):
        with pytest.raises(ValueError, match=message):
            timeline_of(tools, "Nordvik", start_date=start, end_date=end)

    def test_comprehensive_search_runs_both_sides_in_parallel(self, shared_nordvik_store):
        def slow_vector(query: str, limit: int) -> list[ContextChunk]:
            time.sleep(0.3)
            return [
                ContextChunk(
                    id="c1",
                    source_type=SourceType.KB,
                    text="Nordvik chunk",
                    semantic_relevance=0.7,
                    source_id="d1",
                    metadata={
                        "document_id": "d1",
                        "document_title": "t",
                        "collection_name": "c",
                        "chunk_index": 0,
                        "document_total_chunks": 1,
                        "embedding_model": "m",
                    },
                )
            ]

        tools = GraphTools(shared_nordvik_store, vector_search=slow_vector)
        result = tools.comprehensive("Nordvik", limit=5)[0]
        assert result["vector_results"][0]["content"] == "Nordvik chunk"
        assert 1 <= len(result["graph_results"]) <= 5
        assert result["total_results"] == len(result["vector_results"]) + len(result["graph_results"])
        assert result["errors"] == {}
        only_graph = tools.comprehensive("Nordvik", use_vector=False)[0]
        assert only_graph["vector_results"] == [] and only_graph["graph_results"]

    def test_comprehensive_search_survives_either_failure(self, shared_nordvik_store):
        def broken_vector(query: str, limit: int) -> list[ContextChunk]:
            raise ConnectionError("vector store is down")

        result = GraphTools(shared_nordvik_store, vector_search=broken_vector).comprehensive("Nordvik")[0]
        assert result["graph_results"] and result["errors"] == {"vector": "vector store is down"}

        class BrokenStore:
            def search_facts(self, *args, **kwargs):
                raise RuntimeError("graph is down")

        ok_vector = lambda query, limit: []  # noqa: E731
        result = GraphTools(BrokenStore(), vector_search=ok_vector).comprehensive("Nordvik")[0]
        assert result["errors"] == {"graph": "graph is down"} and result["vector_results"] == []

    def test_helpers(self):
        assert clamp("7", 1, 5, "n", default=2) == 5 and clamp(None, 1, 5, "n", default=2) == 2
        assert clamp("x", 1, 50, "n", default=10) == 10
        assert str(parse_bound("2019", "d")) == "2019-01-01" and str(parse_bound("2019", "d", end=True)) == "2019-12-31"
        assert parse_bound("", "d") is None
