"""The analyst set (`tests/data/demo_analyst.jsonl`): questions an analyst asks of the demo corpus (who founded,
bought, created or leads X; when; how many; titles and their abbreviations; verbs in other words), some of them
answered nowhere in the corpus (gold: no answer, so any headline is wrong), split into halves by a fixed seed; and a
fresh set of the same kind (`tests/data/demo_analyst_fresh.jsonl`), written after the first to check changes made
while reading it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.evaluation.halves import half_of
from pipelines.evaluation.questions import load_questions

DATA = Path(__file__).resolve().parents[2] / "data"
CORPUS = Path(__file__).resolve().parents[3] / "ingest" / "demo_corpus"


@pytest.mark.parametrize(("name", "least", "unanswered"), [("demo_analyst", 30, 5), ("demo_analyst_fresh", 16, 4)])
def test_the_set_is_well_formed_and_answered_by_its_gold_document(name: str, least: int, unanswered: int) -> None:
    questions = load_questions(DATA / f"{name}.jsonl")
    assert len(questions) >= least and len({question["id"] for question in questions}) == len(questions)
    # Whitespace as one space: an HTML line of the corpus may wrap a name.
    texts = {path.name: " ".join(path.read_text(encoding="utf-8").split()) for path in CORPUS.iterdir()}
    missing = [
        (question["id"], answer)
        for question in questions
        for document in question["gold_doc_ids"]
        for answer in question["answers"]
        if answer not in texts[document]
    ]
    assert missing == [] and all(len(question["gold_doc_ids"]) == 1 for question in questions)
    assert sum(not question["answers"] for question in questions) >= unanswered  # asked, but not in the corpus


def test_it_asks_in_other_words_than_the_other_demo_sets() -> None:
    sets = ("demo_questions", "demo_paraphrases", "demo_analyst", "demo_analyst_fresh")
    asked = [q["question"].lower() for name in sets for q in load_questions(DATA / f"{name}.jsonl")]
    assert len(set(asked)) == len(asked)


def test_both_halves_hold_at_least_twenty_questions() -> None:
    halves = [half_of("demo_analyst", question) for question in load_questions(DATA / "demo_analyst.jsonl")]
    assert halves.count("tune") >= 20 and halves.count("check") >= 20
