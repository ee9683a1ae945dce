"""The answer confidence's evidence features: whether the chosen sentence answers the question and the span is its
answer (invented names throughout)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from components.generation.answer_evidence import EVIDENCE_FEATURES, EVIDENCE_GROUPS, KINDS, evidence_features
from components.generation.question_analysis import analyze_question

QUESTION = "Who bought the Kestrel Lantern Works?"
SENTENCE = "In 1911 the Kestrel Lantern Works was acquired by Orvelle Dunmark, a shipowner from Tarrow."
TOP = [
    (1.4, SENTENCE),
    (1.1, "Orvelle Dunmark also ran a ferry line."),
    (0.9, "Halvard Quince repaired the Kestrel lamps in 1920."),
    (0.5, "The works closed in 1950."),
]


class FakeModel:
    """Vectors that make "buy" and "acquire" near and the span near the question, so the model-read features can be
    checked without loading the embedding model."""

    vectors = {
        "buy": [1.0, 0.0, 0.0],
        "acquire": [0.8, 0.6, 0.0],
        "Orvelle Dunmark": [0.0, 0.6, 0.8],
        QUESTION: [0.0, 0.0, 1.0],
        SENTENCE: [0.0, 0.6, 0.8],
    }

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([self.vectors.get(text, [0.6, 0.8, 0.0]) for text in texts])

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def features(question: str = QUESTION, **changes: object) -> dict[str, float]:
    analysis = analyze_question(question)
    arguments: dict = {
        "question": question,
        "part": analysis.parts[0],
        "sentence": SENTENCE,
        "span": "Orvelle Dunmark",
        "top": TOP,
        "scores": [0.8, 0.4, 0.2],
        "rank": 0,
        "question_terms": analysis.question_terms,
        "model": None,
    }
    arguments.update(changes)
    return evidence_features(**arguments)


def test_every_evidence_feature_is_computed_and_grouped_once() -> None:
    assert set(features()) == set(EVIDENCE_FEATURES)
    assert len(EVIDENCE_FEATURES) == len(set(EVIDENCE_FEATURES)) == sum(map(len, EVIDENCE_GROUPS.values()))


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Who bought the Kestrel Lantern Works?", "who"),
        ("When did Orvelle Dunmark buy the works?", "when"),
        ("How many lamps did the works make?", "count"),
        ("Why did the works close?", None),
    ],
)
def test_the_asked_kind_is_one_flag(question: str, kind: str | None) -> None:
    flags = {name: features(question)[f"kind_{name}"] for name in KINDS}
    assert flags == {name: float(name == kind) for name in KINDS}


class TestWindow:
    def test_the_questions_terms_near_the_span_count(self) -> None:
        near = features()["window_share"]
        # The same span at the far end of a long sentence, away from the question's words.
        far_sentence = "The Kestrel Lantern Works was acquired in 1911, many years later, as the town recalls, by " + (
            "a shipowner who had sailed for decades along the northern coast and who was called Orvelle Dunmark."
        )
        far = features(sentence=far_sentence)["window_share"]
        assert near > far >= 0.0

    def test_a_span_the_sentence_does_not_hold_has_no_window(self) -> None:
        assert features(span="Halvard Quince")["window_share"] == 0.0

    def test_the_questions_verb_met_by_lemma(self) -> None:
        sentence = "In 1911 Orvelle Dunmark bought the Kestrel Lantern Works."
        assert features(sentence=sentence)["verb_match"] == 1.0

    def test_the_questions_verb_met_by_meaning_only_with_a_model(self) -> None:
        assert features()["verb_match"] == 0.0  # "bought" never meets "acquired" by lemma
        assert features(model=FakeModel())["verb_match"] == pytest.approx(0.8)

    def test_a_span_hanging_from_a_word_of_the_question(self) -> None:
        # "Dunmark" <- "of" <- "works": a word of the question two steps up the parse.
        governed = features(sentence="The works of Orvelle Dunmark made lamps.")["span_governed"]
        assert governed == pytest.approx(1 / 2)
        # "Works" <- "ran", the root: no word of the question above the span.
        sentence = "Orvelle Dunmark ran the Kestrel Lantern Works."
        assert features(sentence=sentence, span="Kestrel Lantern Works")["span_governed"] == 0.0

    def test_no_sentence_no_window(self) -> None:
        out = features(sentence="")
        assert out["window_share"] == out["verb_match"] == out["span_governed"] == 0.0


class TestSpread:
    def test_agreement_of_the_best_sentences_on_the_span(self) -> None:
        out = features()
        assert out["span_support"] == pytest.approx(2 / 4)
        assert out["span_weight"] == pytest.approx((1.4 + 1.1) / (1.4 + 1.1 + 0.9 + 0.5))

    def test_other_names_of_the_asked_kind_are_rivals(self) -> None:
        assert features()["rivals"] == pytest.approx(math.log1p(1))  # Halvard Quince
        alone = [(1.4, SENTENCE), (1.1, "Orvelle Dunmark also ran a ferry line.")]
        assert features(top=alone)["rivals"] == 0.0

    def test_a_part_asking_for_no_name_has_no_rivals(self) -> None:
        assert features("Why did the Kestrel Lantern Works close?", span="the lamps")["rivals"] == 0.0


class TestRetrieval:
    def test_the_top_chunks_lead_and_the_cited_chunks_share_of_it(self) -> None:
        out = features(rank=1)
        assert out["retrieval_gap"] == pytest.approx(0.5)
        assert out["retrieval_ratio"] == pytest.approx(0.5)

    def test_no_scores_no_retrieval_features(self) -> None:
        out = features(scores=[])
        assert out["retrieval_gap"] == out["retrieval_ratio"] == 0.0


class TestMeaning:
    def test_the_spans_cosine_and_the_sentences_drop_without_it(self) -> None:
        out = features(model=FakeModel())
        assert out["span_cosine"] == pytest.approx(0.8)
        # With the span the sentence reads 0.8 like the question; without it, 0.0.
        assert out["cosine_drop"] == pytest.approx(0.8)

    def test_without_a_model_they_are_zero(self) -> None:
        out = features()
        assert out["span_cosine"] == out["cosine_drop"] == 0.0
