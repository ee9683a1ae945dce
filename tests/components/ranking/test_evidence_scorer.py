"""`EvidenceScorer`: the five evidence signals on absolute scales."""

from __future__ import annotations

import math

import pytest

from components.knowledge_base.store import TermStatistics
from components.ranking import evidence_scorer
from components.ranking.evidence_scorer import DEFAULT_WEIGHTS, EvidenceCandidate, EvidenceScorer, _text_terms
from components.text.analyzer import analyze, sentence_terms_record, terms

ANSWER = EvidenceCandidate(
    chunk_id="answer",
    text="Warsaw lies on the Vistula river. The city hosted the 1955 World Festival of Youth.",
    title="Warsaw",
    cosine=0.40,
)
DISTRACTOR = EvidenceCandidate(
    chunk_id="distractor",
    text="Kraków is a city in Poland. It was the capital before Warsaw.",
    title="Kraków",
    cosine=0.55,
)


class TestEvidenceScorer:
    def test_init_validates(self):
        with pytest.raises(ValueError, match="unknown evidence weight"):
            EvidenceScorer({"bm25f": 1.0})
        with pytest.raises(ValueError, match="negative"):
            EvidenceScorer({"dense": -1.0})
        with pytest.raises(ValueError, match="k1"):
            EvidenceScorer(k1=0)
        assert EvidenceScorer({"dense": 2}).weights == {**DEFAULT_WEIGHTS, "dense": 2.0}

    def test_candidate_statistics_without_a_store(self):
        question = "Which river does Warsaw lie on?"
        answer, distractor = EvidenceScorer().score(question, [ANSWER, DISTRACTOR])
        assert answer.idf == distractor.idf == "candidates"
        # "river" and "lie" are only in the answer; "warsaw" is in both, so it tells them apart less.
        assert answer.coverage == pytest.approx(1.0)
        assert 0 < distractor.coverage < 0.5
        assert 0 < answer.bm25 <= 1 and distractor.bm25 < answer.bm25
        # Without stored sentence vectors the chunk cosine stands in for the sentence cosine.
        assert answer.sentence == pytest.approx(0.40) and distractor.sentence == pytest.approx(0.55)
        assert ANSWER.text[slice(*answer.best_span)] == "Warsaw lies on the Vistula river."
        assert answer.score > distractor.score

    def test_collection_statistics_and_stored_sentences(self):
        question = "Which river does Warsaw lie on?"
        statistics = TermStatistics(n_chunks=1000, avg_terms=12.0, df={"river": 10, "warsaw": 50, "lie": 40})
        sentences = {"answer": [(0, 33, 0.71), (34, 84, 0.20)], "distractor": [(0, 27, 0.30), (28, 61, 0.45)]}
        answer, distractor = EvidenceScorer().score(question, [ANSWER, DISTRACTOR], statistics, sentences)
        assert answer.idf == "collection"
        idf = {t: math.log(1 + (1000 - n + 0.5) / (n + 0.5)) for t, n in statistics.df.items()}
        assert answer.coverage == pytest.approx(1.0)
        assert distractor.coverage == pytest.approx(idf["warsaw"] / sum(idf.values()))
        assert answer.sentence == pytest.approx(0.71) and distractor.sentence == pytest.approx(0.45)
        assert answer.best_span == (0, 33) and answer.best_sentence == pytest.approx(1.0 + 0.71)
        weights = DEFAULT_WEIGHTS
        expected = (
            weights["bm25"] * answer.bm25
            + weights["dense"] * 0.40
            + weights["sentence"] * 0.71
            + weights["coverage"] * 1.0
            + weights["best_sentence"] * 1.71
        )
        assert answer.score == pytest.approx(expected)
        assert answer.as_meta()["best_span"] == [0, 33]

    def test_terms_nobody_holds_are_ignored_and_empty_questions_score_by_cosine(self):
        statistics = TermStatistics(n_chunks=10, avg_terms=10.0, df={"river": 2, "zzyzx": 0})
        (features,) = EvidenceScorer().score("river zzyzx", [ANSWER], statistics)
        assert features.coverage == pytest.approx(1.0)  # zzyzx is in no chunk: it cannot tell chunks apart
        (empty,) = EvidenceScorer().score("the of and", [ANSWER])
        assert empty.bm25 == empty.coverage == 0.0
        assert empty.score == pytest.approx(0.5 * 0.40 + 1.0 * 0.40 + 0.5 * 0.40)


