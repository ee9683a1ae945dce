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

logger = logging.getLogger(__name__)

# The stamp's suffix on the empty graph of a document whose extraction failed, with the attempt's number from the
# second on (`+failed`, `+failed2`, ...) and a short hash of the content hash of the text that failed (`@1f0c9a2e`):
# not current, so extracted again, until `max_attempts` failed in a row on the same content.
FAILED = "+failed"
# How many extractions in a row may fail before a document is left without a graph until forced (`--reextract`).
MAX_ATTEMPTS = 3
FORCE = "`research ingest --reextract` on their files"


def content_mark(document: Any) -> str | None:
    """The short hash of a document's content hash that the stamp of a failed extraction keeps (8 hex digits:
    enough to tell a changed text), or None for a document without a content hash."""
    content_hash = getattr(document, "content_hash", None)
    return hashlib.sha256(str(content_hash).encode("utf-8")).hexdigest()[:8] if content_hash else None


def failed_stamp(extractor_stamp: str, attempt: int, mark: str | None) -> str:
    """The stamp of a document whose `attempt`-th extraction in a row by `extractor_stamp` failed on the content
    marked `mark` (`spacy/27+failed2@1f0c9a2e`; without a mark, `spacy/27+failed2`)."""
    stamp = extractor_stamp + FAILED + ("" if attempt == 1 else str(attempt))
    return f"{stamp}@{mark}" if mark else stamp


def failed_attempts(stamp: str | None, extractor_stamp: str, mark: str | None = None) -> int:
    """How many extractions in a row by `extractor_stamp` failed for a document stamped `stamp` (0: none did).

    With the `mark` of the document's present content, only the failures on that content count: a document whose
    text changed since its extraction failed starts again from 0. A stamp without a mark counts for any content.
    """
    found = re.fullmatch(re.escape(extractor_stamp + FAILED) + r"(\d*)(?:@([0-9a-f]+))?", stamp or "")
    if found is None or (mark and found.group(2) and found.group(2) != mark):
        return 0
    return int(found.group(1) or 1)


class GraphIngestHook:
    """The ingestion hook that keeps the graph in step with the knowledge base.

    The store is the one given, else the one the settings choose (`GRAPH_BACKEND`), made on first use.
    `on_document` replaces the document's facts (on the knowledge base's own connection when the graph lives in
    the same PostgreSQL, so chunks and facts commit together); `on_delete` removes them and the entities they
    leave without facts. A document whose extraction failed is tried again by the next ingests, `max_attempts`
    times in all on the same content (a changed text counts afresh); then only `research ingest --reextract` tries it
    again.

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
    ) -> None:
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError("max_attempts must be a whole number of at least 1")
        self.collection = collection
        self.max_attempts = max_attempts
        self._store = store
        self._extractor = extractor

    @property
    def store(self) -> GraphStore:
        if self._store is None:
            self._store = graph_store_from_settings(self.collection)
        return self._store

    @property
    def extractor(self) -> GraphExtractor:
        if self._extractor is None:
            self._extractor = open_extractor()
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
        """One sentence for the ingest report and the status when documents have no graph because their extraction
        failed: how many, and how to extract them again; None when there are none."""
        current = self.extractor.stamp
        failed = given_up = 0
        for stamp, count in self.store.extractor_stamp_counts().items():
            if FAILED in stamp:
                failed += count
                given_up += count if failed_attempts(stamp, current) >= self.max_attempts else 0
        if not failed:
            return None
        documents = "1 document has" if failed == 1 else f"{failed} documents have"
        if not given_up:
            return f"{documents} no knowledge graph because extraction failed; the next ingest tries again."
        return (
            f"{documents} no knowledge graph because extraction failed ({given_up} of them {self.max_attempts} times "
            f"in a row, which are tried again only by {FORCE})."
        )

    def _failed_before(self, document: Any) -> int:
        """How many extractions of the document's present content by this extractor version failed in a row before
        this one (a changed text starts again from 0: its id is its source's, its count is its content's)."""
        document_id = str(document.document_id)
        try:
            stamp = self.store.extractor_stamps([document_id]).get(document_id)
        except Exception:  # noqa: BLE001 - the store's own failure is told when the graph is written
            return 0
        return failed_attempts(stamp, self.extractor.stamp, content_mark(document))

    def _shared(self, connection: Any) -> Any:
        # Only the PostgreSQL graph can join the knowledge base's transaction.
        return connection if self.store.backend == "postgres" else None

    def on_document(self, connection: Any, document: Any, chunks: list[Any]) -> None:
        try:
            graph = self.extractor.extract(document, chunks, known_names=self.store.known_names)
        except Exception as exc:  # noqa: BLE001 - a text the extractor cannot read must not block its ingestion
            attempt = self._failed_before(document) + 1
            logger.warning(
                "Graph extraction failed for {document_id} (attempt {attempt} of {attempts}{after}): {reason}",
                document_id=document.document_id,
                attempt=attempt,
                attempts=self.max_attempts,
                after="; tried again only by " + FORCE if attempt >= self.max_attempts else "",
                reason=first_line(exc, 200),
            )
            # Stamped as not current, so the next ingest extracts it again (a passing failure, a database error
            # while the known names were read, must not leave the document without a graph for good), numbered so
            # that one the extractor cannot read is not extracted again on every ingest for ever.
            # The content's hash counts the attempts per text: a changed document's new text gets its own.
            stamp = failed_stamp(self.extractor.stamp, attempt, content_mark(document))
            graph = DocumentGraph(document_id=str(document.document_id), extractor=stamp)
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
