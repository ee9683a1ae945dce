"""`Ingestor`: the one ingestion service. The CLI, the app and the HTTP server all call it.

Files, uploads and texts become documents with token-sized chunks, embedded in full batches and written to the
knowledge base together with whatever the hooks add (the knowledge graph). Three stages overlap: a reader thread
hashes, converts and splits; the calling thread embeds (the slow part, kept busy); a writer thread writes each
document in its own transaction. The content hash decides what happens: unchanged -> skipped, changed ->
replaced, new -> added.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import json
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from haystack import logging

from components.embedding import get_embedding_model
from components.graph.ingest_hook import GraphIngestHook
from components.ingestion.formats import ConversionError, convert_bytes, doc_type_for
from components.ingestion.formats.common import json_safe
from components.ingestion.limits import IngestLimits
from components.ingestion.splitter import TextChunk, TokenSplitter
from components.knowledge_base.factory import open_knowledge_base
from components.knowledge_base.hooks import IngestHook, RefreshableHook, ReportingHook
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.knowledge_base.store import ChunkRecord, DocumentRecord
from components.resilience.errors import first_line
from components.settings import Settings, get_settings
from components.text.analyzer import SENTENCE_TERMS_KEY, sentence_terms_record, term_counts
from components.text.language import SENTENCE_SPANS_KEY, sentence_spans
from components.validation import positive_int
from ingest.report import IngestProgress, IngestReport, printable

logger = logging.getLogger(__name__)


def use_onnx_export(model: Any) -> None:
    """`model.use_onnx_export()`, a failure logged and never raised: without the export, embedding stays on torch."""
    try:
        model.use_onnx_export()
    except Exception as exc:  # noqa: BLE001 - whatever the exporter raises, ingestion goes on with torch
        logger.warning("No ONNX export of the embedding model ({reason}); embedding with torch", reason=first_line(exc))


def default_hooks(collection: str | None = None, settings: Settings | None = None) -> list[IngestHook]:
    """The hooks every ingestion runs unless told otherwise: the knowledge graph's extraction (for `collection`,
    default the settings' collection) with the store and extractor `settings` (None: the process's) choose."""
    return [GraphIngestHook(collection=collection, settings=settings)]


_DONE = object()


@dataclass
class IngestItem:
    """One thing to ingest: where it came from (`source`, which decides the document id) and its content.

    Files are read lazily from `path`; uploads, texts, web pages and papers carry `data`. `title`, `date` and `url`
    override what the converter finds; `metadata` is stored with the document (arXiv authors, web domain, ...).
    """

    source: str
    filename: str
    data: bytes | None = None
    path: Path | None = None
    doc_type: str | None = None
    title: str | None = None
    date: dt.date | None = None
    url: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        if self.path is None:
            raise ConversionError("it has neither data nor a path.")
        try:
            return self.path.read_bytes()
        except OSError as exc:
            raise ConversionError(f"it cannot be read ({exc.strerror or exc}).") from exc


@dataclass
class PreparedDocument:
    """A converted, split document on its way through a run: prepared, then embedded, then written."""

    item: IngestItem
    document: DocumentRecord
    chunks: list[TextChunk]
    replaced: bool
    embeddings: list[np.ndarray | None] = field(default_factory=list)
    # Per chunk: the sentence spans that got an in-context vector, and those vectors (same forward pass).
    sentences: list[tuple[list[tuple[int, int]], np.ndarray] | None] = field(default_factory=list)


def document_id_for(source: str) -> str:
    """The deterministic document id of a source (resolved path, URL, `upload:<name>`, `arxiv:<id>`)."""
    return "doc_" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:20]


def chunk_id_for(document_id: str, chunk_index: int, text: str) -> str:
    """The deterministic id of a chunk: the same document, position and text give the same id."""
    digest = hashlib.sha256(f"{document_id}\x00{chunk_index}\x00{text}".encode()).hexdigest()[:24]
    return f"{document_id}_{chunk_index:05d}_{digest[:12]}"


def chunk_sentences(chunk: TextChunk) -> list[tuple[int, int]]:
    """The chunk's sentences as the splitter cut them (offsets in its text), the ones its forward pass embeds."""
    return chunk.sentence_spans or sentence_spans(chunk.text)


