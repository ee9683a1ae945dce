"""The answer's sentence and span weights read from a versioned file, and its rule families switched off one by one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from haystack import Document

from components.generation.answer_scoring import (
    DEFAULT_SCORING_PATH,
    GROUPS,
    RULE_FAMILIES,
    AnswerScoring,
    ScoringModelError,
)
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator

QUESTION = "When did Orvelle Dunmark open the Kestrel foundry?"
DOCUMENTS = [
    Document(content="Orvelle Dunmark first saw the Kestrel foundry in 1870.", meta={"source_title": "Ostery"}),
    Document(content="Orvelle Dunmark opened the Kestrel foundry in 1874.", meta={"source_title": "Kestrel foundry"}),
]


def scoring_file(tmp_path: Path, **groups: dict[str, float]) -> Path:
    data = AnswerScoring.load().to_dict()
    data.update(groups)
    path = tmp_path / "answer_scoring.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_packaged_file_names_a_weight_for_every_feature() -> None:
    data = json.loads(DEFAULT_SCORING_PATH.read_text(encoding="utf-8"))
    assert data["version"] == 1 and "command" in data and "fitted_from" in data
    for group, features in GROUPS.items():
        assert set(data[group]) == set(features)
    scoring = AnswerScoring.load()
    assert scoring.sentence_score({"share": 1.0}) == pytest.approx(data["sentence"]["share"])


def test_the_generator_chooses_its_sentence_by_the_file_it_is_given(tmp_path: Path) -> None:
    default = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0)
    assert default.run(query=QUESTION, documents=DOCUMENTS)["short_answer"] == "1874"
    # Weights that read nothing but the chunk's rank choose the first chunk's sentence.
    rank_only = {name: 0.0 for name in GROUPS["sentence"]} | {"top_rank": 10.0}
    path = scoring_file(tmp_path, sentence=rank_only)
    generator = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0, scoring_model=str(path))
    assert generator.run(query=QUESTION, documents=DOCUMENTS)["short_answer"] == "1870"
    assert generator.to_dict()["init_parameters"]["scoring_model"] == str(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"version": 99}, "version 99"),
        ({"sentence": {"share": 1.0, "loudness": 2.0}}, "unknown features"),
        ({"entity_span": None}, "lacks its 'entity_span' weights"),
        ({"phrase_span": {"distance": "far"}}, "not numbers"),
    ],
)
def test_a_file_it_cannot_use_is_one_clear_error(tmp_path: Path, change: dict, message: str) -> None:
    data = AnswerScoring.load().to_dict() | change
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ScoringModelError, match=message):
        ExtractiveAnswerGenerator(embedding_model="", scoring_model=str(path))


def test_a_file_from_before_a_family_was_deleted_says_to_fit_it_again(tmp_path: Path) -> None:
    # `partner` was the weight of the deleted "besides X" family; a file fitted before still names it.
    data = AnswerScoring.load().to_dict()
    data["phrase_span"] = {**data["phrase_span"], "partner": -10.0}
    path = tmp_path / "older.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ScoringModelError) as raised:
        ExtractiveAnswerGenerator(embedding_model="", scoring_model=str(path))
    message = str(raised.value)
    assert "'phrase_span' weights name unknown features: ['partner']" in message
    assert "fit the file again with `research fit scoring`" in message


def test_a_missing_file_and_an_unknown_family_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ScoringModelError, match="no scoring file"):
        AnswerScoring.load(tmp_path / "absent.json")
    with pytest.raises(ScoringModelError, match="unknown rule families: loudness"):
        ExtractiveAnswerGenerator(embedding_model="", rules_off=["loudness"])


def test_switching_a_family_off_changes_what_it_decides() -> None:
    documents = [
        Document(content="The Kestrel foundry was founded in 1874 by Orvelle Dunmark.", meta={"source_title": "K"}),
        Document(content="Brambleford Mill was founded in 1902 by Wendolin Pratt.", meta={"source_title": "B"}),
    ]
    question = "Were the Kestrel foundry and Brambleford Mill both founded in the 19th century?"
    every_rule = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0)
    assert every_rule.run(query=question, documents=documents)["parts"][0]["short_answer"] == "no"
    # Without the comparison / yes-no verdict, nothing answers "no": the sentences are the answer.
    no_verdict = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0, rules_off=["verdict"])
    assert no_verdict.run(query=question, documents=documents)["parts"][0]["short_answer"] != "no"


def test_a_family_switched_off_sets_its_features_weights_to_nothing() -> None:
    scoring = AnswerScoring.load()
    assert scoring.weight("sentence", "off_subject") != 0
    off = scoring.without(["off_subject"])
    assert off.weight("sentence", "off_subject") == 0 and not off.on("off_subject") and scoring.on("off_subject")


def test_the_generator_serialises_the_families_it_switched_off() -> None:
    generator = ExtractiveAnswerGenerator(embedding_model="", rules_off=["verdict", "chain"])
    data = generator.to_dict()
    assert data["init_parameters"]["rules_off"] == ["chain", "verdict"]
    again = ExtractiveAnswerGenerator.from_dict(data)
    assert again.scoring.off == frozenset({"chain", "verdict"})


def test_every_family_has_a_description() -> None:
    assert all(isinstance(text, str) and text for text in RULE_FAMILIES.values())


def test_the_research_generator_hands_its_scoring_file_to_the_offline_answer(tmp_path: Path) -> None:
    from components.generation import ResearchGenerator

    rank_only = {name: 0.0 for name in GROUPS["sentence"]} | {"top_rank": 10.0}
    path = scoring_file(tmp_path, sentence=rank_only)
    generator = ResearchGenerator(generator="extractive", scoring_model=str(path), confidence_threshold=0.0)
    assert generator.to_dict()["init_parameters"]["scoring_model"] == str(path)
    assert generator._extractive.scoring_model == str(path)
