"""The answer confidence's evidence features: whether the chosen sentence answers the question and the span is its
answer (invented names throughout)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from components.generation.answer_evidence import EVIDENCE_FEATURES, EVIDENCE_GROUPS, evidence_features
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
    """Vectors that make the span near the question, so the model-read features can be checked without loading the
    embedding model."""

    vectors = {
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
        "sentence": SENTENCE,
        "span": "Orvelle Dunmark",
        "top": TOP,
        "scores": [0.8, 0.4, 0.2],
        "question_terms": analysis.question_terms,
        "model": None,
    }
    arguments.update(changes)
    return evidence_features(**arguments)


def test_every_evidence_feature_is_computed_and_grouped_once() -> None:
    assert set(features()) == set(EVIDENCE_FEATURES)
    assert len(EVIDENCE_FEATURES) == len(set(EVIDENCE_FEATURES)) == sum(map(len, EVIDENCE_GROUPS.values()))


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

    def test_no_sentence_no_window(self) -> None:
        assert features(sentence="")["window_share"] == 0.0


class TestSpread:
    def test_agreement_of_the_best_sentences_on_the_span(self) -> None:
        out = features()
        assert out["span_support"] == pytest.approx(2 / 4)
        assert out["span_weight"] == pytest.approx((1.4 + 1.1) / (1.4 + 1.1 + 0.9 + 0.5))

    def test_a_sentence_holds_the_span_only_as_whole_words(self) -> None:
        top = [(1.0, "Ian Corran sold it."), (1.0, "The Italian yard built it."), (1.0, "It cost 500 crowns.")]
        assert features(span="Ian", top=top)["span_support"] == pytest.approx(1 / 3)
        assert features(span="50", top=top)["span_support"] == 0.0
        assert features(span="500 crowns", top=top)["span_support"] == pytest.approx(1 / 3)

    def test_a_score_that_is_not_finite_weighs_nothing(self) -> None:
        top = [(float("nan"), SENTENCE), (float("inf"), "Nothing here."), (1.0, "Orvelle Dunmark sailed.")]
        out = features(top=top)
        assert out["span_weight"] == 1.0 and out["span_support"] == pytest.approx(2 / 3)

    def test_no_span_no_agreement(self) -> None:
        out = features(span="")
        assert out["span_support"] == out["span_weight"] == 0.0


class TestList:
    def test_a_span_that_joins_several_items_is_a_list(self) -> None:
        assert features(span="Orvelle Dunmark and Halvard Quince")["span_list"] == 1.0
        assert features(span="Orvelle Dunmark or Halvard Quince")["span_list"] == 1.0

    def test_one_name_or_a_date_is_not_a_list(self) -> None:
        assert features()["span_list"] == 0.0
        assert features(span="March 4, 1911")["span_list"] == 0.0
        assert features(span="Andover")["span_list"] == 0.0


class TestChoice:
    def test_the_best_scored_sentence_is_marked(self) -> None:
        assert features()["sentence_best"] == 1.0  # SENTENCE leads TOP

    def test_a_sentence_the_kind_bonus_chose_over_a_better_scored_one_is_not(self) -> None:
        assert features(top=[(1.6, "Halvard Quince repaired the Kestrel lamps."), *TOP])["sentence_best"] == 0.0

    def test_no_sentence_or_no_ranking_is_not_the_best(self) -> None:
        assert features(sentence="")["sentence_best"] == 0.0
        assert features(top=[])["sentence_best"] == 0.0


class TestLength:
    def test_the_sentences_words_counted_on_a_log_scale(self) -> None:
        assert features()["sentence_words"] == pytest.approx(math.log1p(15))
        assert features(sentence="Orvelle Dunmark bought it.")["sentence_words"] == pytest.approx(math.log1p(4))

    def test_no_sentence_no_length(self) -> None:
        assert features(sentence="")["sentence_words"] == 0.0


class TestRetrieval:
    def test_the_top_chunks_lead_over_the_next(self) -> None:
        assert features()["retrieval_gap"] == pytest.approx(0.5)
        assert features(scores=[0.8, 0.8])["retrieval_gap"] == 0.0
        assert features(scores=[0.8])["retrieval_gap"] == 1.0  # a lone chunk leads by all of it

    def test_no_scores_no_retrieval_gap(self) -> None:
        assert features(scores=[])["retrieval_gap"] == 0.0

    @pytest.mark.parametrize("bad", [float("nan"), float("inf")])
    def test_scores_that_are_not_finite_give_no_gap(self, bad: float) -> None:
        assert features(scores=[bad, 0.4])["retrieval_gap"] == 0.0
        assert features(scores=[0.8, bad])["retrieval_gap"] == 0.0


class TestMeaning:
    def test_the_spans_cosine_and_the_sentences_drop_without_it(self) -> None:
        out = features(model=FakeModel())
        assert out["span_cosine"] == pytest.approx(0.8)
        # With the span the sentence reads 0.8 like the question; without it, 0.0.
        assert out["cosine_drop"] == pytest.approx(0.8)

    def test_the_sentence_without_the_span_is_cut_at_the_span_itself(self) -> None:
        class Recording(FakeModel):
            texts: list[str] = []

            def embed(self, texts: list[str]) -> np.ndarray:
                self.texts.extend(texts)
                return super().embed(texts)

        # Lower-casing "İ" adds a character, which once shifted the cut; "Ian" inside "Italian" is not the span.
        sentence = "The İzmir yard of the Italian firm was sold to Ian Corran."
        model = Recording()
        features(sentence=sentence, span="Ian Corran", model=model)
        assert model.texts[-1] == "The İzmir yard of the Italian firm was sold to ."
        model.texts.clear()
        features(sentence=sentence, span="Ian", model=model)
        assert model.texts[-1] == "The İzmir yard of the Italian firm was sold to  Corran."

    def test_without_a_model_they_are_zero(self) -> None:
        out = features()
        assert out["span_cosine"] == out["cosine_drop"] == 0.0


def test_the_packaged_model_reads_every_evidence_feature() -> None:
    from components.generation.answer_confidence import AnswerConfidence

    model = AnswerConfidence.load()
    assert set(EVIDENCE_FEATURES) <= set(model.features)
    assert all(model.coef[model.features.index(name)] != 0 for name in EVIDENCE_FEATURES)


def test_the_generator_rates_its_short_answer_with_the_evidence_features() -> None:
    from haystack import Document

    from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator

    documents = [
        Document(content=SENTENCE + " It made ship lamps.", score=0.9, meta={"source_title": "Kestrel Lantern Works"}),
        Document(content="Halvard Quince repaired lamps in Tarrow.", score=0.3, meta={"source_title": "Tarrow"}),
    ]
    generator = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0)
    (part,) = generator.run(query=QUESTION, documents=documents)["parts"]
    assert part["short_answer"] == "Orvelle Dunmark"
    assert part["features"]["retrieval_gap"] == pytest.approx((0.9 - 0.3) / 0.9)
    assert part["features"]["window_share"] > 0 and part["features"]["span_support"] > 0
    assert part["features"]["sentence_best"] == 1.0 and part["features"]["sentence_words"] > 0
    assert part["features"]["span_generic"] == part["features"]["span_bracketed"] == 0.0


def test_a_chunk_without_a_retrieval_score_gives_no_gap() -> None:
    from haystack import Document

    from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator

    # An unscored second chunk once read as a score of 0, so the top chunk led by all of it (gap 1).
    documents = [
        Document(content=SENTENCE + " It made ship lamps.", score=0.9, meta={"source_title": "Kestrel Lantern Works"}),
        Document(content="Halvard Quince repaired lamps in Tarrow.", meta={"source_title": "Tarrow"}),
    ]
    generator = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0)
    (part,) = generator.run(query=QUESTION, documents=documents)["parts"]
    assert part["short_answer"] == "Orvelle Dunmark" and part["features"]["retrieval_gap"] == 0.0
    assert features(scores=[None, 0.4])["retrieval_gap"] == features(scores=[0.8, None])["retrieval_gap"] == 0.0


def test_the_same_answer_rated_again_costs_no_forward_pass() -> None:
    from haystack import Document

    from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator

    class Counting(FakeModel):
        def __init__(self) -> None:
            self.embedded: list[str] = []

        def embed(self, texts: list[str]) -> np.ndarray:
            self.embedded.extend(texts)
            return super().embed(texts)

    documents = [
        Document(content=SENTENCE + " It made ship lamps.", score=0.9, meta={"source_title": "Kestrel Lantern Works"}),
        Document(content="Halvard Quince repaired lamps in Tarrow.", score=0.3, meta={"source_title": "Tarrow"}),
    ]
    generator = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0)
    generator._model = model = Counting()
    first = generator.run(query=QUESTION, documents=documents)
    assert "Orvelle Dunmark" in model.embedded and first["parts"][0]["features"]["span_cosine"] == pytest.approx(0.8)
    model.embedded.clear()
    assert generator.run(query=QUESTION, documents=documents) == first
    assert "Orvelle Dunmark" not in model.embedded
    # Another generator keeps its own: nothing is shared across the process.
    other = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0)
    other._model = model
    assert other.run(query=QUESTION, documents=documents) == first and "Orvelle Dunmark" in model.embedded


class TestSpanForm:
    """`generic`: a span that names nothing (a determiner, then common nouns) is seldom the name or value asked for;
    `bracket`: a span inside brackets is an aside of its sentence."""

    def test_a_name_is_not_generic(self) -> None:
        assert features()["span_generic"] == 0.0

    def test_a_common_noun_phrase_after_a_determiner_is_generic(self) -> None:
        assert features(span="a shipowner")["span_generic"] == 1.0

    def test_a_determiner_before_a_number_or_a_name_is_not_generic(self) -> None:
        sentence = "The works made the 4000 lamps of the Tarrow harbour."
        assert features(sentence=sentence, span="the 4000 lamps")["span_generic"] == 0.0
        assert features(sentence=sentence, span="the Tarrow harbour")["span_generic"] == 0.0

    def test_a_span_the_sentence_does_not_hold_is_neither(self) -> None:
        out = features(span="the ferry line")
        assert out["span_generic"] == out["span_bracketed"] == 0.0

    def test_a_span_inside_brackets_is_bracketed(self) -> None:
        sentence = "Orvelle Dunmark moved to Vessby (now part of Tarrow), where he bought the works."
        assert features(sentence=sentence, span="Tarrow")["span_bracketed"] == 1.0
        assert features(sentence=sentence, span="Vessby")["span_bracketed"] == 0.0
        assert features(sentence=sentence, span="the works")["span_bracketed"] == 0.0

    def test_a_span_found_whatever_its_case_is_read_where_it_stands_in_a_non_ascii_sentence(self) -> None:
        # "İ" lower-cases to two characters: an offset found in the lower-cased sentence lies past the span.
        sentence = "İpek İnce and İlker İz sold the mill to Tarrow in 1890."
        assert features(sentence=sentence, span="The mill")["span_generic"] == 1.0
