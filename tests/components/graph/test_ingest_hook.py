"""The graph kept in step with the knowledge base by ingestion: same transaction, replace and delete propagate."""

from __future__ import annotations

import datetime as dt

import pytest

from components.graph.extraction import LanguageExtractor
from components.graph.ingest_hook import GraphIngestHook, GraphUnreadable, content_mark
from components.graph.model import DocumentGraph
from components.graph.postgres_store import PostgresGraphStore
from ingest.ingestor import Ingestor, RefreshError, default_hooks, document_id_for
from tests.components.graph.conftest import NORDVIK_2019, NORDVIK_2020

TITLE_2019 = "Nordvik to end NV900"

pytestmark = pytest.mark.integration


@pytest.fixture()
def stores(database_url, collection_name):
    from components.knowledge_base.factory import open_knowledge_base

    kb = open_knowledge_base(collection=collection_name)
    graph = PostgresGraphStore(collection_name)
    yield kb, graph
    graph.drop()
    kb.drop()


class Flaky(LanguageExtractor):
    """Fails (counting its calls) while `failing` is set, then extracts as the language extractor does."""

    def __init__(self):
        super().__init__()
        self.failing, self.calls = True, 0

    def extract(self, *args, **kwargs):
        self.calls += 1
        if self.failing:
            raise RuntimeError("the text cannot be read")
        return super().extract(*args, **kwargs)


