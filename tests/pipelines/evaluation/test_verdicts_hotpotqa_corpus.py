"""The comparison and yes/no questions written for this product over the HotpotQA sample's corpus
(`tests/data/verdicts_hotpotqa_corpus.jsonl`): labelled verdicts of the multi-hop kind `research fit verdicts` counts.
None is asked of a paragraph the sample's own forty questions need, so the two sets share no question or evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.evaluation.halves import half_of, has_halves
from pipelines.evaluation.questions import load_questions

ROOT = Path(__file__).resolve().parents[3]
QUESTIONS = ROOT / "tests" / "data" / "verdicts_hotpotqa_corpus.jsonl"
SAMPLE = ROOT.parent / "shared" / "data" / "hotpotqa_dev40"
SET = QUESTIONS.stem


def test_the_set_is_well_formed_and_split_into_halves() -> None:
    questions = load_questions(QUESTIONS)
    assert len(questions) >= 60
    assert len({question["id"] for question in questions}) == len(questions)
    for question in questions:
        answer = question["answers"][0]
        # Choices name their answer among the options the question lists; yes/no questions are answered yes or no.
        assert answer in {"yes", "no"} or answer.lower() in question["question"].lower()
        assert question["gold_doc_ids"] and question["evidence"]
    assert has_halves(SET)
    halves = [half_of(SET, question) for question in questions]
    assert min(halves.count("tune"), halves.count("check")) >= 25
    yes_no = [question["answers"][0] for question in questions if question["answers"][0] in {"yes", "no"}]
    assert abs(yes_no.count("yes") - yes_no.count("no")) <= 2  # neither answer wins by being the common one


@pytest.mark.skipif(not SAMPLE.exists(), reason="the HotpotQA sample is not in ../shared/data on this machine")
def test_every_question_rests_on_paragraphs_of_the_corpus_that_the_samples_questions_do_not_need() -> None:
    corpus = {json.loads(line)["id"] for line in (SAMPLE / "corpus.jsonl").read_text(encoding="utf-8").splitlines()}
    needed = {
        doc
        for line in (SAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        for doc in json.loads(line)["gold_doc_ids"]
    }
    for question in load_questions(QUESTIONS):
        assert set(question["gold_doc_ids"]) <= corpus - needed, question["id"]
