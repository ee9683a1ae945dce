"""The ingestion service against the real embedded PostgreSQL + pgvector and the real model."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from components.knowledge_base.store import ChunkRecord, DocumentRecord
from ingest.ingestor import Ingestor, document_id_for
from ingest.report import IngestProgress

PARAGRAPH = (
    "PostgreSQL began as the POSTGRES project at the University of California, Berkeley, in 1986. "
    "Michael Stonebraker led it for eight years. In 1996 the project was renamed PostgreSQL. "
)


class RecordingHook:
    """Records what it saw, inside the store's transaction."""

    def __init__(self) -> None:
        self.documents: list[tuple[Any, str, int]] = []
        self.deleted: list[str] = []

    def on_document(self, connection: Any, document: DocumentRecord, chunks: list[ChunkRecord]) -> None:
        self.documents.append((connection, document.document_id, len(chunks)))

    def on_delete(self, connection: Any, document_id: str) -> None:
        self.deleted.append(document_id)


@pytest.mark.integration
class TestIngestor:
    def test_init_rejects_bad_batch_size(self, store) -> None:
        with pytest.raises(ValueError, match="batch_size"):
            Ingestor(store=store, hooks=[], batch_size=0)

    def test_incremental_add_skip_replace_delete(self, store, work_dir, embedding_model) -> None:
        (work_dir / "notes").mkdir()
        first = work_dir / "notes" / "postgres.md"
        first.write_text("---\ntitle: Postgres\ndate: 1996-07-08\n---\n# Origins\n\n" + PARAGRAPH * 12)
        second = work_dir / "stonebraker.txt"
        second.write_text("Stonebraker\n\n" + PARAGRAPH * 3)
        (work_dir / "notes" / ".hidden.md").write_text("# Hidden\n\nNever ingested.")
        (work_dir / "notes" / "image.png").write_bytes(b"\x89PNG not text")
        hook = RecordingHook()
        ingestor = Ingestor(store=store, hooks=[hook], batch_size=4)
        seen: list[IngestProgress] = []

        report = ingestor.ingest_paths([work_dir / "notes", second], progress=seen.append)
        assert sorted(report.added) == sorted([str(first.resolve()), str(second.resolve())])
        assert report.failed == [] and report.skipped == [] and report.replaced == []
        assert report.chunks_written == store.count_chunks() > 2
        assert store.count_documents() == 2
        assert seen[-1].files_done == seen[-1].files_total == 2 and seen[-1].chunks_done == report.chunks_written
        # Hooks ran inside the store's transaction, on its real connection.
        assert {d for _, d, _ in hook.documents} == {
            document_id_for(str(first.resolve())),
            document_id_for(str(second.resolve())),
        }
        assert all(conn is not None for conn, _, _ in hook.documents)

        document, chunks = store.get_document(document_id_for(str(first.resolve())))
        assert document.title == "Postgres" and str(document.date) == "1996-07-08" and document.doc_type == "md"
        assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
        assert all(c.metadata["document_total_chunks"] == len(chunks) for c in chunks)
        assert all(c.metadata["section_title"] == "Origins" for c in chunks)
        assert all(document.text[c.metadata["char_start"] : c.metadata["char_end"]] == c.text for c in chunks)
        old_ids = {c.chunk_id for c in chunks}

        again = ingestor.ingest_paths([work_dir / "notes", second])
        assert sorted(again.skipped) == sorted(report.added) and again.chunks_written == 0

        first.write_text("---\ntitle: Postgres, revised\n---\n# Origins\n\n" + PARAGRAPH * 2)
        changed = ingestor.ingest_paths([first])
        assert changed.replaced == [str(first.resolve())] and changed.added == []
        document, chunks = store.get_document(document_id_for(str(first.resolve())))
        assert document.title == "Postgres, revised" and document.date is None
        assert not old_ids & {c.chunk_id for c in chunks}
        assert store.count_chunks() == len(chunks) + len(store.get_document(document_id_for(str(second.resolve())))[1])

        forced = ingestor.ingest_paths([second], force=True)
        assert forced.replaced == [str(second.resolve())]

        assert ingestor.delete(document_id_for(str(first.resolve()))) is True
        assert hook.deleted == [document_id_for(str(first.resolve()))]
        assert store.get_document(document_id_for(str(first.resolve()))) is None
        assert ingestor.delete("doc_unknown") is False
        assert store.count_documents() == 1

    def test_corrupt_empty_unsupported_and_missing_reported_while_run_goes_on(self, store, work_dir) -> None:
        (work_dir / "broken.pdf").write_bytes(b"%PDF-1.4\n this is not really a pdf")
        (work_dir / "empty.md").write_text("   \n")
        (work_dir / "good.txt").write_text(PARAGRAPH)
        unsupported = work_dir / "table.xlsx"
        unsupported.write_bytes(b"PK\x03\x04")
        ingestor = Ingestor(store=store, hooks=[])
        report = ingestor.ingest_paths([work_dir, unsupported, work_dir / "nowhere.md"])
        assert report.added == [str((work_dir / "good.txt").resolve())]
        reasons = dict(report.failed)
        assert set(reasons) == {
            str(work_dir / "nowhere.md"),
            str((work_dir / "broken.pdf").resolve()),
            str((work_dir / "empty.md").resolve()),
            str(unsupported.resolve()),
        }
        assert reasons[str(work_dir / "nowhere.md")] == "No such file or folder."
        assert "empty" in reasons[str((work_dir / "empty.md").resolve())]
        assert ".xlsx is not supported" in reasons[str(unsupported.resolve())]
        assert all(reason.count(".") >= 1 and "\n" not in reason for reason in reasons.values())
        assert not report.ok and "1 added" in report.summary() and "4 failed" in report.summary()
        assert report.to_dict()["failed"][0] == {
            "source": str(work_dir / "nowhere.md"),
            "reason": "No such file or folder.",
        }

    def test_ingest_text_and_bytes(self, store, embedding_model) -> None:
        import datetime as dt

        ingestor = Ingestor(store=store, hooks=[])
        report = ingestor.ingest_text(
            "# Release\n\nIn June 2019 the team shipped version 1.0.\n\n## Later\n\nTwo years later it was 2.0.",
            title="Release notes",
            source="https://example.org/releases",
            doc_type="web",
            url="https://example.org/releases",
            date=dt.date(2021, 6, 1),
            metadata={"domain": "example.org"},
        )
        doc_id = report.document_ids["https://example.org/releases"]
        document, chunks = store.get_document(doc_id)
        assert (document.doc_type, document.title, document.date) == ("web", "Release notes", dt.date(2021, 6, 1))
        assert document.metadata["domain"] == "example.org"
        assert chunks[0].metadata["section_title"] == "Release"
        assert ingestor.ingest_text("# Release", title="x", source="https://example.org/releases", doc_type="web")
        assert ingestor.ingest_text(" ", title="x", source="blank").failed[0][1] == "The file is empty."
        with pytest.raises(ValueError, match="source"):
            ingestor.ingest_text("text", title="x", source=" ")

        upload = ingestor.ingest_bytes(b"Uploaded note\n\n" + PARAGRAPH.encode(), "note.txt")
        assert upload.added == ["upload:note.txt"]
        _, uploaded = store.get_document(upload.document_ids["upload:note.txt"])
        hit = store.dense_search(embedding_model.embed_one("Who led the POSTGRES project at Berkeley?"), limit=1)[0]
        assert hit.chunk.chunk_id == uploaded[0].chunk_id and hit.cosine > 0.5
        assert ingestor.ingest_bytes(b"Uploaded note\n\n" + PARAGRAPH.encode(), "note.txt").skipped == [
            "upload:note.txt"
        ]

    def test_embeddings_match_the_embedder(self, store, embedding_model) -> None:
        ingestor = Ingestor(store=store, hooks=[], batch_size=3)
        report = ingestor.ingest_text("\n\n".join(PARAGRAPH * (i + 1) for i in range(8)), title="t", source="s")
        [(document, chunks)] = list(store.iter_chunks())
        assert document.document_id == report.document_ids["s"] and len(chunks) == report.chunks_written > 3
        expected = embedding_model.embed([c.text for c in chunks])
        stored = np.stack([np.asarray(c.embedding, dtype=np.float32) for c in chunks])
        assert np.allclose(stored, expected, atol=1e-4)

    def test_an_embedding_failure_fails_only_the_document_of_the_bad_chunk(self, store, embedding_model) -> None:
        from ingest.ingestor import IngestItem

        class RefusingModel:
            """The real model, refusing any call that holds the poisoned chunk (as the embedder refused batches)."""

            def __init__(self) -> None:
                self.calls: list[int] = []

            def embed_with_sentence_spans(self, texts, spans, batch_size=32):  # noqa: ANN001, ANN202
                self.calls.append(len(texts))
                if any("POISON" in text for text in texts):
                    raise ValueError("Unable to create tensor, you should probably activate truncation and/or padding")
                return embedding_model.embed_with_sentence_spans(texts, spans, batch_size)

        ingestor = Ingestor(store=store, hooks=[], batch_size=4)
        ingestor.warm_up()
        ingestor.model = model = RefusingModel()
        texts = {f"doc{i}": f"Document {i}. " + PARAGRAPH for i in range(5)}
        texts["doc2"] = PARAGRAPH + "\n\nThe POISON paragraph.\n\n" + PARAGRAPH * 3
        items = [IngestItem(source=name, filename=f"{name}.txt", data=text.encode()) for name, text in texts.items()]
        report = ingestor.ingest_items(items)
        assert sorted(report.added) == ["doc0", "doc1", "doc3", "doc4"]
        assert report.failed == [("doc2", report.failed[0][1])]
        assert (
            report.failed[0][1].startswith("Embedding its chunk ") and "Unable to create tensor" in report.failed[0][1]
        )
        assert store.count_documents() == 4
        assert model.calls[0] > 1 and 1 in model.calls  # the whole batch first, then chunk by chunk