class TestGraphIngestHook:
    def test_default_hooks_include_the_graph(self):
        hooks = default_hooks("some_collection")
        assert any(isinstance(hook, GraphIngestHook) and hook.collection == "some_collection" for hook in hooks)

    def test_the_store_and_extractor_follow_the_settings_the_hook_was_made_with(self, settings):
        from components.graph.neo4j_store import Neo4jGraphStore

        chosen = settings.model_copy(update={"graph_backend": "neo4j", "neo4j_uri": "neo4j://127.0.0.1:9"})
        hook = default_hooks("some_collection", chosen)[0]
        assert isinstance(hook.store, Neo4jGraphStore) and hook.store.collection == "some_collection"
        assert isinstance(hook.extractor, LanguageExtractor)

    def test_ingest_replace_delete(self, stores, embedding_model):
        kb, graph = stores
        ingestor = Ingestor(store=kb, hooks=[GraphIngestHook(store=graph)])
        ingestor.ingest_text(NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14))
        ingestor.ingest_text(NORDVIK_2020, "Nordvik settles", "news:nordvik-bribery", date=dt.date(2020, 1, 28))
        first, second = document_id_for("news:nordvik-nv900"), document_id_for("news:nordvik-bribery")
        assert graph.document_fact_count(first) >= 4 and graph.document_fact_count(second) >= 4
        # Facts point at real chunks of the knowledge base.
        _, chunks = kb.get_document(first)
        chunk_ids = {chunk.chunk_id for chunk in chunks}
        facts = graph.entity_facts([e.uuid for e in graph.find_entities("Nordvik")])
        assert {hit.fact.chunk_id for hit in facts if hit.fact.document_id == first} <= chunk_ids

        # Re-ingesting a changed document replaces its facts.
        ingestor.ingest_text(
            "Nordvik SE delivered the last NV900 to Polar Air on Thursday.",
            TITLE_2019,
            "news:nordvik-nv900",
            date=dt.date(2021, 12, 16),
        )
        texts = [hit.fact.text for hit in graph.entity_facts([e.uuid for e in graph.find_entities("Nordvik")])]
        assert "Nordvik SE delivered the last NV900 to Polar Air on Thursday." in texts
        assert not any("superjumbo" in text for text in texts)
        assert graph.document_fact_count(first) == 1

        # Deleting a document removes its facts and the entities only it named.
        assert graph.find_entities("Johan Lindqvist")
        assert ingestor.delete(second)
        assert graph.document_fact_count(second) == 0 and graph.find_entities("Johan Lindqvist") == []
        assert graph.find_entities("Nordvik")

    def test_facts_roll_back_with_the_knowledge_base(self, stores, embedding_model):
        kb, graph = stores

        class FailingAfterGraph:
            def on_document(self, connection, document, chunks):
                raise RuntimeError("a later hook failed")

            def on_delete(self, connection, document_id):
                pass

        ingestor = Ingestor(store=kb, hooks=[GraphIngestHook(store=graph), FailingAfterGraph()])
        report = ingestor.ingest_text(NORDVIK_2020, "Nordvik settles", "news:rollback", date=dt.date(2020, 1, 28))
        document_id = document_id_for("news:rollback")
        assert kb.get_document(document_id) is None
        assert graph.document_fact_count(document_id) == 0  # written in the same transaction, rolled back with it
        assert report is not None

    def test_an_older_extractor_version_is_re_extracted_without_re_embedding(
        self, stores, embedding_model, monkeypatch
    ):
        from components.graph.extraction import LanguageExtractor

        kb, graph = stores
        hook = GraphIngestHook(store=graph, extractor=LanguageExtractor())
        ingestor = Ingestor(store=kb, hooks=[hook])
        ingestor.ingest_text(NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14))
        document_id = document_id_for("news:nordvik-nv900")
        assert graph.extractor_stamps([document_id]) == {document_id: hook.extractor.stamp}
        assert hook.is_current([document_id]) == {document_id: True}

        # Unchanged and current: skipped, nothing extracted again.
        report = ingestor.ingest_text(NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14))
        assert report.skipped and not report.reextracted

        # A new extractor version: the next ingest re-extracts the unchanged document, writing no chunks.
        monkeypatch.setattr(LanguageExtractor, "version", "test-next")
        assert hook.is_current([document_id]) == {document_id: False}
        report = ingestor.ingest_text(NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14))
        assert report.reextracted == ["news:nordvik-nv900"] and report.chunks_written == 0
        assert graph.extractor_stamps([document_id])[document_id].endswith("test-next")
        assert graph.document_fact_count(document_id) >= 4

        # --reextract: every unchanged document again, even a current one.
        report = ingestor.ingest_items(
            [_text_item(NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", dt.date(2019, 2, 14))], reextract=True
        )
        assert report.reextracted == ["news:nordvik-nv900"] and report.chunks_written == 0
        assert "re-extracted" in report.summary()

    def test_ingestion_and_re_extraction_read_the_same_embeddings_and_kinds(self, stores, embedding_model):
        import numpy as np

        from components.graph.extraction import LanguageExtractor

        class Recording(LanguageExtractor):
            def __init__(self):
                super().__init__()
                self.graphs = []

            def extract(self, document, chunks, known_names=None):
                self.graphs.append(super().extract(document, chunks, known_names=known_names))
                return self.graphs[-1]

        kb, graph = stores
        extractor = Recording()
        ingestor = Ingestor(store=kb, hooks=[GraphIngestHook(store=graph, extractor=extractor)])
        ingestor.ingest_text(NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14))
        assert ingestor.refresh(document_id_for("news:nordvik-nv900"), everything=True)
        ingested, refreshed = extractor.graphs

        def read(extracted):
            return {entity.key: (entity.kind, entity.confidence, entity.evidence) for entity in extracted.entities}

        def vectors(extracted):
            return {
                (entity.key, part): vector
                for entity in extracted.entities
                for part, vector in (
                    ("name", entity.kind_evidence.name_vector),
                    ("sentences", entity.kind_evidence.sentence_vector),
                )
            }

        assert read(ingested) == read(refreshed) and "nordvik" in read(ingested)
        first, again = vectors(ingested), vectors(refreshed)
        assert first.keys() == again.keys() and all(vector is not None for vector in first.values())
        assert all(np.array_equal(first[key], again[key]) for key in first)

    def test_a_graph_read_without_the_embeddings_is_kept_and_extracted_again_later(
        self, stores, embedding_model, tmp_path
    ):
        from components.graph.extraction import WITHOUT_EMBEDDINGS, LanguageExtractor

        kb, graph = stores
        document_id = _ingest_nordvik(kb, graph, LanguageExtractor(embedding_model=str(tmp_path / "gone")))
        assert graph.document_fact_count(document_id) >= 4  # the graph is kept, its kinds read without embeddings
        assert graph.extractor_stamps([document_id])[document_id].endswith(WITHOUT_EMBEDDINGS)
        # While the model is still missing, extracting again would give the same graph: the next ingest leaves it.
        still_gone = GraphIngestHook(store=graph, extractor=LanguageExtractor(embedding_model=str(tmp_path / "gone")))
        assert still_gone.is_current([document_id]) == {document_id: True}
        report = Ingestor(store=kb, hooks=[still_gone]).ingest_text(
            NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14)
        )
        assert report.reextracted == [] and report.skipped == ["news:nordvik-nv900"]
        # With the model back, the next ingest extracts it again (no chunk written) and stamps it current.
        _assert_extracted_again(kb, graph, document_id)

    def test_a_failed_extraction_is_extracted_again_on_the_next_ingest(self, stores, embedding_model):
        from components.graph.extraction import LanguageExtractor
        from components.graph.ingest_hook import failed_attempts

        kb, graph = stores

        class Failing(LanguageExtractor):
            def extract(self, *args, **kwargs):
                raise RuntimeError("the known names could not be read")

        failing = Failing()
        document_id = _ingest_nordvik(kb, graph, failing)
        assert graph.document_fact_count(document_id) == 0  # the document is ingested, without a graph
        assert failed_attempts(graph.extractor_stamps([document_id])[document_id], failing.stamp) == 1
        _assert_extracted_again(kb, graph, document_id)
        assert graph.document_fact_count(document_id) >= 4

    def test_a_document_whose_extraction_keeps_failing_is_tried_a_bounded_number_of_times(
        self, stores, embedding_model, monkeypatch
    ):
        kb, graph = stores
        failing, hook, ingestor = _failing_ingestor(kb, graph)
        item = _text_item(NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", dt.date(2019, 2, 14))
        document_id = document_id_for("news:nordvik-nv900")
        first = ingestor.ingest_items([item])
        assert _stamp(graph, document_id) == f"{failing.stamp}+failed@{_mark(kb, document_id)}"
        assert first.notes == [
            "1 document has no knowledge graph because extraction of its new or changed text failed; the next ingest "
            "tries again."
        ]
        # The next ingest tries again and counts the attempt; after the second it is left as it is.
        _assert_tried_again(ingestor, item, hook, f"{failing.stamp}+failed2@{_mark(kb, document_id)}")
        left = ingestor.ingest_items([item])
        assert left.skipped == ["news:nordvik-nv900"] and not left.reextracted and failing.calls == 2
        failed = "1 document has no knowledge graph because extraction of its new or changed text failed"
        assert left.notes == [failed + TWICE]
        # --reextract forces another attempt.
        forced = ingestor.ingest_items([item], reextract=True)
        assert forced.reextracted == ["news:nordvik-nv900"] and failing.calls == 3
        assert _stamp(graph, document_id) == f"{failing.stamp}+failed3@{_mark(kb, document_id)}"
        # A new extractor version extracts it again by itself, and with a working extractor the note is gone.
        monkeypatch.setattr(LanguageExtractor, "version", "test-next")
        working = GraphIngestHook(store=graph, extractor=LanguageExtractor(), max_attempts=2)
        assert working.is_current([document_id]) == {document_id: False}
        report = Ingestor(store=kb, hooks=[working]).ingest_items([item])
        assert report.reextracted == ["news:nordvik-nv900"] and report.notes == []
        assert graph.extractor_stamps([document_id])[document_id] == working.extractor.stamp
        assert graph.document_fact_count(document_id) >= 4

    def test_a_changed_document_is_extracted_again_whatever_its_old_text_failed(
        self, stores, embedding_model, tmp_path
    ):
        kb, graph = stores
        flaky, hook, ingestor = _failing_ingestor(kb, graph)
        note = tmp_path / "nordvik.txt"
        note.write_text(NORDVIK_2019, encoding="utf-8")
        source = str(note.resolve())
        document_id = ingestor.ingest_paths([note]).document_ids[source]
        for _ in range(2):  # tried again once, then left as it is
            ingestor.ingest_paths([note])
        assert flaky.calls == 2 and hook.is_current([document_id]) == {document_id: True}

        # The file changes: its new text is extracted, and its failure is the new text's first.
        note.write_text(NORDVIK_2020, encoding="utf-8")
        changed = ingestor.ingest_paths([note])
        assert changed.replaced == [source] and flaky.calls == 3
        assert _stamp(graph, document_id) == f"{flaky.stamp}+failed@{_mark(kb, document_id)}"
        assert hook.is_current([document_id]) == {document_id: False}
        assert changed.notes == [
            "1 document has no knowledge graph because extraction of its new or changed text failed; the next ingest "
            "tries again."
        ]
        # So the next ingest tries the new text again, and this time extracts it.
        flaky.failing = False
        again = ingestor.ingest_paths([note])
        assert again.reextracted == [source] and flaky.calls == 4 and again.notes == []
        assert _stamp(graph, document_id) == flaky.stamp
        assert graph.document_fact_count(document_id) >= 4


# The tail of a failure note once the attempts ran out (`max_attempts=2`).
TWICE = " (1 of them 2 times in a row, which are tried again only by `research ingest --reextract` on their files)."


class KeptExtractor(Flaky):
    """`Flaky` whose successful graphs keep only the facts of `keep` (so a later graph is told from a kept one)."""

    def __init__(self, keep: str | None = None):
        super().__init__()
        self.failing, self.keep = False, keep

    def extract(self, *args, **kwargs):
        graph = super().extract(*args, **kwargs)
        if self.keep:
            graph.facts = [fact for fact in graph.facts if self.keep in fact.text]
        return graph


class TestAFailedReExtractionKeepsTheGraphOfTheSameText:
    def test_the_same_text_keeps_its_graph_and_is_tried_again(self, stores, embedding_model, monkeypatch):
        kb, graph = stores
        extractor = KeptExtractor()
        hook = GraphIngestHook(store=graph, extractor=extractor, max_attempts=2)
        ingestor = Ingestor(store=kb, hooks=[hook])
        item = _text_item(NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", dt.date(2019, 2, 14))
        ingestor.ingest_items([item])
        document_id = document_id_for("news:nordvik-nv900")
        before = _facts(graph, "Nordvik", as_of=dt.date(2019, 3, 1))
        count = graph.document_fact_count(document_id)
        assert count >= 4 and any("December 2000" in text for text in before)

        # A new extractor version fails on the unchanged text: the facts stay, the failure is stamped and counted.
        monkeypatch.setattr(LanguageExtractor, "version", "test-kept")
        extractor.failing = True
        report = ingestor.ingest_items([item])
        assert report.reextracted == ["news:nordvik-nv900"] and report.chunks_written == 0
        assert graph.document_fact_count(document_id) == count
        assert _stamp(graph, document_id) == f"{extractor.stamp}+failed@{_mark(kb, document_id)}+kept"
        assert report.notes == [
            "1 document kept its earlier graph because extracting it again failed; the next ingest tries again."
        ]
        # The kept facts still answer timeline and as-of reads, as before.
        assert _facts(graph, "Nordvik", as_of=dt.date(2019, 3, 1)) == before
        assert _facts(graph, "Nordvik", as_of=dt.date(1999, 1, 1)) != before
        assert hook.is_current([document_id]) == {document_id: False}

        # Tried again by the next ingest and counted toward max_attempts, still keeping the facts.
        again = _assert_tried_again(ingestor, item, hook, f"{extractor.stamp}+failed2@{_mark(kb, document_id)}+kept")
        assert extractor.calls == 3 and graph.document_fact_count(document_id) == count
        assert again.notes == ["1 document kept its earlier graph because extracting it again failed" + TWICE]

        # Re-ingested by force (chunks written again, the graph restamped in the knowledge base's transaction): the
        # same text and chunks, so the facts still stay.
        forced = ingestor.ingest_items([item], force=True)
        assert forced.replaced == ["news:nordvik-nv900"] and extractor.calls == 4
        assert _stamp(graph, document_id) == f"{extractor.stamp}+failed3@{_mark(kb, document_id)}+kept"
        assert graph.document_fact_count(document_id) == count

        # A later extraction that succeeds replaces the kept facts entirely: only its own facts remain.
        extractor.failing, extractor.keep = False, "December 2000"
        forced = ingestor.ingest_items([item], reextract=True)
        assert forced.reextracted == ["news:nordvik-nv900"] and forced.notes == []
        assert _stamp(graph, document_id) == extractor.stamp
        assert _facts(graph, "Nordvik") == ["The company had launched the NV900 programme in December 2000."]
        assert graph.document_fact_count(document_id) == 1

    def test_a_graph_stored_without_a_source_mark_is_kept_when_its_cited_chunks_are_unchanged(
        self, stores, embedding_model
    ):
        kb, graph = stores
        _ingest_nordvik(kb, graph, KeptExtractor())
        document_id = document_id_for("news:nordvik-nv900")
        # As a graph written before source marks were kept: the same facts, no mark.
        legacy = LanguageExtractor().extract(*kb.get_document(document_id))
        legacy.extractor = "spacy/older"
        graph.replace_document(legacy)
        assert graph.source_marks([document_id]) == {}
        count = graph.document_fact_count(document_id)
        failing = KeptExtractor()
        failing.failing = True
        ingestor = Ingestor(store=kb, hooks=[GraphIngestHook(store=graph, extractor=failing)])
        assert ingestor.refresh(document_id)
        assert graph.document_fact_count(document_id) == count >= 4
        assert _stamp(graph, document_id).endswith("+kept")
        # A second failure in a row keeps it too: a kept graph is still the document's graph, not a failure's empty
        # one.
        assert ingestor.refresh(document_id)
        assert graph.document_fact_count(document_id) == count
        assert "+failed2" in _stamp(graph, document_id) and _stamp(graph, document_id).endswith("+kept")
        # A changed text: the chunks the facts cite are gone, so the graph goes.
        graph.replace_document(legacy)
        ingestor.ingest_text(NORDVIK_2020, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14))
        assert graph.document_fact_count(document_id) == 0
        assert not _stamp(graph, document_id).endswith("+kept")

    def test_a_graph_whose_store_cannot_be_read_when_its_extraction_fails_is_left_as_it_is(
        self, stores, embedding_model, monkeypatch
    ):
        kb, graph = stores
        extractor = KeptExtractor()
        document_id = _ingest_nordvik(kb, graph, extractor)
        count, stamp = graph.document_fact_count(document_id), _stamp(graph, document_id)
        monkeypatch.setattr(LanguageExtractor, "version", "test-unread")  # a new version fails on the same text
        extractor.failing = True

        def unreadable(*args, **kwargs):
            raise TimeoutError("the graph's server did not answer in time")

        monkeypatch.setattr(graph, "source_marks", unreadable)
        ingestor = Ingestor(store=kb, hooks=[GraphIngestHook(store=graph, extractor=extractor)])
        with pytest.raises(RefreshError, match="nothing was changed, and the next ingest tries again") as raised:
            ingestor.refresh(document_id)
        assert isinstance(raised.value.__cause__, GraphUnreadable)
        assert graph.document_fact_count(document_id) == count >= 4 and _stamp(graph, document_id) == stamp
        # Ingested again unchanged, the report tells what failed (not that the file could not be converted).
        same = ingestor.ingest_text(NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14))
        (failed,) = same.failed
        assert failed[1].startswith("Its stored data could not be made again (its graph extraction failed")
        assert graph.document_fact_count(document_id) == count and _stamp(graph, document_id) == stamp
        # A changed text then fails whole: the knowledge base keeps the earlier text, which the graph still fits,
        # and the report names the document (the next ingest writes it again).
        report = ingestor.ingest_text(NORDVIK_2020, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14))
        assert [source for source, _ in report.failed] == ["news:nordvik-nv900"]
        assert "could not be read" in report.failed[0][1]
        text = " ".join(chunk.text for chunk in kb.get_document(document_id)[1])
        assert "end production of the NV900" in text and "agreed to pay" not in text
        assert graph.document_fact_count(document_id) == count and _stamp(graph, document_id) == stamp

    def test_a_changed_text_loses_its_earlier_graph_when_its_extraction_fails(self, stores, embedding_model, tmp_path):
        kb, graph = stores
        extractor = KeptExtractor()
        ingestor = Ingestor(store=kb, hooks=[GraphIngestHook(store=graph, extractor=extractor, max_attempts=2)])
        note = tmp_path / "nordvik.txt"
        note.write_text(NORDVIK_2020, encoding="utf-8")
        document_id = ingestor.ingest_paths([note]).document_ids[str(note.resolve())]
        assert graph.find_entities("Johan Lindqvist") and graph.source_marks([document_id])

        note.write_text(NORDVIK_2019, encoding="utf-8")
        extractor.failing = True
        changed = ingestor.ingest_paths([note])
        # The old facts cite sentences the document no longer has: they go, and the note says why there is no graph.
        assert graph.document_fact_count(document_id) == 0 and graph.find_entities("Johan Lindqvist") == []
        assert _stamp(graph, document_id) == f"{extractor.stamp}+failed@{_mark(kb, document_id)}"
        assert graph.source_marks([document_id]) == {}
        assert changed.notes == [
            "1 document has no knowledge graph because extraction of its new or changed text failed; the next ingest "
            "tries again."
        ]
        # Failing again on that text keeps nothing (the empty graph of a failure is not a graph to keep).
        ingestor.ingest_paths([note])
        assert _stamp(graph, document_id) == f"{extractor.stamp}+failed2@{_mark(kb, document_id)}"

    def test_a_new_chunking_of_the_same_text_loses_its_earlier_graph_when_its_extraction_fails(
        self, stores, embedding_model
    ):
        from components.ingestion.splitter import TokenSplitter

        kb, graph = stores
        extractor = KeptExtractor()
        hook = GraphIngestHook(store=graph, extractor=extractor)
        item = _text_item(NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", dt.date(2019, 2, 14))
        Ingestor(store=kb, hooks=[hook]).ingest_items([item])
        document_id = document_id_for("news:nordvik-nv900")
        assert graph.document_fact_count(document_id) >= 4
        # Chunked anew, the facts' citations point at chunks that are gone: the earlier graph cannot be kept.
        rechunking = Ingestor(store=kb, hooks=[hook])
        rechunking.splitter = TokenSplitter(chunk_tokens=24, overlap_tokens=0)
        rechunking.splitter.warm_up()
        extractor.failing = True
        report = rechunking.ingest_items([item])
        assert report.replaced == ["news:nordvik-nv900"] and len(kb.get_document(document_id)[1]) > 1
        assert graph.document_fact_count(document_id) == 0
        assert not _stamp(graph, document_id).endswith("+kept")


class TestThePostgresGraphKeepsSourceMarks:
    def test_a_graph_written_before_source_marks_takes_them(self, database_url, collection_name):
        """A graph made by an earlier version (its documents table without the source column) gains the column on
        first use; its stamps are kept and have no mark."""
        from psycopg import sql

        old = PostgresGraphStore(collection_name)
        old.ensure_schema()
        with old._get_pool().connection() as conn:
            conn.execute(sql.SQL("ALTER TABLE {} DROP COLUMN source").format(old._names["documents"]))
            conn.execute(
                sql.SQL("INSERT INTO {} (document_id, extractor) VALUES ('doc-old', 'spacy/1')").format(
                    old._names["documents"]
                )
            )
        try:
            store = PostgresGraphStore(collection_name)  # the next process to open the graph
            assert store.extractor_stamps(["doc-old"]) == {"doc-old": "spacy/1"}
            assert store.source_marks(["doc-old"]) == {}
            store.replace_document(DocumentGraph(document_id="doc-new", extractor="spacy/2", source="feedc0de"))
            assert store.source_marks(["doc-old", "doc-new"]) == {"doc-new": "feedc0de"}
        finally:
            old.drop()


class TestFailedExtractionAttempts:
    def test_the_stamp_counts_the_attempts_of_its_extractor_version(self):
        from components.graph.ingest_hook import failed_attempts

        assert failed_attempts("spacy/27+failed", "spacy/27") == 1
        assert failed_attempts("spacy/27+failed3", "spacy/27") == 3
        assert failed_attempts("spacy/26+failed3", "spacy/27") == 0  # another version's: extracted again anyway
        assert failed_attempts("spacy/27", "spacy/27") == failed_attempts(None, "spacy/27") == 0
        assert failed_attempts("spacy/27+without-embeddings", "spacy/27") == 0

    def test_the_stamp_counts_the_attempts_on_the_same_content(self):
        from types import SimpleNamespace

        from components.graph.ingest_hook import failed_attempts, failed_stamp

        old = content_mark(SimpleNamespace(content_hash="aa" * 32))
        new = content_mark(SimpleNamespace(content_hash="bb" * 32))
        assert old != new and len(old) == len(new) == 8
        assert content_mark(SimpleNamespace(content_hash="")) is None and content_mark(object()) is None
        assert failed_stamp("spacy/27", 1, old) == f"spacy/27+failed@{old}"
        assert failed_stamp("spacy/27", 3, old) == f"spacy/27+failed3@{old}"
        assert failed_stamp("spacy/27", 2, None) == "spacy/27+failed2"
        assert failed_attempts(f"spacy/27+failed3@{old}", "spacy/27", old) == 3
        assert failed_attempts(f"spacy/27+failed3@{old}", "spacy/27", new) == 0  # a changed text starts again
        assert failed_attempts(f"spacy/27+failed3@{old}", "spacy/27") == 3  # whatever the content (is_current)
        assert failed_attempts("spacy/27+failed3", "spacy/27", new) == 3  # a stamp without a mark: any content

    def test_a_kept_graph_is_counted_with_its_failures(self):
        from components.graph.ingest_hook import failed_attempts, failed_stamp, kept_graph

        assert failed_stamp("spacy/27", 2, "1f0c9a2e", kept=True) == "spacy/27+failed2@1f0c9a2e+kept"
        assert failed_stamp("spacy/27", 1, None, kept=True) == "spacy/27+failed+kept"
        assert failed_attempts("spacy/27+failed2@1f0c9a2e+kept", "spacy/27", "1f0c9a2e") == 2
        assert failed_attempts("spacy/27+failed+kept", "spacy/27") == 1
        assert kept_graph("spacy/27+failed2@1f0c9a2e+kept") and not kept_graph("spacy/27+failed2@1f0c9a2e")
        assert not kept_graph("spacy/27") and not kept_graph(None)

    def test_the_source_mark_follows_the_text_and_its_chunks(self):
        from types import SimpleNamespace

        from components.graph.ingest_hook import source_mark

        text, other = SimpleNamespace(content_hash="aa" * 32), SimpleNamespace(content_hash="bb" * 32)
        chunks = [SimpleNamespace(chunk_id="c1"), SimpleNamespace(chunk_id="c2")]
        assert source_mark(text, chunks) == source_mark(text, list(chunks)) and len(source_mark(text, chunks)) == 16
        assert source_mark(text, chunks) != source_mark(other, chunks)
        assert source_mark(text, chunks) != source_mark(text, chunks[:1])  # chunked anew: the citations change
        assert source_mark(SimpleNamespace(content_hash=""), chunks) is None

    def test_the_note_tells_kept_graphs_from_missing_ones(self):
        hook, store, current = _noting_hook()
        store.extractor_stamp_counts.return_value = {current: 40, f"{current}+failed@1f0c9a2e+kept": 3}
        assert hook.ingest_note() == (
            "3 documents kept their earlier graph because extracting them again failed; the next ingest tries again."
        )
        store.extractor_stamp_counts.return_value = {
            current: 40,
            f"{current}+failed@1f0c9a2e+kept": 1,
            f"{current}+failed3@2e1d0c9b+kept": 1,
            f"{current}+failed@3e1d0c9b": 1,
        }
        assert hook.ingest_note() == (
            "1 document has no knowledge graph because extraction of its new or changed text failed and 2 documents "
            "kept their earlier graph because extracting them again failed (1 of them 3 times in a row, which are "
            "tried again only by `research ingest --reextract` on their files)."
        )

    def test_max_attempts_is_checked(self):
        for bad in (0, -1, 1.5, True):
            with pytest.raises(ValueError, match="max_attempts must be a whole number of at least 1"):
                GraphIngestHook(max_attempts=bad)

    def test_the_note_counts_the_documents_without_a_graph(self):
        hook, store, current = _noting_hook()
        store.extractor_stamp_counts.return_value = {current: 40, f"{current}+without-embeddings": 2}
        assert hook.ingest_note() is None
        store.extractor_stamp_counts.return_value = {
            current: 40,
            f"{current}+failed": 2,
            f"{current}+failed3": 3,
            f"{current}+failed4": 1,
            "spacy/1+failed3": 1,
        }
        assert hook.ingest_note() == (
            "7 documents have no knowledge graph because extraction of their new or changed text failed (4 of them 3 "
            "times in a row, which are tried again only by `research ingest --reextract` on their files)."
        )


def _noting_hook():
    """A graph hook over a mock store whose stamp counts a test sets: (hook, store, the extractor's current stamp)."""
    from unittest.mock import Mock

    from components.graph.extraction import LanguageExtractor
    from components.graph.store import GraphStore

    store = Mock(spec=GraphStore)
    extractor = LanguageExtractor(embedding_model=None)
    return GraphIngestHook(store=store, extractor=extractor), store, extractor.stamp


def _ingest_nordvik(kb, graph, extractor) -> str:
    """The 2019 Nordvik text ingested with `extractor` writing the graph; its document id."""
    Ingestor(store=kb, hooks=[GraphIngestHook(store=graph, extractor=extractor)]).ingest_text(
        NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14)
    )
    return document_id_for("news:nordvik-nv900")