class TestOneReadOfTheText:
    """The candidates' term counts and sentence terms come from one read of each text, the same as reading the whole
    text and each sentence apart."""

    TEXT = "Orvel Quay opened in 1931.  Its pier-head crane lifts 40 tonnes!\nTolls rose twice; ferries kept running."
    SPANS = ((0, 26), (28, 64), (65, 81), (83, 104))

    def test_counts_and_sentence_terms_match_the_whole_and_the_parts(self):
        counts, sentence_terms = _text_terms(self.TEXT, self.SPANS)
        assert counts == analyze(self.TEXT).counts
        assert sentence_terms == tuple(frozenset(terms(self.TEXT[start:end])) for start, end in self.SPANS)

    @pytest.mark.parametrize(
        "text, spans",
        [
            ("Orvel Quay opened in 1931. Its crane lifts.", ((0, 8), (9, 43))),  # a cut inside "Quay"
            ("Zürich-Nord opened. The crane lifts.", ((0, 19), (20, 36))),  # not ASCII
            ("Orvel opened. The crane lifts.", ((14, 30), (0, 13))),  # out of order
        ],
    )
    def test_a_cut_inside_a_word_or_a_text_it_cannot_read_in_pieces_is_read_whole(self, text, spans):
        counts, sentence_terms = _text_terms(text, spans)
        assert counts == analyze(text).counts
        assert sentence_terms == tuple(frozenset(terms(text[start:end])) for start, end in spans)

    def test_scores_are_those_of_the_texts_read_whole(self):
        candidate = EvidenceCandidate(chunk_id="quay", text=self.TEXT, title="Orvel Quay", cosine=0.3)
        sentences = {"quay": [(start, end, 0.1 * number) for number, (start, end) in enumerate(self.SPANS, 1)]}
        (features,) = EvidenceScorer().score("How much does the Orvel Quay crane lift?", [candidate], None, sentences)
        assert features.best_span == (28, 64) and features.sentences[1] == (28, 64, 0.2)


class TestStoredSentenceTerms:
    """A candidate that carries the sentence terms ingestion stored is scored from them, not analysed again, with the
    same features; one whose record does not cover the sentences scored is analysed as before."""

    TEXT = "Orvel Quay opened in 1931.  Its pier-head crane lifts 40 tonnes!\nTolls rose twice; ferries kept running."
    SPANS = ((0, 26), (28, 64), (65, 81), (83, 104))
    QUESTION = "How much does the Orvel Quay crane lift?"

    def candidate(self, record: str | None) -> EvidenceCandidate:
        return EvidenceCandidate(
            chunk_id="quay",
            text=self.TEXT,
            title="Orvel Quay",
            cosine=0.3,
            sentence_spans=self.SPANS,
            sentence_terms=record,
        )

    def test_stored_terms_are_read_with_the_same_features(self, monkeypatch):
        sentences = {"quay": [(start, end, 0.1 * number) for number, (start, end) in enumerate(self.SPANS[1:], 2)]}
        expected = EvidenceScorer().score(self.QUESTION, [self.candidate(None)], None, sentences)
        without_vectors = EvidenceScorer().score(self.QUESTION, [self.candidate(None)])
        record = sentence_terms_record(self.TEXT, self.SPANS)

        def no_analysis(*_args, **_kwargs):
            raise AssertionError("analysed a chunk whose sentence terms were stored")

        monkeypatch.setattr(evidence_scorer, "_text_terms", no_analysis)
        assert EvidenceScorer().score(self.QUESTION, [self.candidate(record)], None, sentences) == expected
        assert EvidenceScorer().score(self.QUESTION, [self.candidate(record)]) == without_vectors

    def test_a_record_not_covering_the_scored_sentences_is_not_read(self):
        record = sentence_terms_record(self.TEXT, self.SPANS)
        sentences = {"quay": [(0, 64, 0.4)]}  # a stored vector for a sentence the record does not hold
        (features,) = EvidenceScorer().score(self.QUESTION, [self.candidate(record)], None, sentences)
        assert features.best_span == (0, 64)
        assert features == EvidenceScorer().score(self.QUESTION, [self.candidate(None)], None, sentences)[0]
