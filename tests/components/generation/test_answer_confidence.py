"""The answer confidence: its features, the fitted file, and the threshold that decides whether a headline is shown."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from haystack import Document

from components.generation.answer_confidence import (
    DEFAULT_MODEL_PATH,
    FAR,
    FEATURES,
    FOUND_FEATURES,
    MODEL_VERSION,
    VERDICT_KINDS,
    AnswerConfidence,
    ConfidenceModelError,
    fit,
    part_features,
)
from components.generation.answer_wording import UNSURE_PREFIX
from components.generation.citation_checker import CitationChecker
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator

CHUNKS = [
    ("Orvelle Dunmark founded the Kestrel Lantern Works in 1874.", "kb"),
    ("The Kestrel Lantern Works, founded by Orvelle Dunmark, made ship lamps.", "graph"),
    ("Lamps were sold in many harbours.", "kb"),
]


def features(**changes: object) -> dict[str, float]:
    arguments: dict = {
        "score": 1.2,
        "runner_up": 0.7,
        "cosine": 0.6,
        "rank": 0,
        "kind_match": 1.0,
        "alternatives": 0,
        "sentence": CHUNKS[0][0],
        "found_by": "entity",
        "span": "Orvelle Dunmark",
        "chunks": CHUNKS,
        "labels": ("PERSON", "ORG"),
        "asks_phrase": False,
        "parts": 1,
        "question_terms": frozenset({"found", "kestrel", "lantern", "work"}),
    }
    arguments.update(changes)
    return part_features(**arguments)


class TestFeatures:
    def test_every_feature_is_computed(self) -> None:
        assert set(features()) == set(FOUND_FEATURES)

    def test_margin_is_the_lead_over_the_runner_up_and_full_when_alone(self) -> None:
        assert features()["margin"] == pytest.approx(0.5)
        assert features(runner_up=None)["margin"] == 2.0

    def test_agreement_counts_the_top_chunks_that_name_the_span(self) -> None:
        assert features()["agreement"] == pytest.approx(2 / 3)
        assert features(span="Wendolin Pratt")["agreement"] == 0.0

    def test_graph_support_is_a_graph_chunk_naming_the_span(self) -> None:
        assert features()["graph_support"] == 1.0
        assert features(chunks=[CHUNKS[0]])["graph_support"] == 0.0

    def test_how_it_was_found_is_one_hot(self) -> None:
        found = features(found_by="chain")
        assert found["found_chain"] == 1.0
        assert sum(found[f"found_{how}"] for how in ("entity", "role", "phrase", "chain")) == 1.0

    def test_unknown_way_of_finding_is_refused(self) -> None:
        with pytest.raises(ValueError, match="found_by"):
            features(found_by="guess")

    def test_what_the_part_asks(self) -> None:
        assert features()["asks_name"] == 1.0 and features()["asks_value"] == 0.0
        assert features(labels=("DATE",))["asks_value"] == 1.0
        phrase = features(labels=(), asks_phrase=True)
        assert phrase["asks_name"] == 0.0 and phrase["asks_phrase"] == 1.0

    def test_the_sentences_share_of_the_question_and_the_spans_distance_from_it(self) -> None:
        # "Orvelle Dunmark founded the Kestrel ...": "founded" is the next word after the span.
        assert features()["distance"] == pytest.approx(math.log1p(1))
        assert features()["share"] == 1.0
        assert features(sentence="Orvelle Dunmark was born in 1840.")["distance"] == pytest.approx(math.log1p(FAR))
        assert features(sentence="Lamps were sold.")["share"] == 0.0

    def test_other_entities_of_the_asked_kind_count_against_it(self) -> None:
        assert features(alternatives=3)["alternatives"] > features()["alternatives"] == 0.0

    def test_a_span_repeating_the_question_is_marked(self) -> None:
        assert features()["span_asked"] == 0.0
        assert features(span="Kestrel Lantern")["span_asked"] == 1.0


def model_file(tmp_path: Path, intercept: float, threshold: float | str, **changes: object) -> Path:
    data: dict = {
        "version": MODEL_VERSION,
        "features": list(FEATURES),
        "mean": [0.0] * len(FEATURES),
        "scale": [1.0] * len(FEATURES),
        "coef": [0.0] * len(FEATURES),
        "intercept": intercept,
        "threshold": threshold,
    }
    data.update(changes)
    path = tmp_path / f"model-{intercept}-{len(changes)}-{sorted(changes)}.json"
    path.write_text(json.dumps(data))
    return path


class TestModelFile:
    def test_the_packaged_model_loads_and_rates_between_0_and_1(self) -> None:
        model = AnswerConfidence.load()
        assert model.features and set(model.features) <= set(FEATURES)
        assert 0.0 < model.probability(features()) < 1.0
        assert 0.0 <= model.threshold <= 1.0
        data = json.loads(DEFAULT_MODEL_PATH.read_text())
        assert data["version"] == MODEL_VERSION and "command" in data and "fitted_from" in data

    def test_probability_is_the_logistic_of_the_standardised_features(self, tmp_path: Path) -> None:
        coef = [0.0] * len(FEATURES)
        coef[FEATURES.index("cosine")] = 2.0
        model = AnswerConfidence.load(model_file(tmp_path, 0.0, 0.5, coef=coef))
        assert model.probability({"cosine": 0.0}) == pytest.approx(0.5)
        assert model.probability({"cosine": 1.0}) == pytest.approx(1 / (1 + 2.718281828**-2), rel=1e-6)

    def test_an_absent_feature_reads_as_its_mean_in_the_model_and_in_the_fit(self, tmp_path: Path) -> None:
        # The span model's features are absent for a span it does not read (a chain, a verdict): they must neither
        # raise nor lower the confidence, and the fit must read them as it will be read.
        coef = [0.0] * len(FEATURES)
        coef[FEATURES.index("span_probability")] = 2.0
        mean = [0.0] * len(FEATURES)
        mean[FEATURES.index("span_probability")] = 0.6
        model = AnswerConfidence.load(model_file(tmp_path, 0.0, 0.5, coef=coef, mean=mean))
        assert model.probability({}) == pytest.approx(0.5)
        rows = [{"span_probability": 0.9}, {"span_probability": 0.1}, {}, {"span_probability": 0.8}, {}]
        fitted = fit(rows, [True, False, True, True, False], threshold=0.5, features=("span_probability",))
        assert fitted.mean[0] == pytest.approx(0.6)  # the mean of the rows that hold it
        assert fitted.probability({}) == pytest.approx(1 / (1 + math.exp(-fitted.intercept)))

    @pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
    def test_a_feature_that_is_not_a_finite_number_reads_as_its_mean(self, tmp_path: Path, value: float) -> None:
        coef = [0.0] * len(FEATURES)
        coef[FEATURES.index("retrieval_gap")] = 3.0
        mean = [0.0] * len(FEATURES)
        mean[FEATURES.index("retrieval_gap")] = 0.4
        model = AnswerConfidence.load(model_file(tmp_path, -1.0, 0.5, coef=coef, mean=mean))
        # NaN once clamped the logit to its top and rated the headline sure (1.0).
        assert model.probability({"retrieval_gap": value}) == pytest.approx(1 / (1 + 2.718281828**1.0), rel=1e-6)

    @pytest.mark.parametrize(
        ("changes", "message"),
        [
            ({"version": 99}, "version"),
            ({"mean": [float("nan")] * len(FEATURES)}, "not finite"),
            ({"coef": [float("inf")] * len(FEATURES)}, "not finite"),
            ({"coef": [1.0]}, "do not match"),
            ({"features": ["colour_of_the_sky"], "mean": [0], "scale": [1], "coef": [1]}, "unknown features"),
            ({"threshold": "high"}, "mistypes"),
        ],
    )
    def test_a_file_it_cannot_use_is_one_clear_error(self, tmp_path: Path, changes: dict, message: str) -> None:
        with pytest.raises(ConfidenceModelError, match=message):
            AnswerConfidence.load(model_file(tmp_path, 0.0, changes.pop("threshold", 0.5), **changes))

    def test_a_missing_file_is_a_clear_error(self, tmp_path: Path) -> None:
        with pytest.raises(ConfidenceModelError, match="no confidence model"):
            AnswerConfidence.load(tmp_path / "absent.json")


class TestFit:
    def test_fitted_model_rates_right_like_rows_higher(self) -> None:
        rows = [features(cosine=0.8, kind_match=1.0)] * 6 + [features(cosine=0.2, kind_match=0.0)] * 6
        labels = [True] * 5 + [False] + [False] * 5 + [True]
        model = fit(rows, labels, threshold=0.6, meta={"command": "test"})
        assert model.probability(features(cosine=0.8)) > 0.6 > model.probability(features(cosine=0.2, kind_match=0))
        again = AnswerConfidence.from_dict(json.loads(json.dumps(model.to_dict())))
        assert again.probability(features()) == pytest.approx(model.probability(features()))
        assert again.threshold == 0.6 and again.meta["command"] == "test"

    def test_one_label_only_cannot_be_fitted(self) -> None:
        with pytest.raises(ValueError, match="both right and wrong"):
            fit([features()] * 3, [True] * 3, threshold=0.5)


DOCUMENTS = [
    Document(
        content="Orvelle Dunmark founded the Kestrel Lantern Works in 1874. The works made ship lamps.",
        meta={"source_title": "Kestrel Lantern Works", "source_type": "kb"},
    )
]
QUESTION = "Who founded the Kestrel Lantern Works?"


class TestThreshold:
    def test_a_part_above_the_threshold_leads_the_answer(self, tmp_path: Path) -> None:
        generator = ExtractiveAnswerGenerator(embedding_model="", confidence_model=str(model_file(tmp_path, 2.0, 0.5)))
        out = generator.run(query=QUESTION, documents=DOCUMENTS)
        assert out["short_answer"] == "Orvelle Dunmark"
        assert out["replies"][0].startswith("Orvelle Dunmark [1].")
        assert out["short_answer_confidence"] == pytest.approx(0.8808, abs=1e-3)
        (part,) = out["parts"]
        assert part["sure"] and part["short_answer"] == "Orvelle Dunmark" and part["question"].startswith("Who")

    def test_a_part_below_the_threshold_gets_no_headline_and_says_so(self, tmp_path: Path) -> None:
        generator = ExtractiveAnswerGenerator(embedding_model="", confidence_model=str(model_file(tmp_path, -2.0, 0.5)))
        out = generator.run(query=QUESTION, documents=DOCUMENTS)
        reply = out["replies"][0]
        assert out["short_answer"] == ""
        # It opens with its best cited sentence, then says plainly it is not sure of the short answer.
        assert reply.startswith("Orvelle Dunmark founded the Kestrel Lantern Works in 1874 [1]. " + UNSURE_PREFIX)
        assert out["short_answer_confidence"] == pytest.approx(0.1192, abs=1e-3)
        (part,) = out["parts"]
        assert not part["sure"] and part["short_answer"] == "Orvelle Dunmark"
        # The note claims nothing, so the citation check does not flag it.
        checked = CitationChecker().run(answer=reply, documents=DOCUMENTS)["sentences"]
        note = next(sentence for sentence in checked if sentence["text"].startswith(UNSURE_PREFIX))
        assert note["abstains"] and note["supported"]

    def test_the_threshold_given_overrides_the_files(self, tmp_path: Path) -> None:
        path = str(model_file(tmp_path, -2.0, 0.5))
        generator = ExtractiveAnswerGenerator(embedding_model="", confidence_model=path, confidence_threshold=0.1)
        assert generator.run(query=QUESTION, documents=DOCUMENTS)["short_answer"] == "Orvelle Dunmark"
        params = generator.to_dict()["init_parameters"]
        assert params["confidence_model"] == path and params["confidence_threshold"] == 0.1
        again = ExtractiveAnswerGenerator.from_dict(generator.to_dict())
        assert again.threshold == 0.1

    def test_an_open_question_gets_its_sentences_with_no_unsure_cue_and_no_confidence(self, tmp_path: Path) -> None:
        documents = [
            Document(
                content="Orvelle Dunmark founded the Kestrel Lantern Works because the harbour of Tarrow Quay needed "
                "ship lamps. The works made ship lamps.",
                meta={"source_title": "Kestrel Lantern Works", "source_type": "kb"},
            )
        ]
        generator = ExtractiveAnswerGenerator(embedding_model="", confidence_model=str(model_file(tmp_path, -2.0, 0.5)))
        for question in ("Why did Orvelle Dunmark found the Kestrel Lantern Works?", "Tell me about Kestrel Lantern"):
            out = generator.run(query=question, documents=documents)
            reply = out["replies"][0]
            assert reply.startswith("Orvelle Dunmark founded the Kestrel Lantern Works because") and "[1]" in reply
            assert UNSURE_PREFIX not in reply
            # Sentences were chosen but no part has a short answer: no confidence, not "not sure, 0%".
            assert out["short_answer"] == "" and out["short_answer_confidence"] is None
            (part,) = out["parts"]
            assert part["short_answer_confidence"] is None and not part["sure"]

    def test_no_answer_has_no_confidence(self) -> None:
        out = ExtractiveAnswerGenerator(embedding_model="").run(query=QUESTION, documents=[])
        assert out["short_answer_confidence"] is None and out["parts"] == []

    def test_a_threshold_out_of_range_is_refused(self) -> None:
        with pytest.raises(ValueError, match="confidence_threshold"):
            ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=1.5)


VERDICT_DOCUMENTS = [
    Document(
        id="velvet",
        content="Velvet Harbour is a rock band formed in Seattle in 1997. Its first album sold well.",
        meta={"source_title": "Velvet Harbour"},
        score=0.6,
    ),
    Document(
        id="copper",
        content="Copper Lantern is a folk band formed in Leeds in 2004. The band toured Japan twice.",
        meta={"source_title": "Copper Lantern"},
        score=0.5,
    ),
]
CHOICE_QUESTION = "Which band was formed first, Velvet Harbour or Copper Lantern?"
BOTH_QUESTION = "Are Velvet Harbour and Copper Lantern both bands?"
YES_NO_QUESTION = "Was Velvet Harbour formed before Copper Lantern?"


def verdicts(**kinds: float) -> dict:
    """A confidence file's measured verdicts: each kind's rate."""
    return {"kinds": {kind: {"counted": 10, "right": 9, "probability": rate} for kind, rate in kinds.items()}}


class TestMeasuredVerdicts:
    """A verdict of a kind `research fit verdicts` counted is as sure as its kind's rate; the logistic model rates the
    rest."""

    def test_a_verdict_takes_its_kinds_measured_rate(self, tmp_path: Path) -> None:
        path = model_file(tmp_path, -2.0, 0.5, verdicts=verdicts(choice=0.9, both=0.3, yes_no=0.7))
        generator = ExtractiveAnswerGenerator(embedding_model="", confidence_model=str(path))
        choice = generator.run(query=CHOICE_QUESTION, documents=VERDICT_DOCUMENTS)
        (part,) = choice["parts"]
        assert (part["short_answer"], part["verdict"], part["sure"]) == ("Velvet Harbour", "choice", True)
        assert choice["short_answer_confidence"] == 0.9 and choice["replies"][0].startswith("Velvet Harbour [1].")
        both = generator.run(query=BOTH_QUESTION, documents=VERDICT_DOCUMENTS)
        (part,) = both["parts"]
        assert (part["short_answer"], part["verdict"], part["sure"]) == ("yes", "both", False)
        assert both["short_answer_confidence"] == 0.3 and both["short_answer"] == ""
        # An ordering of two names is read from one value of each, as a yes/no question of its own kind.
        yes = generator.run(query=YES_NO_QUESTION, documents=VERDICT_DOCUMENTS)
        (part,) = yes["parts"]
        assert (part["short_answer"], part["verdict"], part["sure"]) == ("yes", "yes_no", True)
        assert yes["short_answer_confidence"] == 0.7

    def test_a_kind_not_measured_keeps_the_models_confidence(self, tmp_path: Path) -> None:
        path = model_file(tmp_path, 2.0, 0.5, verdicts=verdicts(yes_no=0.3))
        generator = ExtractiveAnswerGenerator(embedding_model="", confidence_model=str(path))
        out = generator.run(query=CHOICE_QUESTION, documents=VERDICT_DOCUMENTS)
        assert out["short_answer"] == "Velvet Harbour"
        assert out["short_answer_confidence"] == pytest.approx(0.8808, abs=1e-3)  # the logistic of the intercept

    def test_a_span_is_no_verdict(self, tmp_path: Path) -> None:
        path = model_file(tmp_path, -2.0, 0.5, verdicts=verdicts(choice=0.95, yes_no=0.95))
        out = ExtractiveAnswerGenerator(embedding_model="", confidence_model=str(path)).run(
            query=QUESTION, documents=DOCUMENTS
        )
        (part,) = out["parts"]
        assert part["verdict"] == "" and out["short_answer_confidence"] == pytest.approx(0.1192, abs=1e-3)

    def test_the_packaged_file_measures_every_kind(self) -> None:
        model = AnswerConfidence.load()
        assert all(0.0 < model.verdict_probability(kind) < 1.0 for kind in VERDICT_KINDS)
        assert AnswerConfidence.load().verdict_probability("maybe") is None

    @pytest.mark.parametrize(
        ("value", "message"),
        [
            ([], "hold no kinds"),
            ({"kinds": {"perhaps": {"probability": 0.5}}}, "unknown kind of verdict"),
            ({"kinds": {"choice": {"probability": 1.5}}}, "no probability between 0 and 1"),
            ({"kinds": {"choice": {"counted": 3}}}, "no probability between 0 and 1"),
            ({"kinds": {"choice": {"probability": True}}}, "no probability between 0 and 1"),
        ],
    )
    def test_measured_verdicts_it_cannot_use_are_one_clear_error(self, tmp_path: Path, value, message: str) -> None:
        with pytest.raises(ConfidenceModelError, match=message):
            AnswerConfidence.load(model_file(tmp_path, 0.0, 0.5, verdicts=value))
