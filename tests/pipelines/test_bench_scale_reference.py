"""The scale bench's keyword reference on pgvector: today's analyzer's counts, or the counts a base stores when an
earlier analyzer counted it (the search is exact over what it stores)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from components.knowledge_base.factory import knowledge_base_for
from components.knowledge_base.store import ChunkRecord, DocumentRecord
from pipelines.bench_scale import StoredCounts, _keyword_both_ways, _keyword_reference
from tests.components.knowledge_base.test_pgvector_index import _store, _unit
from tests.components.knowledge_base.test_postings_index import exact_bm25

WORDS = ["valmor", "quistel", "brenard", "osk", "tiravel", "pundric", "melsha"]
# Fourteen chunks (the reference's top 10 needs more than ten), each a few of the words a few times.
COUNTS = {
    f"memo-{number}": {WORDS[(number + step) % len(WORDS)]: 1 + (number * step) % 3 for step in range(1 + number % 4)}
    for number in range(14)
}


def _same(got: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    """The same scores rank by rank, and the same chunks above the last score (ties there may be either)."""
    assert [score for _, score in got] == pytest.approx([score for _, score in expected], rel=1e-9)
    last = expected[-1][1] if expected else 0.0
    assert {c for c, s in got if s > last + 1e-9} == {c for c, s in expected if s > last + 1e-9}


def test_stored_counts_rank_as_the_exact_bm25() -> None:
    reference = StoredCounts(list(COUNTS), list(COUNTS.values()))
    for query in ("valmor quistel", "osk", "pundric valmor brenard", "gallotry"):
        _same(reference.exact_bm25(query), exact_bm25(COUNTS, query, 10))


@pytest.mark.integration
def test_a_base_counted_by_an_earlier_analyzer_is_measured_against_its_stored_counts(database_url, collection_name):
    kb = knowledge_base_for(_store(collection_name))
    try:
        document = DocumentRecord("memo", "", "files/memo.md", "md", "h")
        kb.upsert_document(
            document,
            [
                ChunkRecord(chunk_id, "memo", index, " ".join(counts), _unit(index), term_counts=counts)
                for index, (chunk_id, counts) in enumerate(COUNTS.items())
            ],
        )
        stored_average = sum(sum(c.values()) for c in COUNTS.values()) / len(COUNTS)
        lines: list[str] = []
        same = SimpleNamespace(average_terms=stored_average)
        assert _keyword_reference(kb, same, lines.append) is same
        assert lines == []
        other = SimpleNamespace(average_terms=stored_average - 1.0)
        reference = _keyword_reference(kb, other, lines.append)
        assert isinstance(reference, StoredCounts)
        assert "an earlier analyzer's" in lines[0] and "the counts it stores" in lines[0]
        for query in ("valmor quistel", "osk tiravel"):
            _same(reference.exact_bm25(query), exact_bm25(COUNTS, query, 10))
    finally:
        kb.drop()
        kb.close()


@pytest.mark.integration
def test_keyword_is_measured_in_memory_and_on_the_database_with_the_same_answers(database_url, collection_name):
    from pipelines.bench_scale import _index_both_ways, _keyword_both_ways, _load_keyword_memory

    kb = knowledge_base_for(_store(collection_name), keyword_index_max_postings=10_000)
    try:
        document = DocumentRecord("memo", "", "files/memo.md", "md", "h")
        kb.upsert_document(
            document,
            [
                ChunkRecord(chunk_id, "memo", index, " ".join(counts), _unit(index), term_counts=counts)
                for index, (chunk_id, counts) in enumerate(COUNTS.items())
            ],
        )
        lines: list[str] = []
        loaded = _load_keyword_memory(kb, lines.append)["keyword_memory"]
        assert loaded["postings"] == sum(len(counts) for counts in COUNTS.values()) and "postings" in lines[0]
        questions = ["valmor quistel", "osk tiravel", "pundric"]
        memory, hits, database, database_hits = _keyword_both_ways(kb, questions, questions[:1])
        assert len(memory) == len(database) == len(questions)
        for one, other, query in zip(hits, database_hits, questions, strict=True):
            assert [h.chunk.chunk_id for h in one] == [h.chunk.chunk_id for h in other]
            _same([(h.chunk.chunk_id, h.raw_score) for h in one], exact_bm25(COUNTS, query, 10))
        timings, found = _index_both_ways(kb.index, questions)
        assert {name: len(values) for name, values in timings.items()} == {"index_memory": 3, "index_function": 3}
        for one, other in zip(found["index_memory"], found["index_function"], strict=True):
            assert [c for c, _ in one] == [c for c, _ in other]
            assert [s for _, s in one] == pytest.approx([s for _, s in other], rel=1e-12)
        assert kb.index.keyword_index_max_postings == 10_000  # restored after each call on the database
        # A copy gone stale while measured would measure the database twice: refused.
        with kb.index._connection() as conn:
            conn.execute(kb.index._postings.statement("UPDATE {totals} SET generation = generation + 1"))
        kb.index.keyword_memory.refresh = lambda *_: None  # the copy stays the stale one
        with pytest.raises(RuntimeError, match="went stale"):
            _keyword_both_ways(kb, questions, [])
    finally:
        kb.index.keyword_memory.wait()
        kb.drop()
        kb.close()


@pytest.mark.integration
def test_keyword_search_is_measured_both_ways_and_a_stale_copy_is_refused(database_url, collection_name, monkeypatch):
    records = [
        ChunkRecord(chunk_id, "memo", index, " ".join(counts), _unit(index), term_counts=counts)
        for index, (chunk_id, counts) in enumerate(COUNTS.items())
    ]
    kb = knowledge_base_for(_store(collection_name), keyword_index_max_postings=10**9)
    writer = knowledge_base_for(_store(collection_name), keyword_index_max_postings=0)
    try:
        kb.upsert_document(DocumentRecord("memo", "", "files/memo.md", "md", "h"), records)
        memory = kb.index.keyword_memory
        assert memory.load(10**9) is not None
        queries = ["valmor quistel", "osk tiravel", "pundric"]
        answered = kb.index.keyword_answers_from_memory
        in_memory, memory_hits, on_database, database_hits = _keyword_both_ways(kb, queries, ["melsha"])
        assert kb.index.keyword_answers_from_memory == answered + 4  # the warm-up and each question, in memory only
        assert len(in_memory) == len(on_database) == len(queries)
        for from_memory, from_database, query in zip(memory_hits, database_hits, queries, strict=True):
            assert from_memory and [h.chunk.chunk_id for h in from_memory] == [h.chunk.chunk_id for h in from_database]
            _same([(h.chunk.chunk_id, h.raw_score) for h in from_memory], exact_bm25(COUNTS, query, 10))
        assert kb.index.keyword_index_max_postings == 10**9
        # A write the copy never sees: its questions go to the database, which the measurement refuses.
        monkeypatch.setattr(memory, "refresh", lambda *_: None)
        writer.upsert_document(
            DocumentRecord("note", "", "files/note.md", "md", "n"),
            [ChunkRecord("note-0", "note", 0, "valmor", _unit(99), term_counts={"valmor": 3})],
        )
        with pytest.raises(RuntimeError, match="went stale"):
            _keyword_both_ways(kb, queries, [])
    finally:
        writer.drop()
        writer.close()
        kb.close()


def test_a_scale_base_is_opened_on_settings_of_its_own_and_the_process_keeps_its_own(tmp_path) -> None:
    import os

    from components.settings import get_settings
    from pipelines.bench_scale import _settings_for

    environment, settings = dict(os.environ), get_settings()
    own = _settings_for("qdrant", tmp_path, "scale_30_wendrel")
    assert (own.kb_backend, own.kb_collection, own.qdrant_path) == ("qdrant", "scale_30_wendrel", tmp_path / "qdrant")
    assert own.milvus_uri == str(tmp_path / "milvus" / "scale.db")
    assert dict(os.environ) == environment and get_settings() is settings
