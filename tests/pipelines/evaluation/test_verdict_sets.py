"""The question sets written for this product over the public samples' corpora: comparisons and yes/no questions
(`tests/data/verdicts_*_corpus.jsonl`), labelled verdicts of the multi-hop kind that `research fit verdicts` counts,
and two-hop "bridge" questions (`tests/data/bridges_*_corpus.jsonl`), each naming a subject, pointing at a second thing
only through its relation to the subject (the bridge, never named) and asking a fact only the bridge's own paragraph
states. None is asked of a paragraph the sample's own forty questions need, so a set and its sample share no question
or evidence. The MuSiQue corpus's verdict set was written after the comparison rules it measures were fixed, and both
bridge sets without the product's answers in view (blind checks); every set splits into fixed-seed halves."""

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
BRIDGE_SETS = {"bridges_hotpotqa_corpus": "hotpotqa_dev40", "bridges_musique_corpus": "musique_dev40"}


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


def _sample(name: str) -> tuple[dict[str, str], set[str]]:
    """The sample's corpus (id -> text) and the paragraphs its forty questions need; skips without the sample."""
    sample = SAMPLES / name
    if not sample.exists():
        pytest.skip(f"the {name} sample is not in ../shared/data on this machine")
    corpus = {
        record["id"]: record["text"]
        for record in map(json.loads, (sample / "corpus.jsonl").read_text(encoding="utf-8").splitlines())
    }
    needed = {
        doc
        for line in (sample / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        for doc in json.loads(line)["gold_doc_ids"]
    }
    return corpus, needed


@pytest.mark.parametrize("name", sorted(SETS | BRIDGE_SETS))
def test_every_question_rests_on_paragraphs_the_samples_questions_do_not_need(name: str) -> None:
    corpus, needed = _sample((SETS | BRIDGE_SETS)[name])
    for question in load_questions(DATA / f"{name}.jsonl"):
        assert set(question["gold_doc_ids"]) <= set(corpus) - needed, question["id"]


@pytest.mark.parametrize("name", sorted(BRIDGE_SETS))
def test_a_bridge_set_names_no_bridge_and_is_split_into_halves(name: str) -> None:
    questions = load_questions(DATA / f"{name}.jsonl")
    assert len(questions) >= 60
    assert len({question["id"] for question in questions}) == len(questions)
    for question in questions:
        assert question["answers"] and len(question["gold_doc_ids"]) >= 2
        # The bridge is what the question points at without naming it.
        assert question["bridge"].lower() not in question["question"].lower(), question["id"]
    assert has_halves(name)
    halves = [half_of(name, question) for question in questions]
    assert min(halves.count("tune"), halves.count("check")) >= 25


@pytest.mark.parametrize("name", sorted(BRIDGE_SETS))
def test_every_bridge_answer_stands_in_its_last_paragraph(name: str) -> None:
    corpus, _ = _sample(BRIDGE_SETS[name])
    for question in load_questions(DATA / f"{name}.jsonl"):
        last = corpus[question["gold_doc_ids"][-1]]
        assert all(answer in last for answer in question["answers"]), question["id"]
