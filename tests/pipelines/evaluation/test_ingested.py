"""The evaluations that extract a corpus read it as ingestion stores it: the event-confidence fit and curve see the
chunked, converted documents the product extracts, through one shared function."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

from components.graph.extraction import LanguageExtractor
from components.ingestion.formats import convert_bytes
from pipelines.evaluation import entity_kinds, event_confidence, ingested

ROOT = Path(__file__).resolve().parents[3]

# An invented story written one sentence a line (as the timeline corpora are written), long enough for two chunks.
LINES = [
    "Orlund Rail opens a depot in Varrow",
    f"March 3, {2015}",
    *(
        f"Orlund Rail opened its depot number {n} in Varrow in {2000 + n}, the company said on Tuesday."
        for n in range(1, 16)
    ),
]


def _corpus(folder: Path) -> None:
    """Two documents of the story, each with one gold event of Orlund Rail."""
    folder.mkdir()
    rows = [{"id": f"o{n}", "title": LINES[0], "text": "\n".join(LINES), "date": "2015-03-03"} for n in (1, 2)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    mentions = [{"doc_id": row["id"], "sentence_id": 3, "sentence": LINES[3]} for row in rows]
    gold = {"entity": "Orlund Rail", "events": [{"date": "2002", "mentions": mentions}]}
    (folder / "entity_timelines.jsonl").write_text(json.dumps(gold) + "\n", encoding="utf-8")


def test_fit_and_curve_extract_the_corpus_as_ingested(tmp_path, monkeypatch, capsys, database_url):
    seen: list[tuple[str, str, list]] = []

    class Watched(LanguageExtractor):
        def extract(self, document, chunks, known_names=None):
            seen.append((document.document_id, document.text, list(chunks)))
            return super().extract(document, chunks, known_names=known_names)

    monkeypatch.setattr(event_confidence, "LanguageExtractor", Watched)
    tune, check = tmp_path / "tune", tmp_path / "check"
    _corpus(tune)
    _corpus(check)
    out = tmp_path / "model.json"
    assert event_confidence.main(["fit", "--tune", str(tune), "--out", str(out)]) == 0
    assert event_confidence.main(["curve", "--tune", str(tune), "--check", str(check), "--out", str(out)]) == 0
    assert "threshold" in capsys.readouterr().out

    written = "\n".join(LINES)
    converted = convert_bytes(written.encode("utf-8"), "document.txt", "txt").text
    assert converted != written  # the lines of a text file are read as one paragraph
    # fit: the tune corpus's two documents; curve: both corpora's.
    assert [document_id for document_id, _, _ in seen] == ["o1", "o2"] * 3
    for _, text, chunks in seen:
        assert text == converted
        # The settings' chunks, each with one in-context vector per sentence, as ingestion hands them over.
        assert len(chunks) >= 2
        assert [chunk.chunk_index for chunk in chunks] == list(range(len(chunks)))
        for chunk in chunks:
            assert chunk.text and len(chunk.sentence_embeddings) == len(chunk.sentence_spans) > 0
            assert converted[chunk.metadata["char_start"] : chunk.metadata["char_end"]] == chunk.text


def test_the_evaluations_share_one_as_ingested():
    homes = [
        path.relative_to(ROOT)
        for package in ("components", "pipelines", "ingest", "app")
        for path in sorted((ROOT / package).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name == "as_ingested"
    ]
    assert homes == [Path("pipelines/evaluation/ingested.py")]
    assert entity_kinds.as_ingested is ingested.as_ingested is event_confidence.as_ingested


def test_as_ingested_makes_the_chunk_records_ingestion_writes(store, embedding_model):
    """The evaluation's chunks are the records ingestion writes for the same text: same ids, offsets, sentences,
    term counts and (up to the float noise of another batch) sentence vectors."""
    import numpy as np

    from components.knowledge_base.store import ChunkRecord
    from ingest.ingestor import IngestItem, Ingestor, document_id_for

    written = "\n".join(LINES)
    item = IngestItem(source="note:orlund", filename="document.txt", data=written.encode(), doc_type="txt")
    Ingestor(store=store, hooks=[]).ingest_items([item])
    stored_document, stored = store.get_document(document_id_for("note:orlund"), with_evidence=True)
    document = SimpleNamespace(document_id=document_id_for("note:orlund"), text=written, title=stored_document.title)

    (converted,), (records,) = ingested.as_ingested([document])

    assert converted.text == stored_document.text and len(records) == len(stored) >= 2
    for record, chunk in zip(records, stored, strict=True):
        assert isinstance(record, ChunkRecord)
        assert (record.chunk_id, record.chunk_index, record.text) == (chunk.chunk_id, chunk.chunk_index, chunk.text)
        assert {k: record.metadata[k] for k in chunk.metadata if k in record.metadata} == {
            k: chunk.metadata[k] for k in record.metadata if k in chunk.metadata
        }
        assert record.term_counts == chunk.term_counts
        assert [tuple(span) for span in record.sentence_spans] == [tuple(span) for span in chunk.sentence_spans]
        assert np.allclose(record.sentence_embeddings, chunk.sentence_embeddings, atol=1e-4)
        assert record.embedding is not None and len(record.embedding) == embedding_model.dimension
