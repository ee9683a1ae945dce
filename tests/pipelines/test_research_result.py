"""`ResearchResult.from_outputs`: the numbered chunks and the answer's [n] stay in step."""

from __future__ import annotations

from haystack import Document

from components.contracts import ContextChunk, SourceType, chunk_to_document
from pipelines.research_result import ResearchResult


def chunk(number: int, **fields) -> Document:
    """Web chunk `number` as the pipeline hands it on; `fields` are further `ContextChunk` fields (ranks, ...)."""
    return chunk_to_document(
        ContextChunk(
            id=f"chunk-{number}",
            source_type=SourceType.WEB,
            text=f"Text of chunk {number}.",
            semantic_relevance=0.5,
            source_id=f"page-{number}",
            source_title=f"Page {number}",
            metadata={"domain": "example.org", "page_url": "https://example.org", "fetch_timestamp": "2024-01-01"},
            **fields,
        )
    )


def citation(number: int) -> dict:
    return {"number": number, "chunk_id": f"chunk-{number}", "source_title": f"Page {number}"}


class TestFromOutputs:
    def test_valid_chunks_keep_their_numbers(self) -> None:
        outputs = {"answer": "A [1]. B [2].", "citations": [citation(1), citation(2)], "chunks": [chunk(1), chunk(2)]}
        result = ResearchResult.from_outputs("q", outputs)
        assert [c.id for c in result.chunks] == ["chunk-1", "chunk-2"]
        assert result.answer == "A [1]. B [2]."

    def test_an_invalid_chunk_does_not_shift_the_numbers_of_the_others(self) -> None:
        broken = Document(id="chunk-2", content="No source type.", meta={"source_id": "x"})
        outputs = {
            "answer": "A [1]. B [2]. C [3].",
            "citations": [citation(1), citation(2), citation(3)],
            "chunks": [chunk(1), broken, chunk(3)],
            "sentences": [
                {"text": "A [1].", "citations": [1], "supported": True, "support_score": 1.0},
                {"text": "B [2].", "citations": [2], "supported": True, "support_score": 1.0},
                {"text": "C [3].", "citations": [3], "supported": True, "support_score": 1.0},
            ],
        }
        result = ResearchResult.from_outputs("q", outputs)
        # Every [n] the analyst reads names chunks[n - 1], and every citation points at the chunk it cited.
        for item in result.citations:
            assert result.chunks[item.number - 1].id == item.chunk_id
        assert [c.id for c in result.chunks] == ["chunk-1", "chunk-3"]
        assert result.answer == "A [1]. B. C [2]."
        assert [item.number for item in result.citations] == [1, 2]
        assert [s.text for s in result.sentences] == ["A [1].", "B.", "C [2]."]
        assert [s.citations for s in result.sentences] == [[1], [], [2]]
        assert [s.supported for s in result.sentences] == [True, False, True]
        assert result.invalid_citations == [2]

    def test_conflicts_are_renumbered_with_the_chunks_and_lose_a_side_citing_only_a_dropped_one(self) -> None:
        broken = Document(id="chunk-2", content="No source type.", meta={"source_id": "x"})
        conflict = {
            "attribute": "founded",
            "subject": "Brevik Labs",
            "values": [
                {"value": "2019", "citations": [1], "document_dates": []},
                {"value": "2020", "citations": [3], "document_dates": []},
            ],
        }
        outputs = {
            "answer": "A [1]. Sources disagree: 2019 [1], 2020 [3].",
            "chunks": [chunk(1), broken, chunk(3)],
            "conflicts": [
                conflict,
                {**conflict, "values": [conflict["values"][0], {"value": "2021", "citations": [2]}]},
            ],
        }
        result = ResearchResult.from_outputs("q", outputs)
        assert result.answer == "A [1]. Sources disagree: 2019 [1], 2020 [2]."
        assert [side["citations"] for side in result.conflicts[0]["values"]] == [[1], [2]]
        assert len(result.conflicts) == 1  # the other kept one side only


class TestShortAnswerConfidence:
    def test_the_confidence_and_each_part_are_carried_to_every_output(self) -> None:
        from pipelines.serving.models import format_chat_answer

        outputs = {
            "answer": "Orvelle Dunmark founded the works [1]. Not sure of the short answer; the cited sentences are "
            "what the sources say.",
            "short_answer": "",
            "short_answer_confidence": 0.31,
            "parts": [
                {
                    "question": "Who founded the works",
                    "short_answer": "Orvelle Dunmark",
                    "short_answer_confidence": 0.31,
                    "sure": False,
                    "features": {"cosine": 0.5},  # the generator's own; not part of the result
                }
            ],
        }
        result = ResearchResult.from_outputs("Who founded the works?", outputs)
        assert result.short_answer_confidence == 0.31
        dumped = result.model_dump(mode="json")  # what the HTTP API and the MCP tool return
        assert dumped["short_answer_confidence"] == 0.31
        assert dumped["parts"] == [
            {
                "question": "Who founded the works",
                "short_answer": "Orvelle Dunmark",
                "short_answer_confidence": 0.31,
                "sure": False,
            }
        ]
        assert "Short answer: not sure (confidence 31%)" in format_chat_answer(result)
        sure = result.model_copy(update={"short_answer": "Orvelle Dunmark", "short_answer_confidence": 0.93})
        assert "Short answer: sure (confidence 93%)" in format_chat_answer(sure)

    def test_an_answer_without_a_confidence_says_nothing_of_it(self) -> None:
        from pipelines.serving.models import format_chat_answer

        result = ResearchResult.from_outputs("Why?", {"answer": "The sources do not answer this question."})
        assert result.short_answer_confidence is None and result.parts == []
        assert "Short answer" not in format_chat_answer(result)

    def test_a_held_back_part_reads_not_sure_everywhere(self) -> None:
        # The generator holds back a span that answers the question's description ("Velkor's founder"), not the
        # question: no output may then carry a confidence that reads as sure beside the "not sure" note.
        from components.generation import ExtractiveAnswerGenerator
        from pipelines.cli.ask import format_result
        from pipelines.evaluation.selective import part_rows
        from pipelines.serving.models import format_chat_answer
        from tests.components.ranking.chunks import kb_document

        founder = kb_document(
            "velkor",
            "Velkor was founded in 2015 by Ansel Drumm, an engineer who had worked at Ostrava Mills before.",
            0.6,
            title="Velkor",
        )
        question = "Who founded the company that Velkor's founder worked for before?"
        out = ExtractiveAnswerGenerator(confidence_threshold=0.0).run(query=question, documents=[founder])
        outputs = {**out, "answer": out["replies"][0], "chunks": [founder]}
        result = ResearchResult.from_outputs(question, outputs)
        dumped = result.model_dump(mode="json")  # what the HTTP API and the MCP tool return
        assert dumped["short_answer"] == "" and dumped["short_answer_confidence"] is None
        assert [(part["short_answer"], part["short_answer_confidence"], part["sure"]) for part in dumped["parts"]] == [
            ("Ansel Drumm", None, False)
        ]
        assert "Not sure of the short answer" in result.answer
        assert "confidence" not in format_chat_answer(result).lower()
        assert "Short answer" not in format_result(dumped)
        # The risk-coverage curve never ranks it: it is shown at no threshold.
        assert part_rows({"answers": ["Ansel Drumm"], "parts": dumped["parts"]}) == [(0.0, True, False)]
