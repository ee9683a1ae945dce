"""The conformance suite every graph store passes: the embedded PostgreSQL store always, Neo4j when NEO4J_URI is set."""

from __future__ import annotations

import datetime as dt

import pytest

from components.graph.extraction import LanguageExtractor
from components.graph.model import DocumentGraph
from tests.components.graph.conftest import NORDVIK_2019, make_document

pytestmark = pytest.mark.integration


def names(store, name: str) -> list[str]:
    return [entity.name for entity in store.find_entities(name)]


class TestGraphStoreConformance:
    def test_restamp_keeps_the_facts_and_the_source_mark(self, empty_store):
        document = make_document("nordvik-2019", NORDVIK_2019, dt.date(2019, 2, 14))
        extracted = LanguageExtractor(embedding_model=None).extract(*document)
        extracted.extractor, extracted.source = "spacy/old", "0123abcd0123abcd"
        empty_store.replace_document(extracted)
        count = empty_store.document_fact_count("nordvik-2019")
        assert count >= 4
        assert empty_store.source_marks(["nordvik-2019", "other"]) == {"nordvik-2019": "0123abcd0123abcd"}
        assert empty_store.restamp_document("nordvik-2019", "spacy/new+failed+kept") is True
        assert empty_store.extractor_stamps(["nordvik-2019"]) == {"nordvik-2019": "spacy/new+failed+kept"}
        assert empty_store.document_fact_count("nordvik-2019") == count
        assert empty_store.source_marks(["nordvik-2019"]) == {"nordvik-2019": "0123abcd0123abcd"}
        # A document without a graph has no stamp to change; a graph written without a mark has none.
        assert empty_store.restamp_document("other", "spacy/new") is False
        assert empty_store.extractor_stamps(["other"]) == {}
        empty_store.replace_document(DocumentGraph(document_id="nordvik-2019", extractor="spacy/new+failed"))
        assert empty_store.source_marks(["nordvik-2019"]) == {}

    def test_entities_merge_across_documents_and_aliases(self, nordvik_store):
        nordvik = nordvik_store.find_entities("Nordvik")
        assert len(nordvik) >= 1 and nordvik[0].key == "nordvik"
        assert nordvik_store.find_entities("NORDVIK SE")[0].uuid == nordvik[0].uuid  # suffix and case
        assert nordvik_store.find_entities("Nordvik Group, Inc.")[0].uuid == nordvik[0].uuid
        dahl = nordvik_store.find_entities("Dahl")[0]
        assert dahl.name == "Henrik Dahl" and dahl.kind == "person"  # an alias finds the person
        assert nordvik[0].fact_count >= 5  # facts from both documents hang off one entity
        assert nordvik_store.find_entities("") == [] and nordvik_store.find_entities("Halden") == []

    def test_timeline_is_ordered_and_really_filtered(self, nordvik_store):
        uuids = [e.uuid for e in nordvik_store.find_entities("Nordvik")]
        timeline = nordvik_store.entity_facts(uuids)
        dates = [hit.fact.valid_at.value for hit in timeline]
        assert dates == sorted(dates) and len(dates) >= 5
        assert timeline[0].fact.valid_at.iso() == "2000-12"
        window = nordvik_store.entity_facts(uuids, dt.date(2019, 1, 1), dt.date(2019, 12, 31))
        assert window and all(hit.fact.valid_at.value.year == 2019 for hit in window)
        assert not nordvik_store.entity_facts(uuids, dt.date(2005, 1, 1), dt.date(2005, 12, 31))
        # A fact dated only by its year overlaps a range inside that year.
        texts = [hit.fact.text for hit in nordvik_store.entity_facts(uuids, dt.date(2021, 6, 1), dt.date(2021, 6, 30))]
        assert "Two years later, Nordvik Group Inc. opened a plant in Manitoba." in texts  # dated 2021 only

    def test_as_of_keeps_facts_valid_then(self, nordvik_store):
        dahl = [e.uuid for e in nordvik_store.find_entities("Henrik Dahl")]
        led = "Dahl led the company from 2012 until 2019."
        assert led in [h.fact.text for h in nordvik_store.entity_facts(dahl, as_of=dt.date(2015, 6, 1))]
        assert led not in [h.fact.text for h in nordvik_store.entity_facts(dahl, as_of=dt.date(2020, 6, 1))]
        assert all(
            h.fact.valid_at.value <= dt.date(2015, 6, 1)
            for h in nordvik_store.entity_facts(dahl, as_of=dt.date(2015, 6, 1))
        )

    def test_relationships_by_depth(self, nordvik_store):
        lindqvist = nordvik_store.find_entities("Johan Lindqvist")[0]
        one = nordvik_store.related_facts(lindqvist.uuid, depth=1)
        assert one and all(hit.hop == 1 for hit in one)
        assert all(lindqvist.uuid in hit.fact.entity_uuids and len(hit.fact.entity_uuids) >= 2 for hit in one)
        two = nordvik_store.related_facts(lindqvist.uuid, depth=2)
        assert {hit.hop for hit in two} == {1, 2} and len(two) > len(one)
        hops = [hit.hop for hit in two]
        assert hops == sorted(hops)
        assert len(nordvik_store.related_facts(lindqvist.uuid, depth=5, limit=3)) == 3

    def test_search_finds_named_entities_and_words(self, nordvik_store):
        hits = nordvik_store.search_facts("What happened to Nordvik?", limit=20)
        assert hits and all(0.0 <= hit.score <= 1.0 for hit in hits)
        assert "nordvik" in [k for k in hits[0].fact.entity_keys]
        words = nordvik_store.search_facts("bribery investigations", limit=5)
        assert words[0].fact.text.startswith("Nordvik agreed to pay")
        dated = nordvik_store.search_facts("Dahl", limit=10, as_of=dt.date(2010, 1, 1))
        assert all(h.fact.valid_at is None or h.fact.valid_at.value <= dt.date(2010, 1, 1) for h in dated)
        assert nordvik_store.search_facts("zebra xylophone", limit=5) == []

    def test_replacing_a_document_replaces_its_facts(self, nordvik_store):
        before = nordvik_store.document_fact_count("nordvik-2019")
        changed = NORDVIK_2019.replace("One customer", "Another customer")
        document, chunks = make_document("nordvik-2019", changed, dt.date(2019, 2, 14))
        document.text = "Nordvik SE delivered its last NV900 to Polar Air on Thursday."
        nordvik_store.replace_document(LanguageExtractor().extract(document, chunks))
        assert nordvik_store.document_fact_count("nordvik-2019") == 1 < before
        nordvik = [e.uuid for e in nordvik_store.find_entities("Nordvik")]
        texts = [h.fact.text for h in nordvik_store.entity_facts(nordvik)]
        assert "The company had launched the NV900 programme in December 2000." not in texts
        assert "Nordvik SE delivered its last NV900 to Polar Air on Thursday." in texts

    def test_delete_removes_facts_and_orphaned_entities(self, nordvik_store):
        assert nordvik_store.find_entities("Johan Lindqvist")
        removed = nordvik_store.delete_document("nordvik-2020")
        assert removed >= 4 and nordvik_store.document_fact_count("nordvik-2020") == 0
        assert nordvik_store.find_entities("Johan Lindqvist") == []  # only that document named him
        assert nordvik_store.find_entities("Manitoba") == []
        assert nordvik_store.find_entities("Henrik Dahl")  # still named by the other document
        assert nordvik_store.delete_document("nordvik-2020") == 0
        nordvik_store.delete_document("nordvik-2019")
        assert nordvik_store.counts()["entities"] == 0 and nordvik_store.counts()["facts"] == 0

    def test_search_scope_follows_the_document_filters(self, nordvik_store):
        from components.graph.store import FactScope

        only = nordvik_store.search_facts("Nordvik", limit=50, scope=FactScope(document_ids=("nordvik-2020",)))
        assert only and {hit.fact.document_id for hit in only} == {"nordvik-2020"}
        dated = nordvik_store.search_facts("Nordvik", limit=50, scope=FactScope(date_to=dt.date(2019, 12, 31)))
        assert dated and {hit.fact.document_id for hit in dated} == {"nordvik-2019"}
        assert all(hit.fact.document_date and hit.fact.document_date <= dt.date(2019, 12, 31) for hit in dated)

    def test_known_names_are_entity_names_and_aliases(self, nordvik_store):
        assert nordvik_store.known_names({"nordvik", "dahl", "halden", "henrik dahl"}) == {
            "nordvik",
            "dahl",
            "henrik dahl",
        }
        assert nordvik_store.known_names(set()) == set()

    def test_match_entities_scores_counts_and_dates(self, nordvik_store):
        top = nordvik_store.match_entities("Nordvik", limit=5)[0]
        assert (top.entity.name, top.entity.kind, top.match, top.score) == ("Nordvik", "organization", "exact", 1.0)
        assert top.entity.fact_count >= 5 and (top.first_date.iso(), top.last_date.iso()) == ("2000-12", "2021")
        dahl = nordvik_store.match_entities("dahl", limit=5)[0]
        assert (dahl.entity.name, dahl.match, dahl.matched) == ("Henrik Dahl", "alias", "dahl")
        assert "dahl" in dahl.entity.aliases
        assert nordvik_store.match_entities("Joh", limit=5)[0].match == "prefix"
        assert [(m.entity.name, m.match) for m in nordvik_store.match_entities("Nordvki", limit=5)][0] == (
            "Nordvik",
            "fuzzy",
        )
        assert nordvik_store.match_entities("Nordvik", limit=5, kinds=["person"]) == []
        assert [m.entity.name for m in nordvik_store.match_entities("Henrik Dahl", 5, kinds=["person", "place"])] == [
            "Henrik Dahl"
        ]
        earlier = nordvik_store.match_entities("Henrik Dahl", limit=5, as_of=dt.date(2015, 6, 1))[0]
        assert earlier.entity.fact_count < dahl.entity.fact_count and earlier.last_date.value.year <= 2015
        assert nordvik_store.match_entities("Johan Lindqvist", limit=5, as_of=dt.date(2010, 1, 1)) == []
        assert nordvik_store.match_entities("", limit=5) == [] and nordvik_store.match_entities("zebra", limit=5) == []
        assert len(nordvik_store.match_entities("What did Nordvik, Henrik Dahl and Johan Lindqvist do?", limit=2)) == 2

    def test_best_entity_facts_per_entity(self, nordvik_store):
        nordvik, dahl = (nordvik_store.match_entities(name, 1)[0].entity for name in ("Nordvik", "Henrik Dahl"))
        best = nordvik_store.best_entity_facts([nordvik.uuid, dahl.uuid], per_entity=2)
        assert set(best) == {nordvik.uuid, dahl.uuid} and [len(hits) for hits in best.values()] == [2, 2]
        assert all(nordvik.uuid in hit.fact.entity_uuids for hit in best[nordvik.uuid])
        first = best[nordvik.uuid][0].fact  # about Nordvik, linking it to another entity, the most recent such
        assert first.entity_uuids[0] == nordvik.uuid and len(first.entity_uuids) > 1
        assert first.valid_at.iso() == "2021" and first.document_title
        # Each entity's decided kind comes with the fact (the answer reads it off the passage's facts).
        assert first.entity_kinds[0] == "organization" and len(first.entity_kinds) == len(first.entity_names)
        assert first.contract()["entity_kinds"] == first.entity_kinds
        then = nordvik_store.best_entity_facts([dahl.uuid], per_entity=10, as_of=dt.date(2015, 6, 1))[dahl.uuid]
        assert then and all(hit.fact.valid_at.value <= dt.date(2015, 6, 1) for hit in then)
        assert nordvik_store.best_entity_facts([]) == {}

    def test_entity_passage_links_match_the_facts(self, nordvik_store):
        found = nordvik_store.entity_passage_links()
        nordvik = nordvik_store.find_entities("Nordvik")[0]
        facts = nordvik_store.entity_facts([nordvik.uuid])
        expected = {(fact.chunk_id, fact.document_id) for fact in (hit.fact for hit in facts)}
        assert {(chunk, document) for entity, chunk, document, _ in found.links if entity == nordvik.uuid} == expected
        counted = sum(n for entity, _, _, n in found.links if entity == nordvik.uuid)
        assert counted == len(facts)
        dahl = nordvik_store.find_entities("Dahl")[0]
        assert ("nordvik", nordvik.uuid) in found.names and ("dahl", dahl.uuid) in found.names  # names and aliases

    def test_a_long_names_acronym_form_in_another_document_joins_it(self, empty_store):
        extractor = LanguageExtractor()
        for name, text in (
            ("long", "The Northern Kingdoms Air Force ordered ten jets on Monday."),
            ("short", "The NK Air Force cancelled the order on Friday."),
        ):
            empty_store.replace_document(extractor.extract(*make_document(name, text, dt.date(2019, 2, 14))))
        uuids = [entity.uuid for entity in empty_store.find_entities("Northern Kingdoms Air Force")]
        texts = [hit.fact.text for hit in empty_store.entity_facts(uuids)]
        assert "The NK Air Force cancelled the order on Friday." in texts

    def test_kind_confidence_evidence_and_merge_reasons_are_kept_and_undone(self, empty_store):
        extractor = LanguageExtractor()
        text = "In 2021 Andrei Zorvanek founded Pellucid in Tallinn. Zorvanek led the company until 2023."
        empty_store.replace_document(extractor.extract(*make_document("z", text, dt.date(2024, 1, 23))))
        person = empty_store.find_entities("Andrei Zorvanek")[0]
        notes = empty_store.entity_notes(person.uuid)
        assert person.kind == "person" and 0.5 < notes["confidence"] <= 1 and "labels" in notes["evidence"]
        assert any(m["alias"] == "zorvanek" and "surname" in m["reason"] for m in notes["merged"])
        # Re-extracting the document without the short name undoes the merge it taught.
        text = "In 2021 Andrei Zorvanek founded Pellucid in Tallinn."
        empty_store.replace_document(extractor.extract(*make_document("z", text, dt.date(2024, 1, 23))))
        notes = empty_store.entity_notes(person.uuid)
        assert not any(
            m["alias"] == "zorvanek" and m["reason"].startswith("the surname of andrei zorvanek, the only")
            for m in notes["merged"]
        )
        assert empty_store.entity_notes("no-such-uuid") == {"confidence": 0.0, "evidence": "", "merged": []}

    def test_the_most_confident_documents_kind_stays(self, empty_store):
        from components.graph.model import EntityMention, Fact, fact_uuid

        def graph(document_id: str, kind: str, confidence: float) -> DocumentGraph:
            mention = EntityMention("quorra", "Quorra", kind, confidence=confidence, evidence=f"said {kind}")
            fact = Fact(fact_uuid(document_id, 0, "Quorra grew."), "Quorra grew.", document_id, 0, ["quorra"])
            return DocumentGraph(document_id, [mention], [fact])

        for document_id, kind, confidence in (("a", "organization", 0.4), ("b", "person", 0.9), ("c", "place", 0.6)):
            empty_store.replace_document(graph(document_id, kind, confidence))
        quorra = empty_store.find_entities("Quorra")[0]
        notes = empty_store.entity_notes(quorra.uuid)
        assert quorra.kind == "person" and notes["confidence"] == pytest.approx(0.9)
        assert notes["evidence"] == "said person"

    def test_empty_graph_and_counts(self, empty_store):
        assert empty_store.counts()["facts"] == 0
        empty_store.replace_document(DocumentGraph("nothing"))
        assert empty_store.document_fact_count("nothing") == 0
        assert empty_store.entity_facts([]) == []
        assert empty_store.match_entities("Nordvik") == [] and empty_store.best_entity_facts(["no-such-uuid"]) == {}

    def test_reads_of_a_collection_without_a_graph_find_nothing_and_create_nothing(self, empty_store):
        assert not empty_store.exists() and empty_store.collection not in empty_store.collections()
        assert empty_store.counts() == {"entities": 0, "facts": 0, "aliases": 0}
        assert empty_store.find_entities("Nordvik") == [] and empty_store.list_entities() == []
        assert empty_store.search_facts("Nordvik") == [] and empty_store.entity_facts(["no-such-uuid"]) == []
        assert not empty_store.exists() and empty_store.collection not in empty_store.collections()
        empty_store.replace_document(DocumentGraph("nothing"))  # the first write makes the graph
        assert empty_store.exists() and empty_store.collection in empty_store.collections()

    def test_list_entities_gives_kinds_with_their_confidence(self, nordvik_store):
        entities = nordvik_store.list_entities()
        assert entities[0].name == "Nordvik" and entities[0].kind == "organization"
        assert [e.fact_count for e in entities] == sorted((e.fact_count for e in entities), reverse=True)
        dahl = next(e for e in entities if e.name == "Henrik Dahl")
        assert dahl.confidence == pytest.approx(nordvik_store.entity_notes(dahl.uuid)["confidence"])
        people = nordvik_store.list_entities(["person"])
        assert {e.name for e in people} == {"Henrik Dahl", "Johan Lindqvist"}
        assert len(nordvik_store.list_entities(limit=2)) == 2


def test_a_write_in_a_pipelined_transaction_merges_names_as_a_plain_one(database_url):
    """The registry writes a document's graph inside its own transaction in psycopg's pipeline mode, where a cursor
    knows its result only after a sync: the reads of the write (the aliases other documents taught) still see their
    rows, so "Dahl" in the second document joins the person the first one named."""
    from tests.components.graph.conftest import _new_store

    later = "Dahl opened a plant in Manitoba in March 2015. The plant employs 400 people."
    documents = [
        make_document("nordvik-2019", NORDVIK_2019, dt.date(2019, 2, 14)),
        make_document("plant-2015", later, dt.date(2015, 3, 20)),
    ]
    store = _new_store("postgres")
    try:
        extractor = LanguageExtractor()
        for document, chunks in documents:
            with store._get_pool().connection() as conn, conn.pipeline(), conn.transaction():
                store.replace_document(extractor.extract(document, chunks), connection=conn)
        assert [entity.name for entity in store.find_entities("Dahl")] == ["Henrik Dahl"]
    finally:
        store.drop()
