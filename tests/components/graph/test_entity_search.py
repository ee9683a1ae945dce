"""`EntitySearch`, the entity search's scoring, and its catalog pipeline, on the real embedded store."""

from __future__ import annotations

import pytest
import yaml

from components.contracts import StatusKind, document_to_chunk
from components.graph.entity_search import EntitySearch
from components.graph.store import GraphUnavailable, score_entity_match
from components.graph.tools import GraphTools, check_entity_types
from tests.components.graph.conftest import make_document

QUILLMARK_TEXTS = (
    "Quillmark signed a supply deal with Brenholt Foundry in March 2021. "
    "Vennick, the chief engineer, said the deal doubled output.",
    "Quillmark Tarrowby opened a plant in Saltreach in 2022. The plant employs 300 people.",
)


def search_in(store, **kwargs) -> EntitySearch:
    return EntitySearch(graph_store=store, **kwargs)


class TestScoring:
    @pytest.mark.parametrize(
        ("key", "names", "aliases", "expected"),
        [
            ("nordvik", ["nordvik"], [], ("exact", 1.0, "nordvik")),
            ("dahl", ["henrik dahl"], ["dahl"], ("alias", 0.95, "dahl")),
            ("lindqvist", ["johan lindqvist"], [], ("contains", 0.7, "johan lindqvist")),
            ("what did nordvik do", ["nordvik"], [], ("mention", 0.525, "nordvik")),
            # A query that is itself a longer name holds a shorter one: a surname, a maker's one-word name.
            ("orla vennick", ["vennick"], [], ("within", 0.6, "vennick")),
            ("quillmark tarrowby works", ["harl"], ["quillmark"], ("within", 0.5833, "quillmark")),
            ("zebra", ["nordvik"], [], None),
            ("", ["nordvik"], [], None),
        ],
    )
    def test_kinds_and_scores(self, key, names, aliases, expected):
        assert score_entity_match(key, names, aliases) == expected

    def test_prefix_prefers_whole_words_and_fuzzy_scores_lowest(self):
        whole = score_entity_match("henrik", ["henrik dahl"], [])
        part = score_entity_match("henrik", ["henriksen"], [])
        assert whole[0] == part[0] == "prefix" and 0.8 < part[1] < whole[1] <= 0.9
        fuzzy = score_entity_match("nordvki", ["nordvik"], [])
        assert fuzzy[0] == "fuzzy" and 0.3 <= fuzzy[1] < 0.5
        # A one-word query is compared with each word of a longer name too.
        assert score_entity_match("lindqvst", ["johan lindqvist"], [])[0] == "fuzzy"
        assert score_entity_match("a", ["nordvik"], []) is None  # one letter is no prefix

    def test_common_and_one_letter_names_are_never_found_inside_a_query(self):
        assert score_entity_match("orla v", ["v"], []) is None
        assert score_entity_match("quillmark and us", ["us"], []) is None
        assert score_entity_match("tell us about quillmark", ["us"], []) is None
        assert score_entity_match("the a team", ["the a"], []) is None
        # The whole query still names them, and a name with one proper word still counts inside a text.
        assert score_entity_match("us", ["us"], [])[0] == "exact"
        assert score_entity_match("what did the a team do", ["a team"], [])[0] == "mention"

    def test_entity_types_are_checked(self):
        assert check_entity_types(None) is None and check_entity_types([]) is None
        assert check_entity_types(["Person", "place", "person"]) == ["person", "place"]
        assert check_entity_types("event") == ["event"]
        with pytest.raises(ValueError, match="entity_types has unknown type 'company'; the types are person"):
            check_entity_types(["person", "company"])
        with pytest.raises(ValueError, match="entity_types must be a list"):
            check_entity_types(7)


