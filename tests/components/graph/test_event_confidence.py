"""Event facts carry a confidence (`components.graph.event_confidence`), and the timeline and the graph branch keep
the facts at or above a threshold by default, listing the others as less certain."""

from __future__ import annotations

import datetime as dt
import json
import math
from types import SimpleNamespace

import pytest

from components.contracts import StatusKind
from components.graph.entity_timeline import EntityTimeline
from components.graph.event_confidence import (
    FEATURES,
    EventConfidenceModel,
    check_min_confidence,
    default_event_model,
    default_threshold,
    is_certain,
)
from components.graph.extraction import LanguageExtractor
from components.graph.graph_search import GraphSearch
from components.graph.model import DocumentGraph, EntityMention
from components.graph.tools import GraphTools
from tests.components.graph.conftest import make_document
from tests.components.graph.facts import halvard_fact

ANCHOR = dt.date(2022, 5, 10)


def _features(text: str, entity: str) -> dict[str, float]:
    """The event features of `entity`'s fact in a one-paragraph invented document dated `ANCHOR`."""
    document, chunks = make_document("doc-brask", text, ANCHOR, "Brask Optics news")
    graph = LanguageExtractor().extract(document, chunks)
    for fact in graph.facts:
        for key, features in fact.event_features.items():
            if key == entity:
                return features
    raise AssertionError(f"no fact of {entity!r} in {[f.text for f in graph.facts]}")


