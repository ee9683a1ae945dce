"""The memory helpers every backend shares: durations, as_of bounds, answer summaries, memory chunks."""

from __future__ import annotations

import datetime as dt

import pytest

from components.contracts import SourceType, chunk_to_document, document_to_chunk
from components.memory.store import (
    Interaction,
    RecalledInteraction,
    interaction_to_chunk,
    mentioned_entities,
    parse_as_of,
    parse_time_window,
    summarise_answer,
)


class TestMemoryStoreHelpers:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("30m", dt.timedelta(minutes=30)),
            ("24h", dt.timedelta(hours=24)),
            ("7d", dt.timedelta(days=7)),
            ("2 weeks", dt.timedelta(weeks=2)),
            ("P1W2D", dt.timedelta(days=9)),
            ("PT6H", dt.timedelta(hours=6)),
        ],
    )
    def test_parse_time_window(self, text: str, expected: dt.timedelta) -> None:
        assert parse_time_window(text) == expected

    def test_parse_time_window_rejects_nonsense_in_one_sentence(self) -> None:
        assert parse_time_window(None) is None and parse_time_window("  ") is None
        with pytest.raises(ValueError, match="not a duration like"):
            parse_time_window("last tuesday")

    def test_parse_as_of_includes_the_whole_day(self) -> None:
        bound = parse_as_of("2024-03-01")
        assert bound == dt.datetime(2024, 3, 2, tzinfo=dt.UTC)
        moment = parse_as_of("2024-03-01T10:00:00Z")
        assert moment is not None and moment > dt.datetime(2024, 3, 1, 10, tzinfo=dt.UTC)
        with pytest.raises(ValueError, match="not an ISO date"):
            parse_as_of("03/01/2024")

    def test_summarise_answer_drops_citations_and_keeps_sentences(self) -> None:
        answer = "Globex bought Acme in 2021 [1]. The price was $2bn [2, 3]. " + "Filler sentence. " * 40
        summary = summarise_answer(answer, max_chars=80)
        assert summary.startswith("Globex bought Acme in 2021. The price was $2bn.")
        assert "[" not in summary and len(summary) <= 80

    def test_interaction_to_chunk_carries_memory_metadata(self) -> None:
        when = dt.datetime(2025, 5, 4, 3, 2, 1, tzinfo=dt.UTC)
        interaction = Interaction(
            session_id="s1",
            query="Who bought Acme?",
            response="Globex [1].",
            response_summary="Globex.",
            entities=["Acme", "Globex"],
            created_at=when,
            interaction_id="abc",
        )
        chunk = interaction_to_chunk(RecalledInteraction(interaction, cosine=0.8, raw_score=0.8), 0.8)
        assert chunk.source_type is SourceType.MEMORY and chunk.id == "memory:abc"
        assert chunk.metadata["prior_query"] == "Who bought Acme?"
        assert chunk.metadata["prior_response_summary"] == "Globex."
        assert chunk.metadata["session_id"] == "s1"
        assert chunk.metadata["interaction_timestamp"] == "2025-05-04T03:02:01+00:00"
        assert chunk.metadata["entity_references"] == ["Acme", "Globex"]
        assert chunk.source_date == dt.date(2025, 5, 4)
        # The chunk survives the one Document round trip every source uses.
        assert document_to_chunk(chunk_to_document(chunk)).metadata["entity_references"] == ["Acme", "Globex"]

    def test_mentioned_entities_matches_whole_words_only(self) -> None:
        assert mentioned_entities("Acme and Globex merged", ["acme", "Glob", "Globex"]) == ["acme", "Globex"]