class TestOnnxExportBeforeTheFirstDocument:
    def test_warm_up_makes_the_export_and_a_failure_is_one_warning(self, monkeypatch, caplog) -> None:
        import logging

        calls: list[str] = []

        class Model:
            def __init__(self, failure: Exception | None = None) -> None:
                self.failure = failure

            def use_onnx_export(self) -> str:
                calls.append("export")
                if self.failure:
                    raise self.failure
                return "onnx"

        monkeypatch.setattr("ingest.ingestor.get_embedding_model", lambda name=None: Model())
        ingestor = Ingestor(store=object(), hooks=[])
        ingestor.warm_up()
        ingestor.warm_up()  # once per process
        assert calls == ["export"] and isinstance(ingestor.model, Model)

        broken = Model(RuntimeError("the exporter is missing\nTraceback ..."))
        monkeypatch.setattr("ingest.ingestor.get_embedding_model", lambda name=None: broken)
        with caplog.at_level(logging.WARNING):
            Ingestor(store=object(), hooks=[]).warm_up()  # never raised: ingestion embeds with torch
        assert "the exporter is missing" in caplog.text and "Traceback" not in caplog.text

    def test_any_failure_of_the_export_leaves_ingestion_on_torch(self, monkeypatch, caplog) -> None:
        import logging

        class Model:
            def use_onnx_export(self) -> str:
                raise AttributeError("'StaticEmbedding' object has no attribute 'auto_model'")

        monkeypatch.setattr("ingest.ingestor.get_embedding_model", lambda name=None: Model())
        ingestor = Ingestor(store=object(), hooks=[])
        with caplog.at_level(logging.WARNING):
            ingestor.warm_up()
        assert isinstance(ingestor.model, Model) and "auto_model" in caplog.text
