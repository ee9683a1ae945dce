"""`GraphIngestHook`: extracts entities and dated facts from every ingested document, in its transaction."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from haystack import logging

from components.graph.extraction import GraphExtractor
from components.graph.factory import graph_store_from_settings, open_extractor
from components.graph.model import DocumentGraph
from components.graph.store import GraphStore
from components.resilience.errors import first_line
from components.settings import Settings, get_settings

logger = logging.getLogger(__name__)

# The stamp's suffix on the empty graph of a document whose extraction failed, with the attempt's number from the
# second on (`+failed`, `+failed2`, ...) and a short hash of the content hash of the text that failed (`@1f0c9a2e`):
# not current, so extracted again, until `max_attempts` failed in a row on the same content.
FAILED = "+failed"
# The stamp's last suffix when the failed extraction read the same text and chunks as the document's stored graph:
# that graph is kept (its facts still cite sentences the document has) until an extraction succeeds or the text
# changes. A failure on a new or changed text removes the earlier graph, whose citations would point at nothing.
KEPT = "+kept"
# How many extractions in a row may fail before a document is left without a graph until forced (`--reextract`).
MAX_ATTEMPTS = 3
FORCE = "`research ingest --reextract` on their files"


def content_mark(document: Any) -> str | None:
    """The short hash of a document's content hash that the stamp of a failed extraction keeps (8 hex digits:
    enough to tell a changed text), or None for a document without a content hash."""
    content_hash = getattr(document, "content_hash", None)
    return hashlib.sha256(str(content_hash).encode("utf-8")).hexdigest()[:8] if content_hash else None


def source_mark(document: Any, chunks: list[Any]) -> str | None:
    """The mark of the text a document's graph is extracted from, stored with the graph: a hash of its content hash
    and its chunks' ids (which hash each chunk's text, so a new chunking, which the facts' citations follow, changes
    it too); None for a document without a content hash."""
    content_hash = getattr(document, "content_hash", None)
    if not content_hash:
        return None
    chunk_ids = "\n".join(str(getattr(chunk, "chunk_id", "")) for chunk in chunks)
    return hashlib.sha256(f"{content_hash}\n{chunk_ids}".encode()).hexdigest()[:16]


def failed_stamp(extractor_stamp: str, attempt: int, mark: str | None, kept: bool = False) -> str:
    """The stamp of a document whose `attempt`-th extraction in a row by `extractor_stamp` failed on the content
    marked `mark` (`spacy/27+failed2@1f0c9a2e`; without a mark, `spacy/27+failed2`), `+kept` at the end when its
    earlier graph of the same text is kept."""
    stamp = extractor_stamp + FAILED + ("" if attempt == 1 else str(attempt))
    return (f"{stamp}@{mark}" if mark else stamp) + (KEPT if kept else "")


def kept_graph(stamp: str | None) -> bool:
    """Whether a document stamped `stamp` keeps its earlier graph after a failed extraction of the same text."""
    return bool(stamp) and FAILED in stamp and stamp.endswith(KEPT)


def failed_attempts(stamp: str | None, extractor_stamp: str, mark: str | None = None) -> int:
    """How many extractions in a row by `extractor_stamp` failed for a document stamped `stamp` (0: none did).

    With the `mark` of the document's present content, only the failures on that content count: a document whose
    text changed since its extraction failed starts again from 0. A stamp without a mark counts for any content.
    """
    found = re.fullmatch(re.escape(extractor_stamp + FAILED) + r"(\d*)(?:@([0-9a-f]+))?(?:\+kept)?", stamp or "")
    if found is None or (mark and found.group(2) and found.group(2) != mark):
        return 0
    return int(found.group(1) or 1)


class GraphUnreadable(RuntimeError):
    """A document's extraction failed and its stored graph could not be read either: its write is refused whole."""