def chunk_records(
    document: Any,
    chunks: list[TextChunk],
    embeddings: list[np.ndarray | None],
    sentences: list[tuple[list[tuple[int, int]], np.ndarray | None] | None],
) -> list[ChunkRecord]:
    """The records ingestion writes for a document's chunks (its `document_id` and `title` are read): per chunk, its
    embedding and its (kept sentence spans, in-context sentence vectors) from the same forward pass, or None."""
    records = []
    for chunk, embedding, embedded in zip(chunks, embeddings, sentences, strict=True):
        spans, sentence_vectors = embedded if embedded is not None else ([], None)
        cut = chunk_sentences(chunk)
        metadata = {
            "page_number": chunk.page_number,
            "page_end": chunk.page_end,
            "section_title": chunk.section_title,
            "char_start": chunk.char_start,
            "char_end": chunk.char_end,
            "token_count": chunk.token_count,
            "document_total_chunks": len(chunks),
            # The chunk's sentences as the splitter cut them, so a question reads them instead of splitting again.
            SENTENCE_SPANS_KEY: [[start, end] for start, end in cut],
            # Those sentences' terms, so that ranking a retrieved chunk reads them instead of analysing it again.
            SENTENCE_TERMS_KEY: sentence_terms_record(chunk.text, cut),
        }
        records.append(
            ChunkRecord(
                chunk_id=chunk_id_for(document.document_id, chunk.chunk_index, chunk.text),
                document_id=document.document_id,
                chunk_index=chunk.chunk_index,
                text=chunk.text,
                embedding=embedding,
                metadata={k: v for k, v in metadata.items() if v is not None},
                sentence_spans=spans,
                sentence_embeddings=sentence_vectors,
                # The same analyzer the ranker uses; the title counts, as it does for BM25 at query time.
                term_counts=term_counts(f"{document.title}\n{chunk.text}"),
            )
        )
    return records


