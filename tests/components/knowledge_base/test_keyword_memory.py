"""Keyword search on pgvector from the in-memory copy of the postings (`keyword_memory`): the same answers as the
server-side function and an exact BM25, never stale after a write made elsewhere, off above its memory cap, and
the same under filters."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from components.knowledge_base import keyword_memory
from components.knowledge_base.factory import knowledge_base_for
from components.knowledge_base.postings_index import KeywordPostings
from components.knowledge_base.store import SearchFilters
from tests.components.knowledge_base import test_postings_index as postings_tests
from tests.components.knowledge_base.test_pgvector_index import _store
from tests.components.knowledge_base.test_postings_index import (
    _assert_same,
    _corpus,
    _questions,
    exact_bm25,
)

LARGE = 10**9
ROOT = Path(__file__).resolve().parents[3]


def _load(kb, corpus) -> dict[str, dict[str, int]]:
    for document, chunks in corpus:
        kb.upsert_document(document, chunks)
    return {chunk.chunk_id: chunk.term_counts for _, chunks in corpus for chunk in chunks}


class _Paths:
    """Which path answered each keyword search of an index: the copy (True) or the database (False)."""

    def __init__(self, index, monkeypatch) -> None:
        self.answers: list[bool] = []
        in_memory = index._keyword_in_memory

        def spy(*args, **kwargs):  # noqa: ANN202
            found = in_memory(*args, **kwargs)
            self.answers.append(found is not None)
            return found

        monkeypatch.setattr(index, "_keyword_in_memory", spy)


@pytest.fixture()
def pair(database_url, collection_name, monkeypatch):
    """The same collection opened twice: on the database only (`sql`), and with the in-memory copy (`memory`)."""
    monkeypatch.setattr(keyword_memory, "MIN_RELOAD_S", 0.0)
    monkeypatch.setattr(keyword_memory, "RELOAD_PAUSE", 0.0)
    on_database = knowledge_base_for(_store(collection_name), keyword_index_max_postings=0)
    in_memory = knowledge_base_for(_store(collection_name), keyword_index_max_postings=LARGE)
    yield on_database, in_memory
    in_memory.index.keyword_memory.wait()
    on_database.drop()
    on_database.close()
    in_memory.close()


@pytest.mark.integration
class TestKeywordMemory:
    def test_the_copy_answers_what_the_function_and_an_exact_bm25_answer_ties_included(self, pair, monkeypatch):
        on_database, in_memory = pair
        stored = _load(on_database, _corpus(11))
        edges: dict[str, dict[str, int]] = {}
        # Twelve chunks alike (one score for all), written out of id order.
        write = postings_tests.TestKeywordPostingsEdges._write
        for number in (7, 3, 11, 0, 9, 5, 1, 10, 2, 8, 4, 6):
            write(on_database, edges, f"same{number:02d}", ["Valmor quistel brenard."])
        stored.update(edges)
        copy = in_memory.index.keyword_memory.load(LARGE)
        assert copy is not None and copy.n == len(stored)
        paths = _Paths(in_memory.index, monkeypatch)
        for query in [*_questions(12), "valmor quistel brenard", "quistel"]:
            for limit in (1, 5, 12):
                expected = exact_bm25(stored, query, limit)
                from_memory = in_memory.keyword_search(query, limit)
                from_database = on_database.keyword_search(query, limit)
                _assert_same(from_memory, expected)
                # The copy and the function: the same chunks in the same order (ties by id), the same scores.
                assert [hit.chunk.chunk_id for hit in from_memory] == [hit.chunk.chunk_id for hit in from_database]
                assert [hit.raw_score for hit in from_memory] == pytest.approx(
                    [hit.raw_score for hit in from_database], rel=1e-12
                )
        assert paths.answers and all(paths.answers)
        assert in_memory.keyword_search("the and of which?", 5) == []
        assert in_memory.keyword_search("plimsovar quentrix", 5) == []

    def test_a_write_elsewhere_is_never_missed_and_the_copy_is_loaded_again_meanwhile(self, pair, monkeypatch):
        on_database, in_memory = pair
        corpus = _corpus(13)
        stored = _load(on_database, corpus[:12])
        memory = in_memory.index.keyword_memory
        before = memory.load(LARGE)
        paths = _Paths(in_memory.index, monkeypatch)
        query = "valmor quistel"
        _assert_same(in_memory.keyword_search(query, 10), exact_bm25(stored, query, 10))
        assert paths.answers == [True]
        # Another connection writes and deletes (the other knowledge base, as another process would): the copy is
        # not told, the database's generation moves.
        stored.update(_load(on_database, corpus[12:]))
        document, chunks = corpus[0]
        assert on_database.delete_document(document.document_id)
        for chunk in chunks:
            del stored[chunk.chunk_id]
        # The load that follows is held until the searches below are done: they are answered on the database.
        release, loading = threading.Event(), threading.Event()
        load = memory.load

        def held(max_postings):  # noqa: ANN202
            loading.set()
            assert release.wait(30)
            return load(max_postings)

        monkeypatch.setattr(memory, "load", held)
        for question in [query, *_questions(14, count=8)]:
            _assert_same(in_memory.keyword_search(question, 10), exact_bm25(stored, question, 10))
        assert loading.wait(10)
        assert paths.answers[1:] == [False] * 9
        release.set()
        assert memory.wait(30)
        assert memory.current(LARGE).generation != before.generation
        for question in [query, *_questions(15, count=8)]:
            _assert_same(in_memory.keyword_search(question, 10), exact_bm25(stored, question, 10))
        assert paths.answers[10:] == [True] * 9

    def test_a_collection_above_the_cap_is_searched_on_the_database(self, database_url, collection_name, monkeypatch):
        # The cap counts every collection's copy in the process: the copies earlier tests left make room at once.
        monkeypatch.setattr(keyword_memory, "IDLE_S", 0.0)
        kb = knowledge_base_for(_store(collection_name), keyword_index_max_postings=0)
        try:
            stored = _load(kb, _corpus(16, documents=6))
            postings = sum(len(counts) for counts in stored.values())
            capped = knowledge_base_for(_store(collection_name), keyword_index_max_postings=postings - 1)
            memory = capped.index.keyword_memory
            assert memory.load(postings - 1) is None  # too many: nothing kept
            paths = _Paths(capped.index, monkeypatch)
            for query in _questions(17, count=5):
                _assert_same(capped.keyword_search(query, 5), exact_bm25(stored, query, 5))
            assert memory.wait(30)
            assert paths.answers == [False] * 5 and memory.loads == 0
            # At the cap exactly, it is copied.
            exact = knowledge_base_for(_store(collection_name), keyword_index_max_postings=postings)
            assert memory.load(postings).postings == postings
            paths = _Paths(exact.index, monkeypatch)
            for query in _questions(17, count=5):
                _assert_same(exact.keyword_search(query, 5), exact_bm25(stored, query, 5))
            assert paths.answers == [True] * 5
            capped.close()
            exact.close()
        finally:
            kb.drop()
            kb.close()

    def test_filters_give_the_same_answers_from_the_copy_or_on_the_database(self, pair, monkeypatch):
        on_database, in_memory = pair
        corpus = _corpus(18, documents=30)
        stored = _load(on_database, corpus)
        in_memory.index.keyword_memory.load(LARGE)
        monkeypatch.setattr("components.knowledge_base.pgvector_index._FILTER_DEPTH_MIN", 12)
        monkeypatch.setattr("components.knowledge_base.pgvector_index._FILTER_DEPTH", 2)
        paths = _Paths(in_memory.index, monkeypatch)
        pdf = {chunk.chunk_id for document, chunks in corpus if document.doc_type == "pdf" for chunk in chunks}
        one = corpus[5][0].document_id
        of_one = {chunk.chunk_id for chunk in corpus[5][1]}
        for filters, members in (
            (SearchFilters(doc_types=("pdf",)), pdf),
            (SearchFilters(document_ids=(one,)), of_one),
        ):
            for query in _questions(19, count=10):
                expected = [item for item in exact_bm25(stored, query, len(stored)) if item[0] in members][:5]
                from_memory = in_memory.keyword_search(query, 5, filters=filters)
                _assert_same(from_memory, expected)
                from_database = on_database.keyword_search(query, 5, filters=filters)
                assert [hit.chunk.chunk_id for hit in from_memory] == [hit.chunk.chunk_id for hit in from_database]
        # A filter that half the chunks pass is settled within the depth read; one document's chunks mostly are not,
        # and those questions went to the database.
        assert any(paths.answers[:10]) and not all(paths.answers[10:])

    def test_a_collection_made_before_the_generation_gets_it_when_opened(self, pair, collection_name):
        on_database, in_memory = pair
        _load(on_database, _corpus(20, documents=3))
        postings = KeywordPostings("public", collection_name)
        with on_database.index._connection() as conn:
            conn.execute(postings.statement("ALTER TABLE {totals} DROP COLUMN generation"))
        reopened = knowledge_base_for(_store(collection_name), keyword_index_max_postings=LARGE)
        with reopened.index._connection() as conn:
            generation = conn.execute(postings.statement("SELECT generation FROM {totals}")).fetchone()[0]
        assert generation is not None
        assert reopened.index.keyword_memory.load(LARGE).generation == generation
        reopened.close()

    def test_a_failed_load_leaves_questions_on_the_database_with_a_one_line_warning(self, pair, monkeypatch, caplog):
        on_database, in_memory = pair
        stored = _load(on_database, _corpus(23, documents=4))
        memory = in_memory.index.keyword_memory
        calls: list[int] = []

        def broken(max_postings):  # noqa: ANN202
            calls.append(max_postings)
            raise OSError("server closed the connection unexpectedly\nThis probably means the server terminated")

        monkeypatch.setattr(memory, "load", broken)
        paths = _Paths(in_memory.index, monkeypatch)
        with caplog.at_level("WARNING"):
            for query in _questions(24, count=3):
                _assert_same(in_memory.keyword_search(query, 5), exact_bm25(stored, query, 5))
                assert memory.wait(30)
        assert calls and paths.answers == [False] * 3 and memory.loads == 0
        warnings = [record.getMessage() for record in caplog.records if "could not be loaded" in record.getMessage()]
        assert warnings and all("server closed the connection unexpectedly" in line for line in warnings)
        assert not any("This probably means" in line or "Traceback" in line for line in warnings)

    def test_a_load_stops_when_the_process_exits(self, pair, monkeypatch):
        on_database, in_memory = pair
        _load(on_database, _corpus(21, documents=3))
        memory = in_memory.index.keyword_memory
        stopping = threading.Event()
        monkeypatch.setattr(keyword_memory, "_STOPPING", stopping)
        stopping.set()  # what the exit hook does before the connections close
        with pytest.raises(keyword_memory.LoadStopped):
            memory.load(LARGE)
        assert memory.current(0) is None and memory.loads == 0
        stopping.clear()
        assert memory.load(LARGE) is not None

    def test_a_write_by_another_process_moves_the_generation_the_copy_is_checked_against(
        self, pair, database_url, collection_name, monkeypatch
    ):
        on_database, in_memory = pair
        stored = _load(on_database, _corpus(22, documents=4))
        memory = in_memory.index.keyword_memory
        before = memory.load(LARGE)
        monkeypatch.setattr(memory, "refresh", lambda *_: None)  # the copy stays the old one
        paths = _Paths(in_memory.index, monkeypatch)
        # Another process writes a document whose words outscore every chunk here.
        writer = (
            "import sys\n"
            "from components.knowledge_base.factory import knowledge_base_for\n"
            "from components.knowledge_base.store import ChunkRecord, DocumentRecord\n"
            "from tests.components.knowledge_base.test_pgvector_index import _store, _unit\n"
            "kb = knowledge_base_for(_store(sys.argv[1]), keyword_index_max_postings=0)\n"
            "kb.upsert_document(DocumentRecord('elsewhere', '', 'files/elsewhere.md', 'md', 'h'), [ChunkRecord(\n"
            "    'elsewhere-0', 'elsewhere', 0, 'valmor valmor quistel', _unit(999),\n"
            "    term_counts={'valmor': 5, 'quistel': 5})])\n"
            "kb.close()\n"
        )
        environment = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", writer, collection_name],
            env=environment,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        stored["elsewhere-0"] = {"valmor": 5, "quistel": 5}
        found = in_memory.keyword_search("valmor quistel", 5)
        _assert_same(found, exact_bm25(stored, "valmor quistel", 5))
        assert found[0].chunk.chunk_id == "elsewhere-0"  # not the old copy's answer
        assert paths.answers == [False]
        with in_memory.index._connection() as conn:
            now = conn.execute(
                KeywordPostings("public", collection_name).statement("SELECT generation FROM {totals}")
            ).fetchone()[0]
        assert now != before.generation


@pytest.mark.integration
def test_a_memory_on_a_closed_pool_is_let_go_for_one_on_the_new_pool(database_url, collection_name, monkeypatch):
    from components.database import close_pools

    kb = knowledge_base_for(_store(collection_name), keyword_index_max_postings=LARGE)
    try:
        stored = _load(kb, _corpus(23, documents=3))
        old = kb.index.keyword_memory
        assert old.load(LARGE) is not None
        kb.close()
        close_pools()  # as a runtime's last lease does, or a server before it forks its workers
        kb = knowledge_base_for(_store(collection_name), keyword_index_max_postings=LARGE)
        memory = kb.index.keyword_memory
        assert memory is not old and memory._pool is kb.index._pool
        assert memory.load(LARGE) is not None  # on the old, closed pool every load failed
        paths = _Paths(kb.index, monkeypatch)
        _assert_same(kb.keyword_search("valmor quistel", 5), exact_bm25(stored, "valmor quistel", 5))
        assert paths.answers == [True]
    finally:
        kb.drop()
        kb.close()


@pytest.mark.integration
def test_the_cap_counts_every_collections_copy_and_an_idle_copy_makes_room(database_url, monkeypatch):
    import uuid

    names = [f"t_{uuid.uuid4().hex[:10]}" for _ in range(2)]
    made = [knowledge_base_for(_store(name), keyword_index_max_postings=LARGE) for name in names]
    try:
        stored = [_load(kb, _corpus(24 + k, documents=4)) for k, kb in enumerate(made)]
        sizes = [sum(len(counts) for counts in chunks.values()) for chunks in stored]
        cap = max(sizes) + min(sizes) - 1  # either fits alone, not both
        first, second = (kb.index.keyword_memory for kb in made)
        assert first.load(cap) is not None
        assert first.current(cap) is not None  # read just now: kept
        assert second.load(cap) is None and second.current(cap) is None
        assert first.current(cap) is not None
        paths = _Paths(made[1].index, monkeypatch)
        _assert_same(made[1].keyword_search("valmor quistel", 5), exact_bm25(stored[1], "valmor quistel", 5))
        assert paths.answers == [False] and second.wait(30) and second.loads == 0  # no load tried meanwhile
        monkeypatch.setattr(keyword_memory, "IDLE_S", 0.0)  # the first copy has been idle long enough
        assert second.load(cap) is not None
        assert first._copy is None  # let go: the process holds one copy under the cap
    finally:
        for kb in made:
            kb.drop()
            kb.close()
