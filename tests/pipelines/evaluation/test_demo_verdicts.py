"""The demo corpus's comparison and yes/no questions (`tests/data/demo_verdicts.jsonl`), written for this product
from its own demo corpus: the labelled verdicts `research fit verdicts` counts beside the public sets'."""

from __future__ import annotations

from pathlib import Path

from pipelines.evaluation.halves import half_of
from pipelines.evaluation.questions import load_questions

QUESTIONS = Path(__file__).resolve().parents[2] / "data" / "demo_verdicts.jsonl"
CORPUS = Path(__file__).resolve().parents[3] / "ingest" / "demo_corpus"


def test_the_set_is_well_formed_and_split_into_halves() -> None:
    questions = load_questions(QUESTIONS)
    assert len(questions) >= 30
    assert len({question["id"] for question in questions}) == len(questions)
    corpus = {path.name for path in CORPUS.iterdir()}
    for question in questions:
        assert question["answers"] and set(question["gold_doc_ids"]) <= corpus
    # Choices name their answer among the options the question lists; yes/no questions are answered yes or no.
    for question in questions:
        answer = question["answers"][0]
        assert answer in {"yes", "no"} or answer.lower() in question["question"].lower()
    halves = [half_of("demo_verdicts", question) for question in questions]
    assert {"tune", "check"} == set(halves) and min(halves.count("tune"), halves.count("check")) >= 10
