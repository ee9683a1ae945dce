from __future__ import annotations

import pytest

from components.contracts import RankedDocuments
from components.generation import CitedAnswerBuilder, cited_numbers
from tests.components.ranking.chunks import kb_document

DOCUMENTS = [kb_document("a", "Alpha text."), kb_document("b", "Beta text."), kb_document("c", "Gamma text.")]


class TestCitedAnswerBuilder:
    def test_cited_numbers_reads_every_form(self):
        assert cited_numbers("x [2] y [1, 3] z [2-4] w [5][1]") == [2, 1, 3, 4, 5]
        assert cited_numbers("no citations here") == []

    def test_init_and_serialisation(self):
        with pytest.raises(ValueError):
            CitedAnswerBuilder(strip_invalid="yes")  # type: ignore[arg-type]
        builder = CitedAnswerBuilder(strip_invalid=False)
        assert CitedAnswerBuilder.from_dict(builder.to_dict()).strip_invalid is False

    def test_numbers_map_to_chunks_in_order(self):
        out = CitedAnswerBuilder().run(replies=["Gamma holds [3]. Alpha too [1][3]."], documents=DOCUMENTS)
        assert [c["number"] for c in out["citations"]] == [3, 1]
        assert out["citations"][0] == {
            "number": 3,
            "chunk_id": "c",
            "source_type": "kb",
            "source_id": "doc-c",
            "source_title": "Document c",
            "source_url": "https://example.org/c",
        }
        assert [d.meta["citation_number"] for d in out["documents"]] == [1, 2, 3]
        assert out["invalid_citations"] == []

    def test_reads_the_rankers_view_and_returns_its_numbered_chunks_once(self):
        replies = ["Gamma holds [3]. Alpha too [1][3]."]
        from_list = CitedAnswerBuilder().run(replies=replies, documents=DOCUMENTS)
        from_view = CitedAnswerBuilder().run(replies=replies, documents=RankedDocuments(tuple(DOCUMENTS)))
        assert from_view == from_list
        # One view of the numbered chunks: a stock Hayhooks deployment returns each of this component's outputs.
        assert set(from_view) == {"answer", "citations", "documents", "invalid_citations"}
        assert "citation_number" not in DOCUMENTS[0].meta  # the shared chunks are read, never changed

    def test_invalid_numbers_are_reported_and_stripped(self):
        out = CitedAnswerBuilder().run(replies=["Made up [7]. Mixed [2, 9]."], documents=DOCUMENTS)
        assert out["invalid_citations"] == [7, 9]
        assert out["answer"] == "Made up. Mixed [2]."
        assert [c["number"] for c in out["citations"]] == [2]

    def test_no_reply_gives_an_empty_answer(self):
        out = CitedAnswerBuilder().run(replies=[], documents=[])
        assert out["answer"] == "" and out["citations"] == [] and out["documents"] == []