class TestFeatures:
    @pytest.mark.parametrize(
        ("sentence", "source"),
        [
            ("Brask Optics opened a plant in Velmora on 3 March 2019.", "date:day"),
            ("Brask Optics opened a plant in Velmora in March 2019.", "date:month"),
            ("Brask Optics opened a plant in Velmora in 2019.", "date:year"),
            ("Brask Optics opened a plant in Velmora last year.", "date:relative"),
            ("Brask Optics is making lenses for telescopes in Velmora.", "date:document"),
        ],
    )
    def test_how_the_date_was_found(self, sentence, source):
        features = _features(sentence, "brask optics")
        assert features[source] == 1.0
        assert sum(features.get(f"date:{s}", 0.0) for s in ("day", "month", "year", "relative", "document")) == 1.0

    def test_role_tense_and_modality(self):
        past = _features("Brask Optics opened a plant in Velmora in 2019.", "brask optics")
        assert past["role:subject"] == 1.0 and past["tense:past"] == 1.0 and not past.get("tense:future")
        future = _features("Brask Optics will open a plant in Velmora in 2025.", "brask optics")
        assert future["tense:future"] == 1.0 and not future.get("tense:past")
        assert future.get("after_document") == 1.0
        modal = _features("Brask Optics could open a plant in Velmora in 2025.", "brask optics")
        assert modal["modal"] == 1.0
        negated = _features("Brask Optics did not open a plant in Velmora in 2019.", "brask optics")
        assert negated["negated"] == 1.0
        passive = _features("Brask Optics was founded by Ilse Varga in 2001.", "brask optics")
        assert passive["role:passive"] == 1.0

    def test_reported_speech_and_distances(self):
        reported = _features("Ilse Varga said that Brask Optics opened a plant in Velmora in 2019.", "brask optics")
        assert reported["reported"] == 1.0 and reported["subordinate"] == 1.0
        near = _features("In 2019 Brask Optics opened a plant in Velmora.", "brask optics")
        far = _features(
            "Brask Optics, the lens maker that Ilse Varga started with two friends, opened a plant in Velmora in 2019.",
            "brask optics",
        )
        assert far["log_date_distance"] > near["log_date_distance"]
        assert far["log_sentence_tokens"] > near["log_sentence_tokens"]
        assert near["dates_in_sentence"] == 1.0

    def test_whether_the_entity_takes_part_in_the_main_event(self):
        main = _features("Brask Optics opened a plant in Velmora in 2019.", "brask optics")
        assert main["main_participant"] == main["main_subject"] == main["predicate_is_root"] == 1.0
        assert not main.get("noun_attached")
        aside = _features(
            "A statement from Brask Optics described the plant that opened in Velmora in 2019.", "brask optics"
        )
        assert not aside["main_participant"] and not aside["main_subject"] and aside["noun_attached"] == 1.0
        assert aside["log_tree_distance"] > main["log_tree_distance"]
        reported = _features("Ilse Varga said that Brask Optics opened a plant in Velmora in 2019.", "brask optics")
        assert not reported["predicate_is_root"] and reported["log_root_distance"] > main["log_root_distance"]
        assert reported["root_saying"] == 1.0 and not reported["sayer"]
        sayer = _features("Brask Optics said in 2019 that the plant in Velmora had opened.", "brask optics")
        assert sayer["sayer"] == 1.0

    def test_whether_the_date_modifies_the_entitys_own_clause(self):
        own = _features("Brask Optics opened a plant in Velmora in 2019.", "brask optics")
        assert own["date_same_clause"] == 1.0 and not own["date_other_clause"]
        other = _features(
            "Brask Optics, which opened a plant in Velmora in 2019, makes lenses for telescopes.", "brask optics"
        )
        assert other["date_other_clause"] == 1.0 and not other["date_same_clause"]
        undated = _features("Brask Optics is making lenses for telescopes in Velmora.", "brask optics")
        assert "date_same_clause" not in undated and "date_other_clause" not in undated

    def test_line_shape_position_and_modality(self):
        prose = _features("Brask Optics opened a plant in Velmora in 2019.", "brask optics")
        listed = _features("Brask Optics opened 3 Plants and 2 Labs in Velmora in 2019 and 2020", "brask optics")
        assert listed["capitalised_share"] > prose["capitalised_share"]
        assert listed["number_share"] > prose["number_share"]
        assert listed["unclosed"] == 1.0 and not prose["unclosed"]
        later = _features(
            "Ilse Varga reads maps. Tomas Ek paints walls. Brask Optics opened a plant in Velmora in 2019.",
            "brask optics",
        )
        assert later["position_share"] == 1.0 and later["log_position"] > prose["log_position"] == 0.0
        planned = _features("Brask Optics agreed to buy a plant in Velmora in 2019.", "brask optics")
        assert planned["infinitive"] == 1.0 and not prose["infinitive"]
        assert prose["tense:present"] == 0.0
        making = _features("Brask Optics is making lenses for telescopes in Velmora.", "brask optics")
        assert making["tense:present"] == 1.0

    def test_a_headline_borrowing_the_lead_s_subject_is_described_by_the_headline_alone(self):
        # The headline names no one, so the lead's subject takes part in it; that name's token lies in the lead (its
        # own parse), whose word positions must not be read as the headline's.
        title = "Largest airliner in the world makes its first flight"
        described = []
        for lead in (
            "In Velmora, Brask Optics flew its new airliner on Monday.",  # its verb at the index of the title's root
            "On Monday, in a long awaited and much delayed event, Brask Optics flew its new airliner over Velmora.",
        ):
            document, chunks = make_document("doc-brask", f"{title}\n{lead}", ANCHOR, title)
            facts = LanguageExtractor().extract(document, chunks).facts
            headline = next(fact for fact in facts if fact.text == title)
            described.append(headline.event_features["brask optics"])
        for features in described:
            assert features["headline"] == 1.0
            assert not features["predicate_is_root"] and not features.get("main_participant")
            assert not features.get("main_subject") and "log_date_distance" not in features
        assert described[0] == described[1]


def _model(tmp_path, weights: dict[str, float], threshold: float = 0.5) -> str:
    model = {
        "version": "test",
        "threshold": threshold,
        "features": list(FEATURES),
        "coef": [weights.get(name, 0.0) for name in FEATURES],
        "intercept": 0.0,
        "mean": [0.0] * len(FEATURES),
        "scale": [1.0] * len(FEATURES),
    }
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model), encoding="utf-8")
    return str(path)


