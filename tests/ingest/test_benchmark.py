"""Ingestion keeps the embedder busy: the other stages overlap with it instead of adding to it."""

from __future__ import annotations

import pytest

from ingest.benchmark import measure_ingestion


@pytest.mark.integration
@pytest.mark.slow
class TestMeasureIngestion:
    def test_embedder_stays_busy_and_copies_are_removed(self, database_url, collection_name) -> None:
        from components.knowledge_base.factory import open_knowledge_base

        store = open_knowledge_base(collection=collection_name)
        try:
            result = measure_ingestion(store, target_chunks=24, rounds=2)
            assert result.chunks >= 15 and result.ingest_chunks_per_s > 0 and result.embedder_chunks_per_s > 0
            # Both rates suffer equally from a busy machine; the share of time spent embedding does not.
            assert result.embedder_busy >= 0.75, result.summary()
            assert store.count_documents() == 0 and store.count_chunks() == 0
            with pytest.raises(ValueError, match="target_chunks"):
                measure_ingestion(store, target_chunks=0)
            with pytest.raises(ValueError, match="rounds"):
                measure_ingestion(store, rounds=0)
        finally:
            store.drop()
