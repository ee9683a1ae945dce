"""`FileIngester`: ingestion as a Haystack component, for the `ingest` pipeline of the catalog and Hayhooks."""

from __future__ import annotations

from typing import Any

from haystack import component, default_from_dict, logging

from components.knowledge_base.attribution import check_document_store
from components.knowledge_base.factory import document_field_of, document_store_for, knowledge_base_for
from components.serialization import init_parameters_to_dict
from ingest.ingestor import Ingestor

logger = logging.getLogger(__name__)


@component
class FileIngester:
    """Ingests files and folders into the knowledge base through the one `Ingestor`, incrementally.

    A file that cannot be converted is listed in the report's `failed` with a one-sentence reason; the component
    never raises for bad input.

    `document_store` is the integration's store the chunks are written to (see `KnowledgeBaseSearch`); without one,
    the store `KB_BACKEND` chooses for `collection`.

    Usage:
    ```python
    ingester = FileIngester(collection="research")
    ingester.warm_up()
    result = ingester.run(sources=["notes/", "paper.pdf"])
    result["report"]["added"], result["document_ids"]
    ```
    """

    def __init__(
        self,
        document_store: Any = None,
        collection: str | None = None,
        force: bool = False,
        document_field: str | None = None,
    ) -> None:
        if collection is not None and (not isinstance(collection, str) or not collection.strip()):
            raise ValueError("collection must be a non-empty name, or None for the settings' KB_COLLECTION")
        if not isinstance(force, bool):
            raise ValueError(f"force must be True or False, not {force!r}")
        self.document_store = check_document_store(document_store)
        self.collection = collection
        self.force = force
        # For an attached collection: the meta field naming a chunk's document (None: KB_DOCUMENT_FIELD as the
        # ingester is built).
        self.document_field = document_field_of(document_field)
        self._ingestor: Ingestor | None = None

    def warm_up(self) -> None:
        """Open the knowledge base and load the embedding model (once)."""
        if self._ingestor is None:
            document_store = self.document_store
            if document_store is None:
                document_store = document_store_for(None, self.collection)
            self._ingestor = Ingestor(store=knowledge_base_for(document_store, document_field=self.document_field))
            self._ingestor.warm_up()

    @component.output_types(report=dict, document_ids=list[str])
    def run(self, sources: list[str], force: bool | None = None) -> dict[str, Any]:
        """Ingest `sources` (paths of files or folders).

        :returns: `report`: the `IngestReport` as a dict (added, replaced, skipped, failed with reasons,
            chunks_written, seconds); `document_ids`: the ids of the documents written in this run.
        """
        self.warm_up()
        assert self._ingestor is not None
        report = self._ingestor.ingest_paths(list(sources or []), force=self.force if force is None else force)
        logger.info("Ingested {count} sources: {summary}", count=len(sources or []), summary=report.summary())
        return {"report": report.to_dict(), "document_ids": list(report.document_ids.values())}

    def to_dict(self) -> dict[str, Any]:
        return init_parameters_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileIngester:
        return default_from_dict(cls, data)