class TestModel:
    def test_probability_follows_the_weights(self, tmp_path):
        model = EventConfidenceModel.load(_model(tmp_path, {"tense:future": -2.0, "date:day": 1.0}))
        assert model.probability({}) == pytest.approx(0.5)
        assert model.probability({"tense:future": 1.0}) < 0.5 < model.probability({"date:day": 1.0})

    def test_contributions_say_which_feature_pushes_an_event_down(self, tmp_path):
        model = EventConfidenceModel.load(_model(tmp_path, {"tense:future": -2.0, "date:day": 1.0}))
        shares = model.contributions({"tense:future": 1.0, "date:day": 1.0})
        assert shares["tense:future"] == pytest.approx(-2.0) and shares["date:day"] == pytest.approx(1.0)
        assert shares["modal"] == 0.0
        # The log-odds are the intercept plus the shares.
        z = model.intercept + sum(shares.values())
        assert model.probability({"tense:future": 1.0, "date:day": 1.0}) == pytest.approx(1 / (1 + math.exp(-z)))

    def test_the_extractor_stores_the_surest_participants_confidence(self, tmp_path):
        path = _model(tmp_path, {"tense:future": -3.0})
        extractor = LanguageExtractor(event_model_path=path)
        assert extractor.to_dict()["event_model_path"] == path
        document, chunks = make_document(
            "doc-brask",
            "Brask Optics opened a plant in Velmora in 2019. Brask Optics will open a plant in Tarnholm in 2025.",
            ANCHOR,
        )
        facts = {fact.text[:30]: fact for fact in extractor.extract(document, chunks).facts}
        opened = next(f for text, f in facts.items() if "opened" in text)
        planned = next(f for text, f in facts.items() if "will open" in text)
        assert opened.confidence == pytest.approx(0.5)
        assert planned.confidence < 0.1
        assert planned.contract()["confidence"] == planned.confidence

    def test_a_model_that_cannot_be_read_is_an_error_when_the_extractor_is_made(self, tmp_path):
        with pytest.raises(ValueError, match="no event-confidence model at .*missing.json"):
            LanguageExtractor(event_model_path=str(tmp_path / "missing.json"))
        short = json.loads(open(_model(tmp_path, {})).read())
        short["coef"] = short["coef"][:3]
        (tmp_path / "short.json").write_text(json.dumps(short), encoding="utf-8")
        with pytest.raises(ValueError, match="its lists differ in length"):
            LanguageExtractor(event_model_path=str(tmp_path / "short.json"))

    def test_a_model_naming_a_feature_the_extractor_does_not_compute_is_refused(self, tmp_path):
        unknown = json.loads(open(_model(tmp_path, {})).read())
        unknown["features"][0] = "shoe_size"
        (tmp_path / "unknown.json").write_text(json.dumps(unknown), encoding="utf-8")
        with pytest.raises(ValueError, match="shoe_size"):
            EventConfidenceModel.load(tmp_path / "unknown.json")

    @pytest.mark.parametrize(("field", "value"), [("coef", "nan"), ("scale", "inf"), ("intercept", "nan")])
    def test_a_model_holding_a_number_that_is_not_finite_is_refused(self, tmp_path, field, value):
        broken = json.loads(open(_model(tmp_path, {"tense:past": 2.0})).read())
        number = float(value)
        broken[field] = number if field == "intercept" else [number, *broken[field][1:]]
        (tmp_path / "broken.json").write_text(json.dumps(broken), encoding="utf-8")  # JSON writes NaN and Infinity
        with pytest.raises(ValueError, match="not finite"):
            EventConfidenceModel.load(tmp_path / "broken.json")

    def test_the_shipped_model_scores_every_extractedhalvard_fact(self):
        model = default_event_model()
        assert model is not None and set(model.features) <= set(FEATURES) and 0 < model.threshold < 1
        document, chunks = make_document("doc-brask", "Brask Optics opened a plant in Velmora in 2019.", ANCHOR)
        facts = LanguageExtractor().extract(document, chunks).facts
        assert facts and all(0 <= fact.confidence <= 1 for fact in facts)

    def test_thresholds(self):
        assert is_certain(None, 0.9) and is_certain(0.6, 0.6) and not is_certain(0.59, 0.6)
        assert check_min_confidence(None) is None and check_min_confidence(0) == 0.0
        for bad in (1.5, -0.1, "high", True):
            with pytest.raises(ValueError, match="min_event_confidence must be a number between 0 and 1"):
                check_min_confidence(bad)
        with pytest.raises(ValueError, match="min_event_confidence"):
            EntityTimeline(min_event_confidence=2)
        with pytest.raises(ValueError, match="min_event_confidence"):
            GraphSearch(min_event_confidence=-1)


