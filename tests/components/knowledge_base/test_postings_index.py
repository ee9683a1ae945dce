"""Keyword search on pgvector (`KeywordPostings` under `PgvectorChunkIndex.keyword`) against an exact BM25 written
here: every chunk scored, nothing cut off."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from psycopg import sql

from components.knowledge_base import postings_index
from components.knowledge_base.factory import knowledge_base_for
from components.knowledge_base.store import ChunkRecord, DocumentRecord, SearchFilters
from components.text.analyzer import term_counts, terms
from tests.components.knowledge_base.test_pgvector_index import _store, _unit

# Invented words: a few frequent, many rare, so that lists differ in length and questions mix both.
WORDS = [
    "valmor",
    "quistel",
    "brenard",
    "osk",
    "tiravel",
    "pundric",
    "melsha",
    "corvane",
    "drubbel",
    "fenwix",
    "gallotry",
    "hestrin",
    "ivasol",
    "jorvick",
    "kelmar",
    "lupriant",
    "mossel",
    "nadrik",
    "orphyl",
    "pemberly",
    "quorrel",
    "rastin",
    "sovane",
    "trebbil",
    "ulmaric",
    "vesper",
    "wendrik",
    "xaloth",
    "yarrowin",
    "zembic",
]


def _text(rng: random.Random) -> str:
    weights = [1.0 / (rank + 1) for rank in range(len(WORDS))]
    return " ".join(rng.choices(WORDS, weights=weights, k=rng.randint(3, 40))) + "."


def _corpus(seed: int, documents: int = 24) -> list[tuple[DocumentRecord, list[ChunkRecord]]]:
    rng = random.Random(seed)
    corpus = []
    for number in range(documents):
        document_id = f"doc{seed}-{number}"
        title = f"{rng.choice(WORDS)} report"
        document = DocumentRecord(document_id, title, f"files/{document_id}.md", ("md", "pdf")[number % 2], "h")
        chunks = []
        for index in range(rng.randint(1, 8)):
            text = _text(rng)
            chunks.append(
                ChunkRecord(
                    f"{document_id}-{index}",
                    document_id,
                    index,
                    text,
                    _unit(number * 100 + index),
                    term_counts=term_counts(f"{title}\n{text}"),
                )
            )
        corpus.append((document, chunks))
    return corpus


def exact_bm25(chunks: dict[str, dict[str, int]], query: str, limit: int) -> list[tuple[str, float]]:
    """BM25 (k1 1.2, b 0.75, Lucene's IDF) of every chunk for the query's distinct terms; the top `limit` with a
    positive score, best first, ties by id."""
    n = len(chunks)
    average = sum(sum(counts.values()) for counts in chunks.values()) / n
    scores = {}
    for chunk_id, counts in chunks.items():
        length = sum(counts.values())
        score = 0.0
        for term in set(terms(query)):
            tf = counts.get(term, 0)
            if tf:
                df = sum(1 for other in chunks.values() if term in other)
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))
        if score > 0:
            scores[chunk_id] = score
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


def _questions(seed: int, count: int = 25) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, k=rng.randint(1, 5))) + "?" for _ in range(count)]


def _assert_same(found, expected) -> None:
    """Same scores at every rank, and the same chunks wherever the score is not tied."""
    got = [(hit.chunk.chunk_id if hasattr(hit, "chunk") else hit.document.id, hit.raw_score) for hit in found]
    assert len(got) == len(expected)
    assert np.allclose([score for _, score in got], [score for _, score in expected], rtol=1e-6, atol=1e-9)
    tied = {round(score, 6) for score, count in _score_counts(expected).items() if count > 1}
    for (got_id, got_score), (want_id, _) in zip(got, expected, strict=True):
        if round(got_score, 6) not in tied:
            assert got_id == want_id


def _score_counts(expected) -> dict[float, int]:
    counts: dict[float, int] = {}
    for _, score in expected:
        counts[round(score, 6)] = counts.get(round(score, 6), 0) + 1
    return counts


def _shallow_kb(collection_name: str, monkeypatch: pytest.MonkeyPatch, first_depth: int):  # noqa: ANN202
    """A knowledge base whose keyword function reads `first_depth` postings first and grows slowly, so that small
    collections need several rounds of the cut-off (on the database: no in-memory copy); dropped afterwards."""
    monkeypatch.setattr(postings_index, "FIRST_DEPTH", first_depth)
    monkeypatch.setattr(postings_index, "COMPLETED", 1)
    monkeypatch.setattr(postings_index, "MIN_COMPLETED", 1)
    monkeypatch.setattr(postings_index, "OTHERS_BATCH", 1)
    kb = knowledge_base_for(_store(collection_name), keyword_index_max_postings=0)
    yield kb
    kb.drop()
    kb.close()


@pytest.mark.integration
class TestKeywordPostings:
    @pytest.fixture()
    def kb(self, database_url, collection_name, monkeypatch):
        yield from _shallow_kb(collection_name, monkeypatch, first_depth=2)

    @staticmethod
    def _load(kb, corpus) -> dict[str, dict[str, int]]:
        for document, chunks in corpus:
            kb.upsert_document(document, chunks)
        return {chunk.chunk_id: chunk.term_counts for _, chunks in corpus for chunk in chunks}

    def test_top_k_is_exact_bm25(self, kb):
        stored = self._load(kb, _corpus(1))
        for query in _questions(2):
            for limit in (1, 5, 10):
                _assert_same(kb.keyword_search(query, limit), exact_bm25(stored, query, limit))

    def test_scores_follow_replacements_and_deletions(self, kb):
        corpus = _corpus(3)
        stored = self._load(kb, corpus)
        # A new version of three documents (other chunks, other words) and two documents deleted.
        for document, _ in corpus[:3]:
            for chunk_id in [c for c in stored if c.startswith(f"{document.document_id}-")]:
                del stored[chunk_id]
        replaced = _corpus(4, documents=3)
        for (document, _), (_, chunks) in zip(corpus[:3], replaced, strict=True):
            chunks = [
                ChunkRecord(
                    f"{document.document_id}-v2-{c.chunk_index}",
                    document.document_id,
                    c.chunk_index,
                    c.text,
                    c.embedding,
                    term_counts=c.term_counts,
                )
                for c in chunks
            ]
            kb.upsert_document(document, chunks)
            stored.update({chunk.chunk_id: chunk.term_counts for chunk in chunks})
        for document, chunks in corpus[3:5]:
            assert kb.delete_document(document.document_id)
            for chunk in chunks:
                del stored[chunk.chunk_id]
        for query in _questions(5):
            _assert_same(kb.keyword_search(query, 10), exact_bm25(stored, query, 10))
        statistics = kb.term_statistics(["valmor"])
        assert statistics.n_chunks == len(stored)
        assert statistics.avg_terms == pytest.approx(sum(sum(c.values()) for c in stored.values()) / len(stored))

    def test_a_filter_ranks_the_rows_it_leaves(self, kb):
        corpus = _corpus(6)
        stored = self._load(kb, corpus)
        pdf = {chunk.chunk_id for document, chunks in corpus if document.doc_type == "pdf" for chunk in chunks}
        for query in _questions(7, count=10):
            expected = [item for item in exact_bm25(stored, query, len(stored)) if item[0] in pdf][:5]
            _assert_same(kb.keyword_search(query, 5, filters=SearchFilters(doc_types=("pdf",))), expected)

    def test_a_collection_made_before_the_postings_gets_them_from_its_term_counts(self, kb, collection_name):
        stored = self._load(kb, _corpus(8))
        with kb.registry.connection() as conn:
            conn.execute(f"DROP TABLE {collection_name}_postings, {collection_name}_postings_totals")
            conn.commit()
        kb.close()
        reopened = knowledge_base_for(_store(collection_name))
        try:
            for query in _questions(9, count=10):
                _assert_same(reopened.keyword_search(query, 10), exact_bm25(stored, query, 10))
        finally:
            reopened.close()

    def test_a_chunk_written_without_term_counts_is_counted_from_its_title_and_text(self, kb):
        document = DocumentRecord("plain", "Quistel notes", "files/plain.md", "md", "h")
        text = "Brenard brenard osk."
        kb.upsert_document(document, [ChunkRecord("plain-0", "plain", 0, text, _unit(1))])
        stored = {"plain-0": term_counts(f"Quistel notes\n{text}")}
        _assert_same(kb.keyword_search("brenard quistel", 3), exact_bm25(stored, "brenard quistel", 3))

    def test_a_chunk_with_no_terms_upserted_again_and_again_leaves_the_totals_right(self, kb):
        corpus = _corpus(10, documents=4)
        stored = self._load(kb, corpus)
        empty = DocumentRecord("blank", "", "files/blank.md", "md", "h")
        for _ in range(4):
            kb.upsert_document(empty, [ChunkRecord("blank-0", "blank", 0, "", _unit(2), term_counts={})])
            statistics = kb.term_statistics(["valmor"])
            assert statistics is not None
            assert statistics.n_chunks == len(stored)
            assert statistics.avg_terms == pytest.approx(sum(sum(c.values()) for c in stored.values()) / len(stored))
            for query in _questions(11, count=5):
                _assert_same(kb.keyword_search(query, 5), exact_bm25(stored, query, 5))
        assert kb.delete_document("blank")
        assert kb.term_statistics(["valmor"]).n_chunks == len(stored)

    def test_a_collection_with_empty_counts_stored_before_is_counted_the_same_everywhere(self, kb, collection_name):
        stored = self._load(kb, _corpus(12, documents=3))
        with kb.registry.connection() as conn:
            # A row as an earlier version stored it: empty counts, not none.
            conn.execute(
                f"INSERT INTO {collection_name}_chunk_terms (chunk_id, tsv, term_counts, term_total) "
                "VALUES ('old-blank', ''::tsvector, '{}'::jsonb, 0)"
            )
            conn.execute(f"DROP TABLE {collection_name}_postings, {collection_name}_postings_totals")
            conn.commit()
        kb.close()
        reopened = knowledge_base_for(_store(collection_name))
        try:
            assert reopened.term_statistics(["valmor"]).n_chunks == len(stored)
            empty = DocumentRecord("old", "", "files/old.md", "md", "h")
            for _ in range(3):
                reopened.upsert_document(empty, [ChunkRecord("old-blank", "old", 0, "", _unit(3), term_counts={})])
            assert reopened.term_statistics(["valmor"]).n_chunks == len(stored)
            for query in _questions(13, count=5):
                _assert_same(reopened.keyword_search(query, 5), exact_bm25(stored, query, 5))
        finally:
            reopened.close()

    @pytest.mark.parametrize("lookup", [0, 8, 10**6], ids=["counts", "either", "lists"])
    def test_the_server_side_function_returns_what_the_client_side_search_returns(self, kb, monkeypatch, lookup):
        # Max-score's other terms read from each candidate's counts, from the lists, or either as it costs less.
        monkeypatch.setattr(postings_index, "LOOKUP_POSTINGS", lookup)
        stored = self._load(kb, _corpus(14))
        index = kb.index
        with index._connection() as conn:
            for query in _questions(15):
                wanted = sorted(set(terms(query)))
                statistics = index._statistics(conn, wanted)
                n = statistics.n_chunks
                idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in statistics.df.items() if df}
                for limit in (1, 3, 10):
                    client = index._postings.search(conn, idf, limit, statistics.avg_terms)
                    server = index._postings.search_on_server(conn, list(reversed(wanted)), limit)
                    assert [chunk_id for chunk_id, _ in server] == [chunk_id for chunk_id, _ in client]
                    assert np.allclose([s for _, s in server], [s for _, s in client], rtol=1e-12, atol=0)
                    _assert_same(kb.keyword_search(query, limit), exact_bm25(stored, query, limit))

    def test_a_keyword_search_is_one_statement_with_or_without_filters(self, kb, monkeypatch):
        import psycopg

        corpus = _corpus(16)
        stored = self._load(kb, corpus)
        pdf = {chunk.chunk_id for document, chunks in corpus if document.doc_type == "pdf" for chunk in chunks}
        query = "valmor quistel brenard osk"
        only_pdf = {"field": "meta.doc_type", "operator": "==", "value": "pdf"}
        kb.index.keyword(query, 5)
        sent: list[str] = []
        execute = psycopg.Connection.execute

        def counted(conn, statement, *args, **kwargs):
            sent.append(str(statement))
            return execute(conn, statement, *args, **kwargs)

        monkeypatch.setattr(psycopg.Connection, "execute", counted)
        hits = kb.index.keyword(query, 5)
        assert len(sent) == 1
        _assert_same(hits, exact_bm25(stored, query, 5))
        filtered = kb.index.keyword(query, 5, filters=only_pdf)
        assert len(sent) == 2
        _assert_same(filtered, [item for item in exact_bm25(stored, query, len(stored)) if item[0] in pdf][:5])

    def test_a_collection_without_the_function_or_with_another_version_gets_it_when_opened(
        self, kb, collection_name, caplog
    ):
        stored = self._load(kb, _corpus(17, documents=6))
        signature = f"{collection_name}_postings_top({postings_index.FUNCTION_ARGUMENTS})"
        for change, old in (
            (f"DROP FUNCTION {signature}", "none"),
            (f"COMMENT ON FUNCTION {signature} IS 'an earlier version'", "an earlier version"),
        ):
            with kb.registry.connection() as conn:
                conn.execute(change)
                conn.commit()
            kb.close()
            caplog.clear()
            with caplog.at_level("INFO"):
                kb = knowledge_base_for(_store(collection_name))
                kb.keyword_search("valmor", 1)
            assert (
                f"Keyword search function of {collection_name} updated ({old} -> {postings_index.FUNCTION_VERSION})"
            ) in caplog.text
            with kb.registry.connection() as conn:
                version = conn.execute("SELECT obj_description(to_regprocedure(%s), 'pg_proc')", (signature,))
                assert version.fetchone()[0] == postings_index.FUNCTION_VERSION
            for query in _questions(18, count=5):
                _assert_same(kb.keyword_search(query, 5), exact_bm25(stored, query, 5))
        kb.close()

    def test_the_seal_after_a_bulk_load_leaves_the_postings_readable_from_their_index_alone(self, kb, collection_name):
        self._load(kb, _corpus(19))
        kb.ensure_vector_index()
        with kb.registry.connection() as conn:
            pages, visible = conn.execute(
                "SELECT relpages, relallvisible FROM pg_class WHERE oid = to_regclass(%s)",
                (f"{collection_name}_postings",),
            ).fetchone()
        assert pages > 0 and visible == pages


@pytest.mark.integration
class TestKeywordPostingsEdges:
    """The function's answer against the exact BM25 where the cut-off has least to go on: tied scores, questions of
    stop words or unknown words only, and documents deleted after they were the best match."""

    @pytest.fixture()
    def kb(self, database_url, collection_name, monkeypatch):
        yield from _shallow_kb(collection_name, monkeypatch, first_depth=1)

    @staticmethod
    def _write(kb, stored, document_id: str, texts: list[str]) -> None:
        document = DocumentRecord(document_id, "", f"files/{document_id}.md", "md", "h")
        chunks = [
            ChunkRecord(
                f"{document_id}-{index}",
                document_id,
                index,
                text,
                _unit(index + len(stored)),
                term_counts=term_counts(text),
            )
            for index, text in enumerate(texts)
        ]
        kb.upsert_document(document, chunks)
        stored.update({chunk.chunk_id: chunk.term_counts for chunk in chunks})

    def test_ties_stop_words_unknown_words_and_deleted_documents(self, kb):
        stored: dict[str, dict[str, int]] = {}
        # Twelve chunks alike (one score for all), in documents written out of id order, and others around them.
        for number in (7, 3, 11, 0, 9, 5, 1, 10, 2, 8, 4, 6):
            self._write(kb, stored, f"same{number:02d}", ["Valmor quistel brenard."])
        self._write(kb, stored, "other", ["Valmor tiravel pundric melsha.", "Quistel osk osk corvane drubbel."])
        self._write(kb, stored, "rare", ["Zembic yarrowin valmor.", "Zembic zembic fenwix."])
        for query, limit in (
            ("valmor quistel brenard", 10),
            ("valmor quistel brenard", 12),
            ("quistel", 5),
            ("zembic valmor", 3),
            ("osk corvane valmor", 4),
        ):
            hits = kb.keyword_search(query, limit)
            expected = exact_bm25(stored, query, limit)
            _assert_same(hits, expected)
            # Ties in the chunk ids' order, as the exact ranking breaks them.
            assert [hit.chunk.chunk_id for hit in hits] == [chunk_id for chunk_id, _ in expected]
        # Only stop words, only words no chunk holds: no hits; an unknown word beside known ones changes nothing.
        assert terms("the and of which") == []
        assert kb.keyword_search("the and of which?", 5) == []
        assert kb.keyword_search("gallotry hestrin", 5) == []
        _assert_same(kb.keyword_search("gallotry zembic", 5), exact_bm25(stored, "zembic", 5))
        # The best match deleted: gone from the answer and from the statistics (its words' IDF included).
        assert kb.delete_document("rare")
        for chunk_id in ("rare-0", "rare-1"):
            del stored[chunk_id]
        assert kb.keyword_search("zembic", 5) == []
        for query in ("zembic valmor", "valmor quistel brenard", "osk fenwix quistel"):
            expected = exact_bm25(stored, query, 10)
            hits = kb.keyword_search(query, 10)
            _assert_same(hits, expected)
            assert [hit.chunk.chunk_id for hit in hits] == [chunk_id for chunk_id, _ in expected]

    def test_scores_are_computed_in_float8_without_numeric_arithmetic(self, kb):
        # A bare decimal constant is numeric in PostgreSQL: `0.75 * dl` made a numeric product (and a cast back to
        # float8) for every posting scored.
        stored: dict[str, dict[str, int]] = {}
        self._write(kb, stored, "some", ["Valmor quistel brenard.", "Quistel osk."])
        postings = kb.index._postings
        values = {
            "terms": ["quistel", "valmor"],
            "idf": [0.5, 1.0],
            "depth": 2,
            "limit": 2,
            "avg": 2.5,
            "slack": 1.0,
            "complete": 2,
            "theta": 0.1,
            "others": ["valmor"],
            "others_idf": [1.0],
            "ids": ["some-0"],
        }
        with kb.index._connection() as conn:
            for statement in (postings._round, postings._essential, postings._others, postings._others_scan):
                plan = "\n".join(row[0] for row in conn.execute(sql.SQL("EXPLAIN VERBOSE ") + statement, values))
                assert "numeric" not in plan
            plan = "\n".join(
                row[0]
                for row in conn.execute(
                    sql.SQL("EXPLAIN VERBOSE ") + postings.filtered_top(sql.SQL("")), (["quistel"], 2)
                )
            )
            assert "numeric" not in plan
