"""The comparison and yes/no questions written for this product over the public samples' corpora
(`tests/data/verdicts_*_corpus.jsonl`): labelled verdicts of the multi-hop kind that `research fit verdicts` counts.
None is asked of a paragraph the sample's own forty questions need, so a set and its sample share no question or
evidence. The MuSiQue corpus's set was written after the comparison rules it measures were fixed (a blind check)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.evaluation.halves import half_of, has_halves
from pipelines.evaluation.questions import load_questions

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
SAMPLES = ROOT.parent / "shared" / "data"
SETS = {"verdicts_hotpotqa_corpus": "hotpotqa_dev40", "verdicts_musique_corpus": "musique_dev40"}


@pytest.mark.parametrize("name", sorted(SETS))
def test_the_set_is_well_formed_and_split_into_halves(name: str) -> None:
    questions = load_questions(DATA / f"{name}.jsonl")
    assert len(questions) >= 40
    assert len({question["id"] for question in questions}) == len(questions)
    for question in questions:
        answer = question["answers"][0]
        # Choices name their answer among the options the question lists; yes/no questions are answered yes or no.
        assert answer in {"yes", "no"} or answer.lower() in question["question"].lower()
        assert question["gold_doc_ids"] and question["evidence"]
    assert has_halves(name)
    halves = [half_of(name, question) for question in questions]
    assert min(halves.count("tune"), halves.count("check")) >= 15
    yes_no = [question["answers"][0] for question in questions if question["answers"][0] in {"yes", "no"}]
    assert abs(yes_no.count("yes") - yes_no.count("no")) <= 2  # neither answer wins by being the common one


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_question_rests_on_paragraphs_the_samples_questions_do_not_need(name: str) -> None:
    sample = SAMPLES / SETS[name]
    if not sample.exists():
        pytest.skip(f"the {SETS[name]} sample is not in ../shared/data on this machine")
    corpus = {json.loads(line)["id"] for line in (sample / "corpus.jsonl").read_text(encoding="utf-8").splitlines()}
    needed = {
        doc
        for line in (sample / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        for doc in json.loads(line)["gold_doc_ids"]
    }
    for question in load_questions(DATA / f"{name}.jsonl"):
        assert set(question["gold_doc_ids"]) <= corpus - needed, question["id"]