def halvard_graph(store, *later: tuple[str, float | None, int]):  # noqa: ANN001, ANN201
    """`store` holding Halvard Mills with its sure first fact (1998, confidence 0.93) and the `later` facts
    (sentence, confidence, year) after it."""
    first = ("Halvard Mills opened its first mill in 1998.", 0.93, 1998)
    store.replace_document(
        DocumentGraph(
            document_id="doc-halvard",
            entities=[EntityMention("halvard mills", "Halvard Mills", "organization", confidence=0.9)],
            facts=[halvard_fact(index, *fact) for index, fact in enumerate([first, *later])],
        )
    )
    return store


@pytest.fixture()
def halvard_store(empty_store):
    """A graph with one entity and three facts: a sure one, a doubtful one and one no model scored."""
    return halvard_graph(
        empty_store,
        ("Halvard Mills might have sold a mill in 2005.", 0.12, 2005),
        ("Halvard Mills moved to Orlund in 2011.", None, 2011),
    )


@pytest.mark.integration
class TestThreshold:
    def test_the_store_keeps_the_confidence(self, halvard_store):
        _, hits = GraphTools(halvard_store).timeline_hits("Halvard Mills")
        assert [hit.fact.confidence for hit in hits] == [pytest.approx(0.93), pytest.approx(0.12), None]

    def test_a_fact_below_the_threshold_is_listed_not_drawn(self, halvard_store):
        result = EntityTimeline(graph_store=halvard_store, min_event_confidence=0.5).run(entity_name="Halvard Mills")
        assert result["status"].status is StatusKind.SUCCESS
        assert [item["valid_at"] for item in result["timeline"]] == ["1998", "2011"]
        assert [item["fact"] for item in result["less_certain"]] == ["Halvard Mills might have sold a mill in 2005."]
        assert result["less_certain"][0]["confidence"] == pytest.approx(0.12)
        assert len(result["documents"]) == 2
        everything = EntityTimeline(graph_store=halvard_store, min_event_confidence=0).run(entity_name="Halvard Mills")
        assert len(everything["timeline"]) == 3 and everything["less_certain"] == []

    def test_the_default_is_the_fitted_threshold(self, halvard_store):
        assert 0.12 < default_threshold() < 0.93
        result = EntityTimeline(graph_store=halvard_store).run(entity_name="Halvard Mills")
        assert [item["valid_at"] for item in result["less_certain"]] == ["2005"]

    def test_the_graph_branch_attaches_only_certain_facts(self, halvard_store):
        _, hits = GraphTools(halvard_store).timeline_hits("Halvard Mills")
        passage = SimpleNamespace(id="chunk-1", source_id="doc-halvard", metadata={})
        search = GraphSearch(graph_store=halvard_store, min_event_confidence=0.5, facts_per_passage=5)
        search._attach_facts([passage], ["halvard"], {"halvard": hits})
        assert [fact["valid_at"] for fact in passage.metadata["graph_facts"]] == ["1998", "2011"]


@pytest.fixture()
def doubtful_store(empty_store):
    """A graph whose entity's most recent facts are doubtful and whose only sure fact is its oldest one (one fact
    scored exactly 0.7, to check the stored confidence compares as written)."""
    return halvard_graph(
        empty_store,
        ("Halvard Mills might have sold a mill in 2010.", 0.2, 2010),
        ("Halvard Mills may have closed a mill in 2015.", 0.1, 2015),
        ("Halvard Mills bought a loom in 2004.", 0.7, 2004),
    )


