"""The answer step's capture and replay: what the generator was given, recorded per question and answered again."""

from __future__ import annotations

from pathlib import Path

from haystack import Document

from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from pipelines.evaluation.capture import attach_gold, capturing, load_capture, replay, write_capture

DOCUMENTS = [
    Document(
        content="Orvelle Dunmark founded the Kestrel Lantern Works in 1874. The works made ship lamps.",
        meta={"source_title": "Kestrel Lantern Works"},
        embedding=[0.1, 0.2],
    )
]


def test_a_captured_question_replays_to_the_same_answer(tmp_path: Path) -> None:
    generator = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0)
    with capturing() as captured:
        live = generator.run(query="Who founded the Kestrel Lantern Works?", documents=DOCUMENTS)
    # The question as the set has it ends in a space the pipeline stripped before the generator saw it.
    questions = [
        {
            "id": "q1",
            "index": 0,
            "question": "Who founded the Kestrel Lantern Works? ",
            "answers": ["Orvelle"],
            "gold_doc_ids": ["squad-04-001"],
        }
    ]
    records = attach_gold(captured, questions)
    assert [(record["id"], record["index"], record["answers"]) for record in records] == [("q1", 0, ["Orvelle"])]
    assert records[0]["gold_doc_ids"] == ["squad-04-001"]  # what decides a SQuAD question's half
    assert "embedding" not in records[0]["documents"][0]  # no vectors in the capture
    write_capture(records, tmp_path / "capture.jsonl")
    ((record, again),) = list(replay(load_capture(tmp_path / "capture.jsonl"), generator))
    assert again["replies"] == live["replies"] and again["short_answer"] == live["short_answer"] == "Orvelle Dunmark"
    # Outside the capture, the generator runs as before: nothing is recorded.
    generator.run(query="Who made ship lamps?", documents=DOCUMENTS)
    assert set(captured) == {"Who founded the Kestrel Lantern Works?"}


def test_an_analysis_handed_on_as_itself_is_captured_as_the_json_it_reads_back(tmp_path: Path) -> None:
    from components.generation.question_analysis import QuestionAnalysis, analyze_question

    generator = ExtractiveAnswerGenerator(embedding_model="", confidence_threshold=0.0)
    question = "Who founded the Kestrel Lantern Works?"
    analysis = analyze_question(question)  # what the research pipeline's question analyzer hands the generator
    with capturing() as captured:
        live = generator.run(query=question, documents=DOCUMENTS, analysis=analysis)
    write_capture(attach_gold(captured, [{"id": "q1", "question": question, "answers": []}]), tmp_path / "c.jsonl")
    ((record, again),) = list(replay(load_capture(tmp_path / "c.jsonl"), generator))
    assert record["analysis"] == analysis.to_dict() and QuestionAnalysis.from_dict(record["analysis"]) == analysis
    assert again["replies"] == live["replies"] and again["short_answer"] == "Orvelle Dunmark"