class TestEntitySearch:
    def test_init_and_serialisation(self):
        with pytest.raises(ValueError, match="limit"):
            EntitySearch(limit=0)
        with pytest.raises(ValueError, match="limit"):
            EntitySearch(limit=51)
        data = EntitySearch(collection="research", limit=20).to_dict()
        assert data["type"] == "components.graph.entity_search.EntitySearch"
        assert data["init_parameters"] == {
            "collection": "research",
            "limit": 20,
            "breaker": {"failures": 5, "cooldown_s": 30.0},
            "timeout_s": 7.0,
            "graph_store": {  # the store the settings choose (GRAPH_BACKEND postgres), written out
                "type": "components.graph.postgres_store.PostgresGraphStore",
                "init_parameters": {"collection": "research"},
            },
        }
        again = EntitySearch.from_dict(data)
        assert (again.collection, again.limit) == ("research", 20)

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"query": "   "}, "query is empty"),
            ({"query": "x" * 1001}, "query is longer than 1,000 characters (1,001)"),
            ({"query": "Nordvik", "entity_types": ["company"]}, "entity_types has unknown type 'company'"),
            ({"query": "Nordvik", "as_of": "soon"}, "as_of 'soon' is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD)"),
        ],
    )
    def test_bad_input_is_a_clear_status(self, kwargs, message):
        result = EntitySearch().run(**kwargs)
        status = result["status"]
        assert status.status is StatusKind.ERROR and status.message.startswith(message)
        assert status.source == "graph_entity_search" and status.attempts == 0
        assert result["entities"] == [] and result["documents"] == []

    def test_a_failing_store_is_a_status_not_an_exception(self):
        class BrokenStore:
            def match_entities(self, *args, **kwargs):
                raise RuntimeError("the graph refused the query")

        search = EntitySearch()
        search._tools = GraphTools(BrokenStore())
        result = search.run(query="Nordvik")
        assert result["status"].status is StatusKind.ERROR and "the graph refused the query" in result["status"].message
        assert result["entities"] == [] and result["documents"] == []

    def test_an_unreachable_graph_is_a_status_not_an_exception(self, monkeypatch):
        import components.graph.factory as factory

        def unreachable(collection):
            raise GraphUnavailable("Neo4j at neo4j://h:7687 cannot be used: ServiceUnavailable")

        monkeypatch.setattr(factory, "graph_store_from_settings", unreachable)
        result = EntitySearch().run(query="Nordvik")
        assert result["status"].status is StatusKind.ERROR and "cannot be used" in result["status"].message
        assert result["entities"] == [] and result["documents"] == []

    @pytest.mark.integration
    def test_exact_name_with_facts_dates_and_attribution(self, shared_nordvik_store):
        result = search_in(shared_nordvik_store).run(query="Nordvik SE")
        status, entities = result["status"], result["entities"]
        assert status.status is StatusKind.SUCCESS and status.total_found == len(entities) >= 1
        nordvik = entities[0]
        assert (nordvik["name"], nordvik["type"], nordvik["match"], nordvik["score"]) == (
            "Nordvik",
            "organization",
            "exact",
            1.0,
        )
        assert nordvik["fact_count"] >= 5 and nordvik["matched"] == "nordvik"
        assert (nordvik["first_fact_date"], nordvik["last_fact_date"]) == ("2000-12", "2021")
        documents = result["documents"]
        assert 1 <= len(documents) <= 3 * len(entities)
        chunk = document_to_chunk(documents[0])
        assert chunk.source_type.value == "graph" and chunk.source_id.startswith("nordvik-")
        assert chunk.metadata["fact_uuid"] == chunk.id and chunk.metadata["chunk_id"]
        assert chunk.metadata["matched_entity"] == "Nordvik" and "Nordvik" in chunk.metadata["entities"]
        assert chunk.semantic_relevance == 1.0 and chunk.source_title
        # The best facts first: about the entity and linking it to others; then the most recent.
        assert chunk.metadata["entities"][0] == "Nordvik" and len(chunk.metadata["entities"]) > 1
        assert len({d.id for d in documents}) == len(documents)

    @pytest.mark.integration
    @pytest.mark.parametrize(
        ("query", "name", "match"),
        [
            ("dahl", "Henrik Dahl", "alias"),
            ("Joh", "Johan Lindqvist", "prefix"),
            ("Nordvki", "Nordvik", "fuzzy"),
            ("What did Henrik Dahl say about the NV900?", "Henrik Dahl", "mention"),
        ],
    )
    def test_alias_prefix_fuzzy_and_free_text(self, shared_nordvik_store, query, name, match):
        result = search_in(shared_nordvik_store).run(query=query)
        assert result["status"].status is StatusKind.SUCCESS
        first = result["entities"][0]
        assert (first["name"], first["match"]) == (name, match)
        assert 0.0 < first["score"] < 1.0
        scores = [item["score"] for item in result["entities"]]
        assert scores == sorted(scores, reverse=True)
        assert result["documents"] and all(d.meta["semantic_relevance"] <= first["score"] for d in result["documents"])

    @pytest.mark.integration
    def test_a_longer_name_finds_the_shorter_names_inside_it(self, empty_store):
        from components.graph.extraction import LanguageExtractor

        extractor = LanguageExtractor()
        for number, text in enumerate(QUILLMARK_TEXTS):
            empty_store.replace_document(extractor.extract(*make_document(f"quillmark-{number}", text, None)))
        search = search_in(empty_store)

        def found(query):
            return [(item["name"], item["match"]) for item in search.run(query=query)["entities"]]

        assert found("Orla Vennick") == [("Vennick", "within")]
        # A whole-name match stays first; the shorter name inside the query follows it.
        assert found("Quillmark Tarrowby") == [("Quillmark Tarrowby", "exact"), ("Quillmark", "within")]
        # More of the query named ranks higher.
        assert found("Quillmark Brenholt Foundry") == [("Brenholt Foundry", "within"), ("Quillmark", "within")]
        # A free text still mentions it.
        assert found("What did Vennick say about the deal?")[0] == ("Vennick", "mention")

    @pytest.mark.integration
    def test_no_match_is_an_empty_success(self, shared_nordvik_store):
        result = search_in(shared_nordvik_store).run(query="zebra xylophone")
        assert result["status"].status is StatusKind.SUCCESS and result["status"].total_found == 0
        assert result["entities"] == [] and result["documents"] == []

    @pytest.mark.integration
    def test_types_limit_and_as_of(self, shared_nordvik_store):
        search = search_in(shared_nordvik_store)
        assert search.run(query="Nordvik", entity_types=["person"])["entities"] == []
        people = search.run(query="What did Henrik Dahl and Johan Lindqvist say?", entity_types=["person"])
        assert {item["name"] for item in people["entities"]} == {"Henrik Dahl", "Johan Lindqvist"}
        assert {item["type"] for item in people["entities"]} == {"person"}
        assert len(search.run(query="What did Henrik Dahl and Johan Lindqvist say?", limit=0)["entities"]) == 1
        assert len(search.run(query="Nordvik", limit=500)["entities"]) <= 50
        now = search.run(query="Henrik Dahl")["entities"][0]
        then = search.run(query="Henrik Dahl", as_of="2015")
        assert then["entities"][0]["fact_count"] < now["fact_count"]
        assert then["entities"][0]["last_fact_date"] <= "2015-12-31"
        assert all(d.meta["valid_at"] is None or d.meta["valid_at"] <= "2015-12-31" for d in then["documents"])
        # Lindqvist's facts all begin in 2019 or later.
        assert search.run(query="Johan Lindqvist", as_of="2010")["entities"] == []

    @pytest.mark.integration
    def test_catalog_pipeline_runs_and_round_trips(self, shared_nordvik_store):
        from pipelines.catalog import PipelineCatalog, build_pipeline
        from tests.pipelines.knowledge import catalog_yaml_for

        catalog = PipelineCatalog.loads(catalog_yaml_for(shared_nordvik_store.collection))
        spec = catalog.spec("entity_search")
        assert set(spec.inputs) == {"query", "limit", "entity_types", "as_of"}
        assert set(spec.outputs) == {"entities", "documents", "status"}
        reloaded = PipelineCatalog.loads(catalog.dumps())
        assert build_pipeline(reloaded.spec("entity_search")).to_dict() == build_pipeline(spec).to_dict()
        inputs = {"query": "Dahl", "entity_types": ["person"], "as_of": "2020"}
        first, second = catalog.run("entity_search", inputs), reloaded.run("entity_search", inputs)
        assert first["status"].status is StatusKind.SUCCESS and first["entities"][0]["name"] == "Henrik Dahl"
        assert first["entities"] == second["entities"]
        assert [d.id for d in first["documents"]] == [d.id for d in second["documents"]]
        exported = yaml.safe_load(catalog.dumps())["pipelines"]["entity_search"]
        assert exported["pipeline"]["components"]["search"]["init_parameters"]["limit"] == 10