class Ingestor:
    """Ingests files, folders, uploads and texts into the knowledge base, incrementally.

    Usage:
    ```python
    ingestor = Ingestor()  # the settings' knowledge base, the default hooks
    report = ingestor.ingest_paths(["notes/", "paper.pdf"], progress=lambda p: print(p.files_done, p.rate))
    print(report.summary())  # "2 added, 0 replaced, 0 unchanged, 0 failed; 31 chunks in 2.4 s (12.9 chunks/s)"
    ```
    """

    def __init__(
        self,
        store: KnowledgeBase | None = None,
        hooks: list[IngestHook] | None = None,
        batch_size: int | None = None,
        limits: IngestLimits | None = None,
        settings: Settings | None = None,
    ) -> None:
        """`settings`: what is not given is taken from them as the ingestor is made (None: the process's)."""
        settings = settings or get_settings()
        if batch_size is not None:
            positive_int("batch_size", batch_size)
        if store is None:
            store = open_knowledge_base(settings)
        self.store = store
        # The default hooks (the graph) follow the store's collection, so a scratch collection gets a scratch graph.
        self.hooks = list(default_hooks(store.collection, settings) if hooks is None else hooks)
        self.batch_size = batch_size or settings.embedding_batch_size
        # Per-file size, text and chunk limits (the settings' INGEST_MAX_*); a file over one fails alone.
        self.limits = limits or IngestLimits.from_settings(settings)
        self.model_name = settings.embedding_model
        self.splitter = TokenSplitter.from_settings(settings)
        self.model: Any = None  # the embedding model, loaded by warm_up()

    def warm_up(self) -> None:
        """Load the embedding model and its tokenizer (once per process), and make the model's ONNX export before
        the first document when the data folder has none (once per data folder): the graph hook's embeddings of
        entity names then run on it from the first ingest, and a cold `research ask` embeds without torch."""
        if self.model is None:
            model = get_embedding_model(self.model_name)
            self.splitter.warm_up()
            use_onnx_export(model)
            self.model = model

    @property
    def chunking(self) -> str:
        """What decides the chunks; a document chunked differently is re-ingested even if its content is unchanged."""
        # "evidence": documents ingested before chunks carried sentence vectors and term counts are re-ingested once.
        return f"{self.splitter.chunk_tokens}/{self.splitter.overlap_tokens}/{self.model_name}/evidence"

    # -- public entry points ----------------------------------------------------------------------------------------

    def ingest_paths(
        self,
        paths: list[Path | str],
        progress: Callable[[IngestProgress], None] | None = None,
        force: bool = False,
    ) -> IngestReport:
        """Ingest files and folders (walked recursively: supported suffixes only, hidden files skipped)."""
        items, missing = collect_files(paths)
        report = self.ingest_items(items, progress=progress, force=force)
        report.failed[:0] = missing
        return report

    def ingest_bytes(
        self,
        data: bytes,
        filename: str,
        source: str | None = None,
        doc_type: str | None = None,
        title: str | None = None,
        url: str | None = None,
        date: dt.date | None = None,
        metadata: dict[str, Any] | None = None,
        force: bool = False,
    ) -> IngestReport:
        """Ingest an uploaded file; the same `filename` uploaded again replaces the earlier upload."""
        item = IngestItem(
            source=source or f"upload:{Path(filename).name}",
            filename=filename,
            data=data,
            doc_type=doc_type,
            title=title,
            date=date,
            url=url,
            metadata=dict(metadata or {}),
        )
        return self.ingest_items([item], force=force)

    def ingest_text(
        self,
        text: str,
        title: str,
        source: str,
        doc_type: str = "txt",
        url: str | None = None,
        date: dt.date | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> IngestReport:
        """Ingest a text that did not come from a file: "txt"/"arxiv" as plain text, "md"/"web" as Markdown
        (scrapers return Markdown, whose headings become sections), "html" as a page."""
        if not source or not source.strip():
            raise ValueError("source must say where the text came from (a URL, an id or a name)")
        data = (text or "").encode("utf-8", "replace")  # a lone surrogate becomes "?", not an exception
        filename = f"{title or source}.{doc_type}"
        return self.ingest_bytes(data, filename, source.strip(), doc_type, title, url, date, metadata)

    def delete(self, document_id: str) -> bool:
        """Delete a document, its chunks and (through the hooks) what was derived from it; False if unknown."""

        def also(connection: Any) -> None:
            for hook in self.hooks:
                hook.on_delete(connection, document_id)

        return self.store.delete_document(document_id, also=also)

    def ingest_items(
        self,
        items: Iterable[IngestItem],
        progress: Callable[[IngestProgress], None] | None = None,
        force: bool = False,
        reextract: bool = False,
    ) -> IngestReport:
        """Ingest prepared items: the shared path of files, uploads, texts, web pages and papers.

        `force` re-ingests unchanged items; `reextract` hands unchanged ones to the hooks again (the graph is
        extracted anew from the stored text and chunks, nothing is re-embedded), which also happens by itself to
        documents whose graph an older extractor made.
        """
        items = _unique(items)
        self.warm_up()
        run = _Run(self, items, progress, force, reextract)
        report = run.execute()
        report.notes += self.hook_notes()
        return report

    def hook_notes(self) -> list[str]:
        """What the hooks have to tell after a run, one sentence each (documents left without a graph)."""
        notes = []
        for hook in self.hooks:
            if not isinstance(hook, ReportingHook):
                continue
            try:
                note = hook.ingest_note()
            except Exception as exc:  # noqa: BLE001 - the run is done; a note that cannot be read is not its failure
                logger.warning("A hook's note on the run could not be read: {reason}", reason=first_line(exc))
                continue
            if note:
                notes.append(note)
        return notes

    def refresh(self, document_id: str, everything: bool = False) -> bool:
        """Hand an unchanged stored document to the hooks whose data of it is out of date (all hooks with
        `everything`); True when some hook ran."""
        stale = [
            hook
            for hook in self.hooks
            if everything
            or (isinstance(hook, RefreshableHook) and not hook.is_current([document_id]).get(document_id, False))
        ]
        if not stale:
            return False
        # With the chunks' in-context sentence vectors, which the graph extractor reads as ingestion hands them over.
        found = self.store.get_document(document_id, with_evidence=True)
        if found is None:
            return False
        document, chunks = found
        for hook in stale:
            try:
                hook.on_document(None, document, chunks)
            except Exception as exc:
                # Told as what failed, not as a file that could not be converted: the stored document is unchanged.
                raise RefreshError(f"Its stored data could not be made again ({first_line(exc, 300)}).") from exc
        return True

    # -- stages (called by _Run and the ingestion benchmark) --------------------------------------------------------

    def prepare(self, item: IngestItem, force: bool, reextract: bool = False) -> PreparedDocument | str:
        """The converted, split document for `item`, or "skipped" when its content is unchanged ("reextracted"
        when the hooks made its derived data again)."""
        if item.data is None and item.path is not None:
            try:
                size = item.path.stat().st_size
            except OSError as exc:
                raise ConversionError(f"it cannot be read ({exc.strerror or exc}).") from exc
            self.limits.check_bytes(size)  # before a byte is read
        data = item.read()
        identity = json.dumps(
            json_safe(
                {
                    "doc_type": item.doc_type,
                    "title": item.title,
                    "date": item.date,
                    "url": item.url,
                    "metadata": item.metadata,
                }
            ),
            sort_keys=True,
        ).encode("utf-8")
        content_hash = hashlib.sha256(data + b"\x00" + identity).hexdigest()
        existing = self.store.find_by_source(item.source)
        if (
            existing is not None
            and not force
            and existing.content_hash == content_hash
            and (existing.metadata or {}).get("chunking") == self.chunking
        ):
            return "reextracted" if self.refresh(existing.document_id, everything=reextract) else "skipped"
        converted = convert_bytes(data, item.filename, item.doc_type, self.limits)
        chunks = self.splitter.split(converted)
        if not chunks:
            raise ConversionError("no text could be extracted from it.")
        self.limits.check_chunks(len(chunks))  # before anything is embedded
        document_id = document_id_for(item.source)
        metadata = {
            **converted.metadata,
            **json_safe(item.metadata),
            "file_name": Path(item.filename).name,
            "size_bytes": len(data),
            "chunking": self.chunking,
        }
        document = DocumentRecord(
            document_id=document_id,
            title=(item.title or "").strip() or converted.title,
            source=item.source,
            doc_type=converted.doc_type,
            content_hash=content_hash,
            text=converted.text,
            url=item.url or converted.url,
            date=item.date or converted.date,
            metadata=json_safe(metadata),
        )
        return PreparedDocument(
            item,
            document,
            chunks,
            replaced=existing is not None,
            embeddings=[None] * len(chunks),
            sentences=[None] * len(chunks),
        )

    def write_prepared(self, prepared: PreparedDocument) -> int:
        document = prepared.document
        records = chunk_records(document, prepared.chunks, prepared.embeddings, prepared.sentences)

        def also(connection: Any) -> None:
            for hook in self.hooks:
                hook.on_document(connection, document, records)

        self.store.upsert_document(document, records, also=also)
        return len(records)


class RefreshError(RuntimeError):
    """A hook failed to make a stored, unchanged document's derived data again (its graph, say)."""


class _Run:
    """One ingestion run: the reader thread, the embedding loop in the caller's thread, the writer thread."""

    def __init__(
        self,
        ingestor: Ingestor,
        items: list[IngestItem],
        progress: Callable[[IngestProgress], None] | None,
        force: bool,
        reextract: bool = False,
    ) -> None:
        self.ingestor = ingestor
        self.items = items
        self.progress = progress
        self.force = force
        self.reextract = reextract
        self.report = IngestReport()
        self.lock = threading.Lock()
        self.files_done = 0
        self.chunks_done = 0
        self.started = time.perf_counter()
        # Bounded: the reader stays a few documents ahead of the embedder without holding the whole corpus.
        self.prepared: queue.Queue[Any] = queue.Queue(maxsize=16)
        self.written: queue.Queue[Any] = queue.Queue()

    def execute(self) -> IngestReport:
        reader = threading.Thread(target=self._read, name="ingest-reader", daemon=True)
        writer = threading.Thread(target=self._write, name="ingest-writer", daemon=True)
        reader.start()
        writer.start()
        try:
            self._embed()
        finally:
            self.written.put(_DONE)
            writer.join()
            reader.join(timeout=5)
        self.report.seconds = time.perf_counter() - self.started
        logger.info("Ingestion finished: {summary}", summary=self.report.summary())
        return self.report

    def _finish(self, source: str, outcome: str | None = None, reason: str | None = None, chunks: int = 0) -> None:
        with self.lock:
            if reason is not None:
                self.report.failed.append((source, reason))
            elif outcome in ("skipped", "reextracted"):
                self.report.skipped.append(source)
                if outcome == "reextracted":
                    self.report.reextracted.append(source)
            elif outcome in ("added", "replaced"):
                getattr(self.report, outcome).append(source)
                self.report.chunks_written += chunks
            self.files_done += 1
        self._notify(source)

    def _notify(self, current: str) -> None:
        if self.progress is None:
            return
        with self.lock:
            elapsed = max(time.perf_counter() - self.started, 1e-6)
            snapshot = IngestProgress(
                self.files_done, len(self.items), self.chunks_done, current, self.chunks_done / elapsed
            )
        try:
            self.progress(snapshot)
        except Exception as exc:  # noqa: BLE001 - a broken progress bar must not stop the ingestion
            logger.warning("Progress callback failed: {error}", error=str(exc))

    def _read(self) -> None:
        try:
            for item in self.items:
                try:
                    prepared = self.ingestor.prepare(item, self.force, self.reextract)
                except (ConversionError, RefreshError) as exc:
                    self._finish(item.source, reason=_sentence(str(exc)))
                    continue
                except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run
                    logger.warning(
                        "Could not prepare {source}: {error}", source=printable(item.source), error=repr(exc)
                    )
                    self._finish(item.source, reason=f"It could not be converted ({exc}).")
                    continue
                if prepared in ("skipped", "reextracted"):
                    self._finish(item.source, prepared)
                else:
                    self.prepared.put(prepared)
        finally:
            self.prepared.put(_DONE)

    def _embed(self) -> None:
        model = self.ingestor.model
        batch_size = self.ingestor.batch_size
        waiting: list[PreparedDocument] = []  # documents with chunks not embedded yet, in order
        refs: list[tuple[PreparedDocument, int]] = []  # (document, chunk position) not embedded yet
        reading = True
        # Several batches per call: the model sorts a call's texts by length, so less padding is computed.
        window = batch_size * 4
        while reading or refs:
            while reading and len(refs) < window:
                got = self.prepared.get()
                if got is _DONE:
                    reading = False
                    break
                waiting.append(got)
                refs.extend((got, i) for i in range(len(got.chunks)))
            if not refs:
                continue
            batch, refs = refs[:window], refs[window:]
            started = time.perf_counter()
            results, failures = self._embed_isolated(model, batch, batch_size)
            broken = {id(p): reason for p, reason in failures}
            for prepared in [p for p in waiting if id(p) in broken]:
                waiting.remove(prepared)
                self._finish(prepared.item.source, reason=broken[id(prepared)])
            refs = [(p, i) for p, i in refs if id(p) not in broken]
            batch_ok = [(ref, result) for ref, result in zip(batch, results, strict=True) if id(ref[0]) not in broken]
            self.report.embedding_seconds += time.perf_counter() - started
            for (prepared, i), (vector, spans, rows) in batch_ok:
                prepared.embeddings[i] = vector
                prepared.sentences[i] = (spans, rows)
            with self.lock:
                self.chunks_done += len(batch_ok)
            while waiting and all(v is not None for v in waiting[0].embeddings):
                self.written.put(waiting.pop(0))
            self._notify(batch[-1][0].item.source)

    def _embed_isolated(
        self, model: Any, batch: list[tuple[PreparedDocument, int]], batch_size: int
    ) -> tuple[list[Any], list[tuple[PreparedDocument, str]]]:
        """Per chunk of `batch`: (vector, kept sentence spans, sentence vectors), or None for a chunk that failed;
        and the documents that failed with their reason.

        A failed batch is retried chunk by chunk, so only a chunk that fails on its own fails, and only its document.
        """

        def embed(refs: list[tuple[PreparedDocument, int]]) -> list[Any]:
            # One forward pass gives the chunk vectors and the in-context sentence vectors the ranker uses.
            vectors, sentence_vectors, kept = model.embed_with_sentence_spans(
                [p.chunks[i].text for p, i in refs],
                [chunk_sentences(p.chunks[i]) for p, i in refs],
                batch_size=batch_size,
            )
            return list(zip(vectors, kept, sentence_vectors, strict=True))

        try:
            return embed(batch), []
        except Exception as exc:  # noqa: BLE001 - retried one by one below
            logger.warning("Embedding a batch failed, retrying its chunks one by one: {error}", error=repr(exc))
        results: list[Any] = []
        failures: dict[int, tuple[PreparedDocument, str]] = {}
        for prepared, i in batch:
            if id(prepared) in failures:
                results.append(None)
                continue
            try:
                results.extend(embed([(prepared, i)]))
            except Exception as exc:  # noqa: BLE001 - this chunk's document fails, the others go on
                logger.warning(
                    "Embedding chunk {index} of {source} failed: {error}",
                    index=i,
                    source=prepared.item.source,
                    error=repr(exc),
                )
                results.append(None)
                failures[id(prepared)] = (prepared, f"Embedding its chunk {i + 1} failed ({first_line(exc)}).")
        return results, list(failures.values())

    def _write(self) -> None:
        while True:
            prepared = self.written.get()
            if prepared is _DONE:
                return
            source = prepared.item.source
            try:
                count = self.ingestor.write_prepared(prepared)
            except Exception as exc:  # noqa: BLE001 - report the document, keep writing the others
                logger.warning("Could not write {source}: {error}", source=printable(source), error=repr(exc))
                self._finish(source, reason=f"The knowledge base refused it ({exc}).")
                continue
            with self.lock:
                self.report.document_ids[source] = prepared.document.document_id
            self._finish(source, "replaced" if prepared.replaced else "added", chunks=count)


def _sentence(text: str) -> str:
    text = text.strip() or "It could not be converted."
    return text[:1].upper() + text[1:]


def _unique(items: Iterable[IngestItem]) -> list[IngestItem]:
    """The items in order, the first of each source only."""
    first: dict[str, IngestItem] = {}
    for item in items:
        first.setdefault(item.source, item)
    return list(first.values())


def collect_files(paths: Iterable[Path | str]) -> tuple[list[IngestItem], list[tuple[str, str]]]:
    """Items for the files under `paths` (folders recursively, supported suffixes, no hidden files), and what could
    not be collected as (path, one-sentence reason): paths that do not exist, dangling links, symbolic link loops,
    links to folders (not followed) and folders that cannot be read."""
    items: list[IngestItem] = []
    problems: list[tuple[str, str]] = []
    for given in paths:
        path = Path(given).expanduser()
        reason = _link_problem(path)
        if reason is not None:
            problems.append((path_text(path), reason))
        elif path.is_dir():
            _walk(path.resolve(), items, problems, {_identity(path)})
        elif path.is_file():
            items.append(_file_item(path.resolve()))
        else:
            problems.append((path_text(given), "No such file or folder."))
    return items, problems


def _walk(folder: Path, items: list[IngestItem], problems: list[tuple[str, str]], ancestors: set[tuple]) -> None:
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: os.fsencode(entry.name))
    except OSError as exc:
        problems.append((path_text(folder), f"The folder cannot be read ({exc.strerror or exc})."))
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        try:
            if entry.is_symlink():
                reason = _link_problem(path, ancestors)
                if reason is not None:
                    problems.append((path_text(path), reason))
                    continue
            if entry.is_dir(follow_symlinks=False):
                _walk(path, items, problems, ancestors | {_identity(path)})
            elif entry.is_file() and doc_type_for(entry.name) is not None:
                items.append(_file_item(path.resolve()))
        except OSError as exc:
            problems.append((path_text(path), f"It cannot be read ({exc.strerror or exc})."))


def _link_problem(path: Path, ancestors: set[tuple] | None = None) -> str | None:
    """Why a symbolic link cannot be followed (dangling, a loop, a link to a folder), or None (not a link, or a
    link to a file)."""
    if not path.is_symlink():
        return None
    target = os.readlink(path)
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"It is a symbolic link loop (it points to {path_text(target)}, which leads back to itself)."
        return f"It is a link to {path_text(target)}, which does not exist."
    if path.is_dir():
        if ancestors is not None and _identity(path) in ancestors:
            return f"It is a symbolic link loop (it points back to {path_text(target)}, a folder it is in)."
        if ancestors is not None:
            return f"It is a link to the folder {path_text(target)}; links to folders are not followed."
    return None


def _identity(path: Path) -> tuple:
    stat = path.stat()
    return (stat.st_dev, stat.st_ino)


def path_text(path: Path | str) -> str:
    """A path as text that can always be stored and printed: bytes that are not UTF-8 become `\\xNN` escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _file_item(path: Path) -> IngestItem:
    return IngestItem(
        source=path_text(path), filename=path_text(path.name), path=path, doc_type=doc_type_for(path.name)
    )
