"""The answer step's capture and replay: what the generator was given, recorded per question and answered again."""

from __future__ import annotations

import inspect
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


class _Source:
    """A knowledge base stand-in for the hop stage: it answers every question with the same chunks."""

    def __init__(self, found: list[Document]):
        self.found, self.asked = found, []

    def run(self, query: str, **_: object) -> dict[str, object]:
        from components.contracts import SourceStatus, StatusKind

        self.asked.append(query)
        status = SourceStatus(source="hops_kb", status=StatusKind.SUCCESS, execution_time_ms=1.0)
        return {"documents": list(self.found), "status": status}


def test_the_chunks_the_hop_stage_added_are_captured_and_replay_to_the_live_answer(tmp_path: Path) -> None:
    from components.contracts.chunk import RankedDocuments
    from components.generation.hop_retriever import HopRetriever
    from tests.components.ranking.chunks import kb_document

    town = kb_document(
        "quarnby",
        "Quarnby is a mill town on the river Tavel. Several films, such as Copper Heron (1981), have been shot in "
        "or around Quarnby.",
        0.6,
        title="Quarnby",
        ranks={"ranked": 1},
    )
    film = kb_document(
        "copper-heron",
        "Copper Heron is a 1981 drama film written and directed by Maren Oststrand.",
        0.4,
        title="Copper Heron",
    )
    question = "Who directed the film that was shot in or around Quarnby in 1981?"
    hops = HopRetriever()
    hops._kb, hops._graph = _Source([film]), _Source([])
    generator = ExtractiveAnswerGenerator()
    unwrapped = HopRetriever.run
    with capturing() as captured:
        # A pipeline built inside the capture still reads the stage's sockets from its signature and output types.
        assert inspect.signature(HopRetriever.run) == inspect.signature(unwrapped)
        assert HopRetriever.run._output_types_cache == unwrapped._output_types_cache  # type: ignore[attr-defined]
        handed = hops.run(query=question, documents=RankedDocuments((town,)))["ranked"]
        live = generator.run(query=question, documents=list(handed.documents))
        hops.run(query="Where is Quarnby?", documents=RankedDocuments((town,)))  # no chain: no search, no answer
    assert live["parts"][0]["short_answer"] == "Maren Oststrand"  # read from the chunk the hop stage found
    write_capture(
        attach_gold(captured, [{"id": "q1", "question": question, "answers": ["Maren Oststrand"]}]),
        tmp_path / "hops.jsonl",
    )
    ((record, again),) = list(replay(load_capture(tmp_path / "hops.jsonl"), generator))
    assert [document["id"] for document in record["documents"]] == ["quarnby", "copper-heron"]
    assert record["documents"][1]["meta"]["hop"] == {"question": "Who directed Copper Heron?", "bridge": "Copper Heron"}
    assert record["hops"]["status"] == "success" and record["hops"]["found"] == 1
    assert again["replies"] == live["replies"] and again["parts"] == live["parts"]
    assert HopRetriever.run is unwrapped  # outside the capture the stage runs as before


def test_a_capture_made_before_the_hop_stage_loads_and_replays(tmp_path: Path) -> None:
    # An older record: no `hops`, no added chunks, the analysis absent.
    import json

    old = {
        "id": "q1",
        "query": "Who founded the Kestrel Lantern Works?",
        "analysis": None,
        "answers": ["Orvelle"],
        "documents": [DOCUMENTS[0].to_dict(flatten=False) | {"embedding": None}],
    }
    (tmp_path / "old.jsonl").write_text(json.dumps(old) + "\n", encoding="utf-8")
    generator = ExtractiveAnswerGenerator(embedding_model="")
    ((record, again),) = list(replay(load_capture(tmp_path / "old.jsonl"), generator))
    assert "hops" not in record and again["parts"][0]["short_answer"] == "Orvelle Dunmark"
