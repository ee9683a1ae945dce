"""The paraphrase check set (`tests/data/demo_paraphrases.jsonl`): questions about the demo corpus worded unlike the
demo questions (bought / acquired, reordered clauses), with gold answers, split into halves by a fixed seed. It is a
check of the answer confidence (at most one wrong headline in sixteen questions), never fitted to."""

from __future__ import annotations

from pathlib import Path

from pipelines.evaluation.halves import half_of
from pipelines.evaluation.questions import load_questions

DATA = Path(__file__).resolve().parents[2] / "data"
CORPUS = Path(__file__).resolve().parents[3] / "ingest" / "demo_corpus"


def test_the_set_is_well_formed_and_answered_by_its_gold_document() -> None:
    questions = load_questions(DATA / "demo_paraphrases.jsonl")
    assert len(questions) >= 32
    assert len({question["id"] for question in questions}) == len(questions)
    for question in questions:
        (document,) = question["gold_doc_ids"]
        text = (CORPUS / document).read_text(encoding="utf-8")
        assert question["answers"] and all(answer in text for answer in question["answers"]), question["id"]


def test_it_asks_in_other_words_than_the_demo_questions() -> None:
    demo = {question["question"].lower() for question in load_questions(DATA / "demo_questions.jsonl")}
    assert not demo & {question["question"].lower() for question in load_questions(DATA / "demo_paraphrases.jsonl")}


def test_both_halves_hold_at_least_sixteen_questions() -> None:
    halves = [half_of("demo_paraphrases", question) for question in load_questions(DATA / "demo_paraphrases.jsonl")]
    assert halves.count("tune") >= 16 and halves.count("check") >= 16