@pytest.mark.integration
class TestBestFactsAboveTheThreshold:
    def test_the_store_ranks_only_facts_at_or_above_the_threshold(self, doubtful_store):
        uuid = EntityMention("halvard mills", "Halvard Mills", "organization").uuid
        ranked = doubtful_store.best_entity_facts([uuid], per_entity=2)[uuid]
        assert [hit.fact.valid_at.iso() for hit in ranked] == ["2015", "2010"]  # the most recent first
        sure = doubtful_store.best_entity_facts([uuid], per_entity=2, min_confidence=0.5)[uuid]
        assert [hit.fact.valid_at.iso() for hit in sure] == ["2004", "1998"]
        at = doubtful_store.best_entity_facts([uuid], per_entity=5, min_confidence=0.7)[uuid]
        assert [hit.fact.valid_at.iso() for hit in at] == ["2004", "1998"]

    def test_the_graph_branch_attaches_the_sure_fact_behind_doubtful_ones(self, doubtful_store, monkeypatch):
        from components.knowledge_base.store import SearchFilters

        uuid = EntityMention("halvard mills", "Halvard Mills", "organization").uuid
        passage = SimpleNamespace(id="chunk-1", source_id="doc-halvard", metadata={})
        walk = SimpleNamespace(passages=["walked"], entities=[uuid])
        search = GraphSearch(graph_store=doubtful_store, min_event_confidence=0.5, facts_per_passage=1)
        search._store = doubtful_store
        search._passage_graph = SimpleNamespace(get=lambda: SimpleNamespace(top_passages=lambda *args: walk))
        monkeypatch.setattr(search, "_embedding", lambda query, embedding: None)
        monkeypatch.setattr(search, "_passages", lambda walked, vector, scope: [passage])
        result = search._search("When did Halvard Mills open a mill?", None, None, 5, SearchFilters())
        assert result.chunks == [passage]
        assert [fact["valid_at"] for fact in passage.metadata["graph_facts"]] == ["2004"]


def test_the_neo4j_query_leaves_less_certain_facts_out_of_the_ranking():
    from unittest.mock import MagicMock

    from components.graph.neo4j_store import Neo4jGraphStore

    driver = MagicMock()
    session = driver.session.return_value.__enter__.return_value
    session.execute_read.side_effect = lambda work, *args: work(session.tx, *args)
    session.tx.run.return_value = []
    store = Neo4jGraphStore("neo4j://h:7687", "neo4j", None, driver=driver)
    store._ready = True
    store.best_entity_facts(["e1"], per_entity=2, min_confidence=0.6)
    query, params = session.tx.run.call_args.args
    assert "f.confidence IS NULL OR f.confidence >= $min_confidence" in query
    assert query.index("$min_confidence") < query.index("collect(f)[..$per]")
    assert params["min_confidence"] == 0.6


@pytest.mark.integration
def test_the_timeline_tool_hands_the_agent_the_less_certain_facts_too(halvard_store):
    import jsonschema

    from components.tools.registry import get_tool
    from components.tools.research_tools import _timeline

    component = EntityTimeline(graph_store=halvard_store, min_event_confidence=0.5)
    run = _timeline(component, entity_name="Halvard Mills")
    assert [item["valid_at"] for item in run.output["timeline"]] == ["1998", "2011"]
    assert [item["fact"] for item in run.output["less_certain"]] == ["Halvard Mills might have sold a mill in 2005."]
    jsonschema.validate(run.output, get_tool("get_entity_timeline").output_schema)


@pytest.mark.integration
def test_a_postgres_graph_written_before_fact_confidences_takes_them(database_url):
    """A graph made by an earlier version (its facts table without the confidence column, every other part of the
    schema in place) gains the column on first use, so its documents can be re-extracted with confidences."""
    import uuid

    from psycopg import sql

    from components.graph.postgres_store import PostgresGraphStore

    collection = f"g_{uuid.uuid4().hex[:10]}"
    old = PostgresGraphStore(collection)
    old.ensure_schema()
    with old._get_pool().connection() as conn:
        conn.execute(sql.SQL("ALTER TABLE {} DROP COLUMN confidence").format(old._names["facts"]))
    try:
        store = PostgresGraphStore(collection)  # the next process to open the graph
        graph = DocumentGraph(
            document_id="doc-halvard",
            entities=[EntityMention("halvard mills", "Halvard Mills", "organization", confidence=0.9)],
            facts=[halvard_fact(0, "Halvard Mills opened its first mill in 1998.", 0.93, 1998)],
        )
        store.replace_document(graph)
        _, hits = GraphTools(store).timeline_hits("Halvard Mills")
        assert [hit.fact.confidence for hit in hits] == [pytest.approx(0.93)]
    finally:
        old.drop()
