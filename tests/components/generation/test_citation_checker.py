from __future__ import annotations

import pytest

from components.contracts import RankedDocuments
from components.generation import CitationChecker
from tests.components.ranking.chunks import kb_document

DOCUMENTS = [
    kb_document("sb", "The Denver Broncos defeated the Carolina Panthers 24-10 to win Super Bowl 50."),
    kb_document("wa", "Warsaw, Poland's capital and biggest city, lies on the Vistula River."),
]


class TestCitationChecker:
    def test_init_validates_and_serialises(self):
        with pytest.raises(ValueError):
            CitationChecker(min_support=2)
        checker = CitationChecker(min_support=0.6)
        assert CitationChecker.from_dict(checker.to_dict()).min_support == 0.6

    def test_supported_and_unsupported_sentences(self):
        answer = (
            "The Denver Broncos won Super Bowl 50 against the Carolina Panthers [1]. "
            "Warsaw lies on the Vistula River [1]. "
            "Warsaw is the capital of Poland [2]. "
            "It was a cold day."
        )
        out = CitationChecker().run(answer=answer, documents=DOCUMENTS)
        sentences = out["sentences"]
        assert [s["citations"] for s in sentences] == [[1], [1], [2], []]
        assert [s["supported"] for s in sentences] == [True, False, True, False]
        assert sentences[0]["support_score"] >= 0.7
        assert sentences[1]["support_score"] < 0.5
        assert sentences[3]["support_score"] == 0.0
        assert out["unsupported"] == 2

    def test_the_answer_builders_view_checks_as_its_list_does(self):
        answer = "Warsaw is the capital of Poland [2]. Warsaw lies on the Vistula River [1]."
        shared = CitationChecker().run(answer=answer, documents=RankedDocuments(tuple(DOCUMENTS)))
        assert shared == CitationChecker().run(answer=answer, documents=DOCUMENTS)
        assert [sentence["supported"] for sentence in shared["sentences"]] == [True, False]

    def test_a_marker_split_off_belongs_to_the_claim_before_it(self):
        out = CitationChecker().run(answer="Warsaw is the capital of Poland. [2]", documents=DOCUMENTS)
        assert out["sentences"] == [
            {
                "text": "Warsaw is the capital of Poland.",
                "citations": [2],
                "supported": True,
                "support_score": 1.0,
                "abstains": False,
            }
        ]

    def test_citations_outside_the_list_support_nothing(self):
        out = CitationChecker().run(answer="Warsaw is the capital of Poland [5].", documents=DOCUMENTS)
        assert out["sentences"][0]["citations"] == [] and out["sentences"][0]["supported"] is False


class TestVerdictHeadlines:
    """A yes/no verdict is checked as the claim it makes, the question's, not as the word "yes"."""

    CHUNKS = [
        kb_document("kd", "On March 2, 2022, Kestrel Data announced that it had agreed to acquire Brindle."),
        kb_document("or", "In 2021 Orvane Systems acquired Tessel, a start-up that made charting tools."),
    ]
    ANSWER = "yes [1]. On March 2, 2022, Kestrel Data announced that it had agreed to acquire Brindle [1]."

    def test_a_verdict_its_sources_hold_is_supported(self):
        query = "Did Kestrel Data acquire Brindle?"
        out = CitationChecker().run(answer=self.ANSWER, documents=self.CHUNKS, query=query)
        assert [sentence["text"] for sentence in out["sentences"]][0] == "yes [1]."
        assert [sentence["supported"] for sentence in out["sentences"]] == [True, True]
        assert out["unsupported"] == 0

    def test_a_verdict_on_what_its_sources_do_not_hold_is_flagged(self):
        out = CitationChecker().run(answer=self.ANSWER, documents=self.CHUNKS, query="Did Velloran acquire Harrowgate?")
        assert out["sentences"][0]["text"] == "yes [1]." and out["sentences"][0]["supported"] is False

    def test_the_sentences_the_verdict_was_read_from_support_it(self):
        # "Did A acquire B, and C acquire D?": the headline cites the first; the answer cites both after it.
        answer = self.ANSWER + " In 2021 Orvane Systems acquired Tessel, a start-up that made charting tools [2]."
        query = "Did Kestrel Data acquire Brindle and Orvane Systems acquire Tessel?"
        out = CitationChecker().run(answer=answer, documents=self.CHUNKS, query=query)
        assert out["unsupported"] == 0

    def test_without_the_question_a_verdict_is_left_out(self):
        out = CitationChecker().run(answer=self.ANSWER, documents=self.CHUNKS)
        assert [sentence["text"] for sentence in out["sentences"]] == [self.ANSWER.split("yes [1]. ")[1]]
