"""The conformance suite every graph store passes: the embedded PostgreSQL store always, Neo4j when NEO4J_URI is set."""

from __future__ import annotations

import datetime as dt

import pytest

from components.graph.extraction import LanguageExtractor
from components.graph.model import DocumentGraph
from tests.components.graph.conftest import AIRBUS_2019, make_document

pytestmark = pytest.mark.integration


def names(store, name: str) -> list[str]:
    return [entity.name for entity in store.find_entities(name)]


class TestGraphStoreConformance:
    def test_entities_merge_across_documents_and_aliases(self, airbus_store):
        airbus = airbus_store.find_entities("Airbus")
        assert len(airbus) >= 1 and airbus[0].key == "airbus"
        assert airbus_store.find_entities("AIRBUS SE")[0].uuid == airbus[0].uuid  # suffix and case
        assert airbus_store.find_entities("Airbus Group, Inc.")[0].uuid == airbus[0].uuid
        enders = airbus_store.find_entities("Enders")[0]
        assert enders.name == "Tom Enders" and enders.kind == "person"  # an alias finds the person
        assert airbus[0].fact_count >= 5  # facts from both documents hang off one entity
        assert airbus_store.find_entities("") == [] and airbus_store.find_entities("Boeing") == []

    def test_timeline_is_ordered_and_really_filtered(self, airbus_store):
        uuids = [e.uuid for e in airbus_store.find_entities("Airbus")]
        timeline = airbus_store.entity_facts(uuids)
        dates = [hit.fact.valid_at.value for hit in timeline]
        assert dates == sorted(dates) and len(dates) >= 5
        assert timeline[0].fact.valid_at.iso() == "2000-12"
        window = airbus_store.entity_facts(uuids, dt.date(2019, 1, 1), dt.date(2019, 12, 31))
        assert window and all(hit.fact.valid_at.value.year == 2019 for hit in window)
        assert not airbus_store.entity_facts(uuids, dt.date(2005, 1, 1), dt.date(2005, 12, 31))
        # A fact dated only by its year overlaps a range inside that year.
        texts = [hit.fact.text for hit in airbus_store.entity_facts(uuids, dt.date(2021, 6, 1), dt.date(2021, 6, 30))]
        assert "Two years later, Airbus Group Inc. opened a plant in Alabama." in texts  # dated 2021 only

    def test_as_of_keeps_facts_valid_then(self, airbus_store):
        enders = [e.uuid for e in airbus_store.find_entities("Tom Enders")]
        led = "Enders led the company from 2012 until 2019."
        assert led in [h.fact.text for h in airbus_store.entity_facts(enders, as_of=dt.date(2015, 6, 1))]
        assert led not in [h.fact.text for h in airbus_store.entity_facts(enders, as_of=dt.date(2020, 6, 1))]
        assert all(h.fact.valid_at.value <= dt.date(2015, 6, 1) for h in airbus_store.entity_facts(
            enders, as_of=dt.date(2015, 6, 1)))

    def test_relationships_by_depth(self, airbus_store):
        faury = airbus_store.find_entities("Guillaume Faury")[0]
        one = airbus_store.related_facts(faury.uuid, depth=1)
        assert one and all(hit.hop == 1 for hit in one)
        assert all(faury.uuid in hit.fact.entity_uuids and len(hit.fact.entity_uuids) >= 2 for hit in one)
        two = airbus_store.related_facts(faury.uuid, depth=2)
        assert {hit.hop for hit in two} == {1, 2} and len(two) > len(one)
        hops = [hit.hop for hit in two]
        assert hops == sorted(hops)
        assert len(airbus_store.related_facts(faury.uuid, depth=5, limit=3)) == 3

    def test_search_finds_named_entities_and_words(self, airbus_store):
        hits = airbus_store.search_facts("What happened to Airbus?", limit=20)
        assert hits and all(0.0 <= hit.score <= 1.0 for hit in hits)
        assert "airbus" in [k for k in hits[0].fact.entity_keys]
        words = airbus_store.search_facts("bribery investigations", limit=5)
        assert words[0].fact.text.startswith("Airbus agreed to pay")
        dated = airbus_store.search_facts("Enders", limit=10, as_of=dt.date(2010, 1, 1))
        assert all(h.fact.valid_at is None or h.fact.valid_at.value <= dt.date(2010, 1, 1) for h in dated)
        assert airbus_store.search_facts("zebra xylophone", limit=5) == []

    def test_replacing_a_document_replaces_its_facts(self, airbus_store):
        before = airbus_store.document_fact_count("airbus-2019")
        document, chunks = make_document("airbus-2019", AIRBUS_2019.replace("Emirates", "Qantas"), dt.date(2019, 2, 14))
        document.text = "Airbus SE delivered its last A380 to Emirates on Thursday."
        airbus_store.replace_document(LanguageExtractor().extract(document, chunks))
        assert airbus_store.document_fact_count("airbus-2019") == 1 < before
        texts = [h.fact.text for h in airbus_store.entity_facts([e.uuid for e in airbus_store.find_entities("Airbus")])]
        assert "The company had launched the A380 programme in December 2000." not in texts
        assert "Airbus SE delivered its last A380 to Emirates on Thursday." in texts

    def test_delete_removes_facts_and_orphaned_entities(self, airbus_store):
        assert airbus_store.find_entities("Guillaume Faury")
        removed = airbus_store.delete_document("airbus-2020")
        assert removed >= 4 and airbus_store.document_fact_count("airbus-2020") == 0
        assert airbus_store.find_entities("Guillaume Faury") == []  # only that document named him
        assert airbus_store.find_entities("Alabama") == []
        assert airbus_store.find_entities("Tom Enders")  # still named by the other document
        assert airbus_store.delete_document("airbus-2020") == 0
        airbus_store.delete_document("airbus-2019")
        assert airbus_store.counts()["entities"] == 0 and airbus_store.counts()["facts"] == 0

    def test_search_scope_follows_the_document_filters(self, airbus_store):
        from components.graph.store import FactScope

        only = airbus_store.search_facts("Airbus", limit=50, scope=FactScope(document_ids=("airbus-2020",)))
        assert only and {hit.fact.document_id for hit in only} == {"airbus-2020"}
        dated = airbus_store.search_facts("Airbus", limit=50, scope=FactScope(date_to=dt.date(2019, 12, 31)))
        assert dated and {hit.fact.document_id for hit in dated} == {"airbus-2019"}
        assert all(hit.fact.document_date and hit.fact.document_date <= dt.date(2019, 12, 31) for hit in dated)

    def test_known_names_are_entity_names_and_aliases(self, airbus_store):
        assert airbus_store.known_names({"airbus", "enders", "boeing", "tom enders"}) == {
            "airbus", "enders", "tom enders"}
        assert airbus_store.known_names(set()) == set()

    def test_match_entities_scores_counts_and_dates(self, airbus_store):
        top = airbus_store.match_entities("Airbus", limit=5)[0]
        assert (top.entity.name, top.entity.kind, top.match, top.score) == ("Airbus", "organization", "exact", 1.0)
        assert top.entity.fact_count >= 5 and (top.first_date.iso(), top.last_date.iso()) == ("2000-12", "2021")
        enders = airbus_store.match_entities("enders", limit=5)[0]
        assert (enders.entity.name, enders.match, enders.matched) == ("Tom Enders", "alias", "enders")
        assert "enders" in enders.entity.aliases
        assert airbus_store.match_entities("Guill", limit=5)[0].match == "prefix"
        assert [(m.entity.name, m.match) for m in airbus_store.match_entities("Airbsu", limit=5)][0] == (
            "Airbus", "fuzzy")
        assert airbus_store.match_entities("Airbus", limit=5, kinds=["person"]) == []
        assert [m.entity.name for m in airbus_store.match_entities("Tom Enders", 5, kinds=["person", "place"])] == [
            "Tom Enders"]
        earlier = airbus_store.match_entities("Tom Enders", limit=5, as_of=dt.date(2015, 6, 1))[0]
        assert earlier.entity.fact_count < enders.entity.fact_count and earlier.last_date.value.year <= 2015
        assert airbus_store.match_entities("Guillaume Faury", limit=5, as_of=dt.date(2010, 1, 1)) == []
        assert airbus_store.match_entities("", limit=5) == [] and airbus_store.match_entities("zebra", limit=5) == []
        assert len(airbus_store.match_entities("What did Airbus, Tom Enders and Guillaume Faury do?", limit=2)) == 2

    def test_best_entity_facts_per_entity(self, airbus_store):
        airbus, enders = (airbus_store.match_entities(name, 1)[0].entity for name in ("Airbus", "Tom Enders"))
        best = airbus_store.best_entity_facts([airbus.uuid, enders.uuid], per_entity=2)
        assert set(best) == {airbus.uuid, enders.uuid} and [len(hits) for hits in best.values()] == [2, 2]
        assert all(airbus.uuid in hit.fact.entity_uuids for hit in best[airbus.uuid])
        first = best[airbus.uuid][0].fact  # about Airbus, linking it to another entity, the most recent such
        assert first.entity_uuids[0] == airbus.uuid and len(first.entity_uuids) > 1
        assert first.valid_at.iso() == "2021" and first.document_title
        then = airbus_store.best_entity_facts([enders.uuid], per_entity=10, as_of=dt.date(2015, 6, 1))[enders.uuid]
        assert then and all(hit.fact.valid_at.value <= dt.date(2015, 6, 1) for hit in then)
        assert airbus_store.best_entity_facts([]) == {}

    def test_entity_passage_links_match_the_facts(self, airbus_store):
        found = airbus_store.entity_passage_links()
        airbus = airbus_store.find_entities("Airbus")[0]
        facts = airbus_store.entity_facts([airbus.uuid])
        expected = {(fact.chunk_id, fact.document_id) for fact in (hit.fact for hit in facts)}
        assert {(chunk, document) for entity, chunk, document, _ in found.links if entity == airbus.uuid} == expected
        counted = sum(n for entity, _, _, n in found.links if entity == airbus.uuid)
        assert counted == len(facts)
        enders = airbus_store.find_entities("Enders")[0]
        assert ("airbus", airbus.uuid) in found.names and ("enders", enders.uuid) in found.names  # names and aliases

    def test_empty_graph_and_counts(self, empty_store):
        assert empty_store.counts()["facts"] == 0
        empty_store.replace_document(DocumentGraph("nothing"))
        assert empty_store.document_fact_count("nothing") == 0
        assert empty_store.entity_facts([]) == []
        assert empty_store.match_entities("Airbus") == [] and empty_store.best_entity_facts(["no-such-uuid"]) == {}
