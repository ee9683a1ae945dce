"""`EntityTimeline`, `EntityRelationships` and `ComprehensiveSearch` on the real embedded store."""

from __future__ import annotations

import pytest

from components.contracts import StatusKind
from components.graph.comprehensive_search import ComprehensiveSearch
from components.graph.entity_relationships import EntityRelationships
from components.graph.entity_timeline import EntityTimeline

# The graph store the test settings choose (GRAPH_BACKEND postgres) for the collection "research".
PG_RESEARCH = {
    "type": "components.graph.postgres_store.PostgresGraphStore",
    "init_parameters": {"collection": "research"},
}


class TestEntityTimeline:
    def test_init_and_serialisation(self):
        with pytest.raises(ValueError, match="limit"):
            EntityTimeline(limit=0)
        data = EntityTimeline(collection="research", limit=20).to_dict()
        assert data["init_parameters"] == {
            "collection": "research",
            "limit": 20,
            # The store the settings choose (GRAPH_BACKEND postgres), written out.
            "graph_store": PG_RESEARCH,
            "min_event_confidence": None,
            "breaker": {"failures": 5, "cooldown_s": 30.0},
            "timeout_s": 7.0,  # TOOL_TIMEOUT_S as it was built
        }
        assert EntityTimeline.from_dict(data).limit == 20

    @pytest.mark.parametrize("timeout_s", [0, -1.0, 121, True, "soon"])
    def test_a_timeout_out_of_range_or_not_a_number_is_refused_in_one_sentence(self, timeout_s):
        with pytest.raises(ValueError, match=r"^timeout_s must be between 0 and 120 seconds, .* not "):
            EntityTimeline(timeout_s=timeout_s)

    def test_a_timeout_given_is_the_guard_s_and_is_written_out(self):
        timeline = EntityTimeline(timeout_s=2.5)
        assert timeline.to_dict()["init_parameters"]["timeout_s"] == 2.5
        assert EntityTimeline.from_dict(timeline.to_dict()).timeout_s == 2.5

    @pytest.mark.integration
    def test_run_gives_dated_ordered_facts(self, shared_nordvik_store):
        result = EntityTimeline(collection=shared_nordvik_store.collection).run(
            entity_name="nordvik se", start_date="2019", end_date="2021"
        )
        assert result["status"].status is StatusKind.SUCCESS and result["entities"][0] == "Nordvik"
        dates = [item["valid_at"] for item in result["timeline"]]
        assert dates == sorted(dates) and all("2019" <= d[:4] <= "2021" for d in dates)
        assert [d.meta["valid_at"] for d in result["documents"]] == dates

    @pytest.mark.integration
    def test_malformed_dates_are_a_clear_status(self, shared_nordvik_store):
        result = EntityTimeline(collection=shared_nordvik_store.collection).run(entity_name="Nordvik", end_date="soon")
        assert result["status"].status is StatusKind.ERROR
        assert result["status"].message == "end_date 'soon' is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD)"
        assert result["timeline"] == [] and result["documents"] == []


class TestEntityRelationships:
    def test_init_and_serialisation(self):
        with pytest.raises(ValueError, match="limit"):
            EntityRelationships(limit=1000)
        data = EntityRelationships(limit=10).to_dict()
        assert EntityRelationships.from_dict(data).limit == 10

    @pytest.mark.integration
    def test_run_walks_and_clamps_depth(self, shared_nordvik_store):
        component = EntityRelationships(collection=shared_nordvik_store.collection)
        deep = component.run(entity_name="Lindqvist", depth=42)
        assert deep["relationships"]["depth"] == 5 and deep["relationships"]["central_entity"] == "Johan Lindqvist"
        assert deep["relationships"]["search_method"] == "graph_traversal"
        assert len(deep["documents"]) == len(deep["relationships"]["related_facts"]) > 0
        shallow = component.run(entity_name="Lindqvist", depth=0)
        assert shallow["relationships"]["depth"] == 1
        assert {item["hop"] for item in shallow["relationships"]["related_facts"]} == {1}
        assert component.run(entity_name="")["status"].status is StatusKind.ERROR


class TestComprehensiveSearch:
    def test_init_and_serialisation(self):
        with pytest.raises(ValueError, match="vector_mode"):
            ComprehensiveSearch(vector_mode="fuzzy")
        data = ComprehensiveSearch(limit=5, vector_mode="dense").to_dict()
        assert data["init_parameters"] == {
            "collection": None,
            "limit": 5,
            "vector_mode": "dense",
            "graph_store": PG_RESEARCH,  # KB_COLLECTION's
            "breaker": {"failures": 5, "cooldown_s": 30.0},
            "timeout_s": 7.0,
        }
        assert ComprehensiveSearch.from_dict(data).vector_mode == "dense"

    @pytest.mark.integration
    def test_both_sides_with_the_real_knowledge_base(self, shared_nordvik_store):
        # The collection's knowledge base is empty: the vector side answers nothing, the graph side its facts.
        result = ComprehensiveSearch(collection=shared_nordvik_store.collection, limit=5).run(query="Nordvik NV900")
        assert result["status"].status is StatusKind.SUCCESS and result["result"]["errors"] == {}
        assert result["result"]["vector_results"] == [] and 1 <= len(result["result"]["graph_results"]) <= 5
        assert result["documents"][0].meta["source_type"] == "graph"

    @pytest.mark.integration
    def test_graph_side_survives_a_failing_vector_side(self, shared_nordvik_store, monkeypatch):
        import components.graph.comprehensive_search as module

        def unavailable(collection, mode):
            raise ConnectionError("the vector store refused the connection")

        monkeypatch.setattr(module, "knowledge_base_vector_search", unavailable)
        component = ComprehensiveSearch(collection=shared_nordvik_store.collection, limit=5)
        result = component.run(query="Nordvik NV900")
        assert result["result"]["graph_results"] and "refused the connection" in result["result"]["errors"]["vector"]
        assert result["status"].status is StatusKind.PARTIAL and "vector search failed" in result["status"].message
        graph_only = component.run(query="Nordvik", use_vector=False)
        assert graph_only["status"].status is StatusKind.SUCCESS and graph_only["result"]["vector_results"] == []
