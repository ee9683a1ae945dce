"""What the pgvector index offers measurements through its public interface: its stored term counts, the exact
nearest chunks, the HNSW candidate floor, the count of keyword searches answered in memory, and the keyword
strategies its search was chosen over (`keyword_by_ts_rank`, `keyword_every_posting`, `keyword_cut_off_steps`,
`keyword_function_session`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from components.knowledge_base.factory import knowledge_base_for
from components.knowledge_base.store import ChunkRecord, DocumentRecord
from tests.components.knowledge_base.test_pgvector_index import _store, _unit
from tests.components.knowledge_base.test_postings_index import exact_bm25

WORDS = ["valmor", "quistel", "brenard", "osk", "tiravel", "pundric", "melsha"]
# Fourteen chunks, each a few of the words a few times (a top 10 that leaves some out).
COUNTS = {
    f"memo-{number}": {WORDS[(number + step) % len(WORDS)]: 1 + (number * step) % 3 for step in range(1 + number % 4)}
    for number in range(14)
}
QUERIES = ("valmor quistel", "osk tiravel", "pundric valmor brenard", "melsha")


def _same(got: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    """The same scores rank by rank, and the same chunks above the last score (ties there may be either)."""
    assert [score for _, score in got] == pytest.approx([score for _, score in expected], rel=1e-9)
    last = expected[-1][1] if expected else 0.0
    assert {c for c, s in got if s > last + 1e-9} == {c for c, s in expected if s > last + 1e-9}


@pytest.fixture()
def kb(database_url: str, collection_name: str) -> Iterator[Any]:
    """A pgvector knowledge base holding `COUNTS` (and one chunk without terms), the in-memory keyword copy allowed."""
    kb = knowledge_base_for(_store(collection_name), keyword_index_max_postings=10_000)
    records = [
        ChunkRecord(chunk_id, "memo", index, " ".join(counts), _unit(index), term_counts=counts)
        for index, (chunk_id, counts) in enumerate(COUNTS.items())
    ]
    records.append(ChunkRecord("memo-blank", "memo", len(records), "", _unit(99), term_counts={}))
    kb.upsert_document(DocumentRecord("memo", "", "files/memo.md", "md", "h"), records)
    try:
        yield kb
    finally:
        kb.index.keyword_memory.wait()
        kb.drop()
        kb.close()


@pytest.mark.integration
class TestPgvectorDiagnostics:
    def test_stored_term_counts_are_every_chunk_with_terms_by_id(self, kb: Any) -> None:
        assert kb.index.stored_term_counts() == sorted(COUNTS.items())

    def test_exact_nearest_is_the_cosine_order_of_every_chunk(self, kb: Any) -> None:
        vectors = {chunk_id: _unit(index) for index, chunk_id in enumerate(COUNTS)} | {"memo-blank": _unit(99)}
        query = _unit(7) + 0.5 * _unit(3)
        expected = sorted(vectors, key=lambda chunk_id: -float(vectors[chunk_id] @ query))
        assert kb.index.exact_nearest(query, 5) == expected[:5]
        assert kb.index.exact_nearest(query, 100) == expected

    def test_ef_search_min_sets_the_hnsw_candidates_of_a_dense_search(self, kb: Any, monkeypatch) -> None:
        index = kb.index
        assert index.ef_search_min == 100  # the default the benchmark's recall measurements chose
        settings: list[str] = []
        opened = index._connection

        @contextlib.contextmanager
        def recording() -> Iterator[Any]:
            with opened() as conn:
                yield _Recording(conn, settings)

        monkeypatch.setattr(index, "_connection", recording)
        index.ef_search_min = 7
        index.dense(_unit(1), 1)
        index.ef_search_min = 3
        index.dense(_unit(1), 2)  # never below twice the limit
        assert settings == ["7", "4"]

    def test_keyword_answers_from_memory_counts_only_the_in_memory_answers(self, kb: Any) -> None:
        index = kb.index
        assert index.keyword_memory.load(index.keyword_index_max_postings) is not None
        before = index.keyword_answers_from_memory
        assert index.keyword("valmor", 5)
        assert index.keyword_answers_from_memory == before + 1
        cap, index.keyword_index_max_postings = index.keyword_index_max_postings, 0
        try:
            assert index.keyword("valmor", 5)  # on the database
        finally:
            index.keyword_index_max_postings = cap
        assert index.keyword_answers_from_memory == before + 1

    def test_every_posting_and_the_cut_off_steps_find_the_exact_bm25_top(self, kb: Any) -> None:
        for query in QUERIES:
            expected = exact_bm25(COUNTS, query, 10)
            _same(kb.index.keyword_every_posting(query, 10), expected)
            _same(kb.index.keyword_cut_off_steps(query, 10), expected)
        assert kb.index.keyword_every_posting("gallotry", 10) == []
        assert kb.index.keyword_cut_off_steps("gallotry", 10) == []

    def test_ts_rank_finds_the_chunks_holding_a_lexeme(self, kb: Any) -> None:
        found = kb.index.keyword_by_ts_rank("osk tiravel", 50)
        holding = {chunk_id for chunk_id, counts in COUNTS.items() if {"osk", "tiravel"} & counts.keys()}
        assert sorted(found) == sorted(holding)
        assert len(kb.index.keyword_by_ts_rank("osk tiravel", 3)) == 3
        assert kb.index.keyword_by_ts_rank("gallotry", 10) == []

    def test_the_function_session_searches_on_one_server_process(self, kb: Any) -> None:
        with kb.index.keyword_function_session() as (backend_pid, search):
            for query in QUERIES:
                _same(search(query, 10), exact_bm25(COUNTS, query, 10))
            with kb.registry.connection() as conn:
                running = {row[0] for row in conn.execute("SELECT pid FROM pg_stat_activity")}
                own = conn.info.backend_pid
        assert backend_pid in running and backend_pid != own


class _Recording:
    """A connection that notes the `hnsw.ef_search` each transaction sets."""

    def __init__(self, conn: Any, settings: list[str]) -> None:
        self._conn = conn
        self._settings = settings

    def execute(self, statement: Any, params: Any = None) -> Any:
        if isinstance(statement, str) and "hnsw.ef_search" in statement:
            self._settings.append(params[0])
        return self._conn.execute(statement, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


@pytest.mark.integration
def test_every_diagnostic_of_an_empty_collection_finds_nothing(database_url: str, collection_name: str) -> None:
    kb = knowledge_base_for(_store(collection_name), keyword_index_max_postings=10_000)
    try:
        index = kb.index
        assert index.stored_term_counts() == [] and index.exact_nearest(_unit(1), 10) == []
        assert index.ranking_evidence([], _unit(1), ["valmor"]) == ({}, None)
        assert index.ranking_evidence(["memo-0"], _unit(1), ["valmor"]) == ({}, None)  # the one statement
        for diagnostic in (index.keyword_by_ts_rank, index.keyword_every_posting, index.keyword_cut_off_steps):
            assert diagnostic("valmor quistel", 10) == []
        with index.keyword_function_session() as (_, search):
            assert search("valmor quistel", 10) == []
    finally:
        kb.drop()
        kb.close()