class GraphIngestHook:
    """The ingestion hook that keeps the graph in step with the knowledge base.

    The store is the one given, else the one `settings` (None: the process's, taken as the hook is made) choose
    (`GRAPH_BACKEND`), made on first use; so is the extractor (`GRAPH_EXTRACTOR`).
    `on_document` replaces the document's facts (on the knowledge base's own connection when the graph lives in
    the same PostgreSQL, so chunks and facts commit together); `on_delete` removes them and the entities they
    leave without facts. A document whose extraction failed is tried again by the next ingests, `max_attempts`
    times in all on the same content (a changed text counts afresh); then only `research ingest --reextract` tries it
    again. Until one succeeds, a document whose stored graph was extracted from the same text and chunks (a new
    extractor version, `--reextract`) keeps that graph; one whose text changed has none.

    Usage:
    ```python
    Ingestor(hooks=[GraphIngestHook(collection="research")]).ingest_paths(["notes/"])
    ```
    """

    def __init__(
        self,
        collection: str | None = None,
        store: GraphStore | None = None,
        extractor: GraphExtractor | None = None,
        max_attempts: int = MAX_ATTEMPTS,
        settings: Settings | None = None,
    ) -> None:
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError("max_attempts must be a whole number of at least 1")
        self.collection = collection
        self.max_attempts = max_attempts
        self._store = store
        self._extractor = extractor
        # What the store and the extractor are opened with on first use: taken now, never while ingesting.
        self._settings = settings or get_settings()

    @property
    def store(self) -> GraphStore:
        if self._store is None:
            self._store = graph_store_from_settings(self.collection, self._settings)
        return self._store

    @property
    def extractor(self) -> GraphExtractor:
        if self._extractor is None:
            self._extractor = open_extractor(self._settings)
        return self._extractor

    def is_current(self, document_ids: list[str]) -> dict[str, bool]:
        """Whether each document's graph was made by this extractor version (as well as it can be now: the
        extractor's `current_stamps`), or its extraction by this version failed `max_attempts` times in a row
        (`research ingest --reextract` and the next ingest re-extract the others)."""
        stamps = self.store.extractor_stamps(document_ids)
        current, unimproved = self.extractor.stamp, self.extractor.current_stamps()
        return {
            document_id: stamps.get(document_id) in unimproved
            or failed_attempts(stamps.get(document_id), current) >= self.max_attempts
            for document_id in document_ids
        }

    def ingest_note(self) -> str | None:
        """One sentence for the ingest report and the status when extractions failed: how many documents have no
        graph (a new or changed text), how many kept their earlier graph of the same text, and how to extract them
        again; None when there are none."""
        current = self.extractor.stamp
        empty = kept = given_up = 0
        for stamp, count in self.store.extractor_stamp_counts().items():
            if FAILED in stamp:
                kept += count if kept_graph(stamp) else 0
                empty += 0 if kept_graph(stamp) else count
                given_up += count if failed_attempts(stamp, current) >= self.max_attempts else 0
        if not empty and not kept:
            return None
        parts = []
        if empty:
            documents = "1 document has" if empty == 1 else f"{empty} documents have"
            its = "its" if empty == 1 else "their"
            parts.append(f"{documents} no knowledge graph because extraction of {its} new or changed text failed")
        if kept:
            documents = "1 document kept its" if kept == 1 else f"{kept} documents kept their"
            parts.append(f"{documents} earlier graph because extracting {'it' if kept == 1 else 'them'} again failed")
        told = " and ".join(parts)
        if not given_up:
            return f"{told}; the next ingest tries again."
        return f"{told} ({given_up} of them {self.max_attempts} times in a row, which are tried again only by {FORCE})."

    def _failed_before(self, document: Any) -> int:
        """How many extractions of the document's present content by this extractor version failed in a row before
        this one (a changed text starts again from 0: its id is its source's, its count is its content's)."""
        document_id = str(document.document_id)
        try:
            stamp = self.store.extractor_stamps([document_id]).get(document_id)
        except Exception:  # noqa: BLE001 - the store's own failure is told when the graph is written
            return 0
        return failed_attempts(stamp, self.extractor.stamp, content_mark(document))

    def _keeps_graph(self, document: Any, chunks: list[Any]) -> bool | None:
        """Whether the document's stored graph was extracted from the same text and chunks as it has now (so its facts
        still cite sentences it has): by the mark stored with the graph; for a graph stored before marks were kept,
        by every chunk its facts cite being one of the document's chunks (a chunk's id hashes its text). None when
        the store could not be read: then nothing tells that the graph is stale, and nothing may delete it."""
        document_id = str(document.document_id)
        present = source_mark(document, chunks)
        try:
            stored = self.store.source_marks([document_id]).get(document_id)
            if stored or present is None:
                return stored is not None and stored == present
            stamp = self.store.extractor_stamps([document_id]).get(document_id)
            if not stamp or (FAILED in stamp and not kept_graph(stamp)):
                return False  # no graph, or the empty one of a failed extraction (a kept one is still the graph)
            cited = self._cited_chunks(document_id)
        except Exception:  # noqa: BLE001 - unknown is not "changed": the caller leaves the stored graph as it is
            return None
        return bool(cited) and cited <= {getattr(chunk, "chunk_id", None) for chunk in chunks}

    def _cited_chunks(self, document_id: str) -> set[str | None]:
        """The chunks the document's stored facts cite (None for a fact read in no chunk)."""
        uuids = [entity.uuid for entity in self.store.document_entities(document_id, limit=1000)]
        hits = self.store.entity_facts(uuids, limit=100_000) if uuids else []
        return {hit.fact.chunk_id for hit in hits if hit.fact.document_id == document_id}

    def _shared(self, connection: Any) -> Any:
        # Only the PostgreSQL graph can join the knowledge base's transaction.
        return connection if self.store.backend == "postgres" else None

    def on_document(self, connection: Any, document: Any, chunks: list[Any]) -> None:
        try:
            graph = self.extractor.extract(document, chunks, known_names=self.store.known_names)
        except Exception as exc:  # noqa: BLE001 - a text the extractor cannot read must not block its ingestion
            attempt = self._failed_before(document) + 1
            kept = self._keeps_graph(document, chunks)
            if kept is None:
                # Nothing tells whether the stored graph still fits the text, so nothing is written: the document's
                # whole write fails (its knowledge-base transaction rolls back), and the next ingest tries again.
                raise GraphUnreadable(
                    "its graph extraction failed and the stored graph could not be read to tell whether it still "
                    f"fits the text ({first_line(exc, 200)}); nothing was changed, and the next ingest tries again"
                ) from exc
            logger.warning(
                "Graph extraction failed for {document_id} (attempt {attempt} of {attempts}{after}; {graph}): {reason}",
                document_id=document.document_id,
                attempt=attempt,
                attempts=self.max_attempts,
                after="; tried again only by " + FORCE if attempt >= self.max_attempts else "",
                graph="its earlier graph of the same text is kept" if kept else "it has no graph",
                reason=first_line(exc, 200),
            )
            # Stamped as not current, so the next ingest extracts it again (a passing failure, a database error
            # while the known names were read, must not leave the document without a graph for good), numbered so
            # that one the extractor cannot read is not extracted again on every ingest for ever.
            # The content's hash counts the attempts per text: a changed document's new text gets its own.
            # The earlier graph of the same text stays, restamped; one of another text goes (it cites sentences the
            # document no longer has), replaced by an empty graph without a source mark.
            document_id, mark = str(document.document_id), content_mark(document)
            kept_stamp = failed_stamp(self.extractor.stamp, attempt, mark, kept=True)
            if kept and self.store.restamp_document(document_id, kept_stamp, connection=self._shared(connection)):
                return
            graph = DocumentGraph(document_id=document_id, extractor=failed_stamp(self.extractor.stamp, attempt, mark))
        else:
            graph.source = source_mark(document, chunks) or ""
        # The extractor's own stamp of this graph when it gave one (a graph read without the embeddings says so).
        graph.extractor = graph.extractor or self.extractor.stamp
        self.store.replace_document(graph, connection=self._shared(connection))
        logger.debug(
            "Graph: {facts} facts, {entities} entities from {document_id}",
            facts=len(graph.facts),
            entities=len(graph.entities),
            document_id=document.document_id,
        )

    def on_delete(self, connection: Any, document_id: str) -> None:
        self.store.delete_document(document_id, connection=self._shared(connection))
