"""`research eval` on the demo corpus's own question set (`tests/data/demo_questions.jsonl`): paraphrased questions
with gold answers and gold documents (named by file), answered by the default research pipeline offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.evaluation.questions import load_questions, main

QUESTIONS = Path(__file__).resolve().parents[2] / "data" / "demo_questions.jsonl"


@pytest.fixture
def demo_collection(monkeypatch: pytest.MonkeyPatch, database_url: str):
    """The demo corpus ingested into a collection of its own, the settings pointed at it (each evaluation run builds
    its catalog from them)."""
    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import reload_settings
    from ingest.demo import ingest_demo_corpus
    from ingest.ingestor import Ingestor

    monkeypatch.setenv("KB_COLLECTION", "demo_questions")
    reload_settings()
    report = ingest_demo_corpus(Ingestor(store=open_knowledge_base(collection="demo_questions")))
    assert not report.failed
    yield "demo_questions"
    monkeypatch.delenv("KB_COLLECTION")
    reload_settings()


def test_the_set_is_well_formed() -> None:
    questions = load_questions(QUESTIONS)
    assert len(questions) >= 40
    assert len({question["id"] for question in questions}) == len(questions)
    corpus = {path.name for path in (Path(__file__).resolve().parents[3] / "ingest" / "demo_corpus").iterdir()}
    for question in questions:
        assert question["answers"] and set(question["gold_doc_ids"]) <= corpus


@pytest.mark.integration
@pytest.mark.slow
def test_research_answers_the_demo_questions(demo_collection: str, tmp_path: Path, capsys) -> None:
    code = main([str(QUESTIONS), "--variants", "research:kb", "--out", str(tmp_path / "demo"), "--no-progress"])
    assert code == 0
    summary = json.loads((tmp_path / "demo" / "report.json").read_text())["variants"]["research:kb"]
    # Measured: R@5 1.00, contains 0.96, token F1 0.71, EM 0.58 (45 questions); floors well below.
    assert summary["errors"] == 0
    assert summary["retrieval"]["recall_any@5"] >= 0.85
    assert summary["answers"]["contains_gold"] >= 0.6
    assert summary["answers"]["token_f1"] >= 0.3
    assert summary["answers"]["short_answer_share"] >= 0.5
