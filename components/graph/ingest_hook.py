"""`GraphIngestHook`: extracts entities and dated facts from every ingested document, in its transaction."""

from __future__ import annotations

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
# second on (`+failed`, `+failed2`, ...): not current, so extracted again, until `max_attempts` failed in a row.
FAILED = "+failed"
# How many extractions in a row may fail before a document is left without a graph until forced (`--reextract`).
MAX_ATTEMPTS = 3
FORCE = "`research ingest --reextract` on their files"


def failed_attempts(stamp: str | None, extractor_stamp: str) -> int:
    """How many extractions in a row by `extractor_stamp` failed for a document stamped `stamp` (0: none did)."""
    found = re.fullmatch(re.escape(extractor_stamp + FAILED) + r"(\d*)", stamp or "")
    return int(found.group(1) or 1) if found else 0


class GraphIngestHook:
    """The ingestion hook that keeps the graph in step with the knowledge base.

    The store is the one given, else the one the settings choose (`GRAPH_BACKEND`), made on first use.
    `on_document` replaces the document's facts (on the knowledge base's own connection when the graph lives in
    the same PostgreSQL, so chunks and facts commit together); `on_delete` removes them and the entities they
    leave without facts. A document whose extraction failed is tried again by the next ingests, `max_attempts`
    times in all; then only `research ingest --reextract` tries it again.

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

    def _failed_before(self, document_id: str) -> int:
        """How many extractions of the document by this extractor version failed in a row before this one."""
        try:
            stamp = self.store.extractor_stamps([document_id]).get(document_id)
        except Exception:  # noqa: BLE001 - the store's own failure is told when the graph is written
            return 0
        return failed_attempts(stamp, self.extractor.stamp)

    def _shared(self, connection: Any) -> Any:
        # Only the PostgreSQL graph can join the knowledge base's transaction.
        return connection if self.store.backend == "postgres" else None

    def on_document(self, connection: Any, document: Any, chunks: list[Any]) -> None:
        try:
            graph = self.extractor.extract(document, chunks, known_names=self.store.known_names)
        except Exception as exc:  # noqa: BLE001 - a text the extractor cannot read must not block its ingestion
            attempt = self._failed_before(str(document.document_id)) + 1
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
            suffix = FAILED if attempt == 1 else f"{FAILED}{attempt}"
            graph = DocumentGraph(document_id=str(document.document_id), extractor=self.extractor.stamp + suffix)
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