def _assert_extracted_again(kb, graph, document_id: str) -> None:
    """The next ingest with a working extractor re-extracts the document (no chunk written) and stamps it current."""
    from components.graph.extraction import LanguageExtractor

    working = GraphIngestHook(store=graph, extractor=LanguageExtractor())
    assert working.is_current([document_id]) == {document_id: False}
    report = Ingestor(store=kb, hooks=[working]).ingest_text(
        NORDVIK_2019, TITLE_2019, "news:nordvik-nv900", date=dt.date(2019, 2, 14)
    )
    assert report.reextracted == ["news:nordvik-nv900"] and report.chunks_written == 0
    assert graph.extractor_stamps([document_id])[document_id] == working.extractor.stamp


def _failing_ingestor(kb, graph) -> tuple[Flaky, GraphIngestHook, Ingestor]:
    """An ingestor whose graph extractor fails until told otherwise, and is tried twice in a row at most."""
    flaky = Flaky()
    hook = GraphIngestHook(store=graph, extractor=flaky, max_attempts=2)
    return flaky, hook, Ingestor(store=kb, hooks=[hook])


def _facts(graph, name: str, as_of: dt.date | None = None) -> list[str]:
    """The texts of the facts about the entity `name`, in timeline order (as the timeline reads them)."""
    return [hit.fact.text for hit in graph.entity_facts([e.uuid for e in graph.find_entities(name)], as_of=as_of)]


def _assert_tried_again(ingestor, item, hook, stamp: str):
    """Ingests `item` again: its graph is extracted again (no chunk written) and stamped `stamp`, which the hook
    takes as current; returns the report."""
    again = ingestor.ingest_items([item])
    document_id = document_id_for(item.source)
    assert again.reextracted == [item.source] and again.chunks_written == 0
    assert _stamp(hook.store, document_id) == stamp
    assert hook.is_current([document_id]) == {document_id: True}
    return again


def _stamp(graph, document_id: str) -> str:
    return graph.extractor_stamps([document_id])[document_id]


def _mark(kb, document_id: str) -> str:
    """The mark of the stored document's present content, as the stamp of a failed extraction names it."""
    return content_mark(kb.get_document(document_id)[0])


def _text_item(text: str, title: str, source: str, date: dt.date):
    from ingest.ingestor import IngestItem

    data = text.encode("utf-8")
    return IngestItem(source=source, filename=f"{title}.txt", data=data, doc_type="txt", title=title, date=date)
