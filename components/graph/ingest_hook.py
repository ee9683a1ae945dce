"""`GraphIngestHook`: extracts entities and dated facts from every ingested document, in its transaction."""

from __future__ import annotations

from typing import Any

from haystack import logging

from components.graph.extraction import GraphExtractor
from components.graph.factory import graph_store_from_settings, open_extractor
from components.graph.model import DocumentGraph
from components.graph.store import GraphStore
from components.redaction import cut

logger = logging.getLogger(__name__)

# The stamp's suffix on the empty graph of a document whose extraction failed: never current, so extracted again.
FAILED = "+failed"


class GraphIngestHook:
    """The ingestion hook that keeps the graph in step with the knowledge base.

    The store is the one given, else the one the settings choose (`GRAPH_BACKEND`), made on first use.
    `on_document` replaces the document's facts (on the knowledge base's own connection when the graph lives in
    the same PostgreSQL, so chunks and facts commit together); `on_delete` removes them and the entities they
    leave without facts.

    Usage:
    ```python
    Ingestor(hooks=[GraphIngestHook(collection="research")]).ingest_paths(["notes/"])
    ```
    """

    def __init__(
        self, collection: str | None = None, store: GraphStore | None = None, extractor: GraphExtractor | None = None
    ) -> None:
        self.collection = collection
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
        """Whether each document's graph was made by this extractor version (`research ingest --reextract`
        and the next ingest re-extract the others)."""
        stamps = self.store.extractor_stamps(document_ids)
        return {document_id: stamps.get(document_id) == self.extractor.stamp for document_id in document_ids}

    def _shared(self, connection: Any) -> Any:
        # Only the PostgreSQL graph can join the knowledge base's transaction.
        return connection if self.store.backend == "postgres" else None

    def on_document(self, connection: Any, document: Any, chunks: list[Any]) -> None:
        try:
            graph = self.extractor.extract(document, chunks, known_names=self.store.known_names)
        except Exception as exc:  # noqa: BLE001 - a text the extractor cannot read must not block its ingestion
            logger.warning(
                "Graph extraction failed for {document_id}: {reason}",
                document_id=document.document_id,
                reason=cut(str(exc), 200),
            )
            # Stamped as not current, so the next ingest extracts it again (a passing failure, a database error
            # while the known names were read, must not leave the document without a graph for good).
            graph = DocumentGraph(document_id=str(document.document_id), extractor=self.extractor.stamp + FAILED)
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
