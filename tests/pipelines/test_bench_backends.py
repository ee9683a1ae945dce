"""`bench_backends`: every backend measured on the same synthetic base, next to the numpy floors."""

from __future__ import annotations

import numpy as np
import pytest

from pipelines.bench_backends import SyntheticBase, bench_backends


class TestSyntheticBase:
    def test_floors_find_the_exact_answers(self):
        base = SyntheticBase(300, 10)
        assert base.vectors.shape == (300, 384)
        assert np.allclose(np.linalg.norm(base.vectors, axis=1), 1.0, atol=1e-5)
        for query in base.dense_queries:
            top = base.numpy_dense(query)
            scores = base.vectors @ query
            assert list(top) == list(np.argsort(-scores)[:10])
        for query in base.keyword_queries:
            top = base.numpy_keyword(query)
            words = set(query.split())
            assert words & set(base.texts[top[0]].split())  # the best chunk holds a query term
        documents = list(base.documents())
        assert len(documents) == 30 and sum(len(chunks) for _, chunks in documents) == 300


@pytest.mark.integration
class TestBenchBackends:
    def test_reports_every_backend_with_ratios_to_numpy(self, database_url):
        lines: list[str] = []
        report = bench_backends(["pgvector", "milvus", "qdrant"], [200], 10, lines.append)
        row = report["sizes"][200]
        assert "synthetic" in report["vectors"] and set(row) == {"numpy", "pgvector", "milvus", "qdrant"}
        assert row["numpy"]["dense_p50_ms"] > 0
        for backend in ("pgvector", "milvus", "qdrant"):
            result = row[backend]
            assert result["write_chunks_per_s"] > 0 and result["dense_p95_ms"] >= result["dense_p50_ms"] > 0
            assert result["keyword_p50_ms"] > 0
            assert result["dense_p50_ratio"] == pytest.approx(
                result["dense_p50_ms"] / row["numpy"]["dense_p50_ms"], rel=0.05, abs=0.1
            )
        # Milvus (flat index) and Qdrant local mode search exactly; pgvector searches exactly below its index size.
        assert row["milvus"]["dense_recall_at_10"] == 1.0 and row["qdrant"]["dense_recall_at_10"] == 1.0
        assert any(line.strip().startswith("numpy") for line in lines)
        assert sum(line.strip().startswith(("pgvector", "milvus", "qdrant")) for line in lines) == 3

    def test_bad_arguments_are_clear_errors(self):
        with pytest.raises(ValueError, match="unknown backend"):
            bench_backends(["oracle"], [1000], 10, print)
        with pytest.raises(ValueError, match="sizes must be at least"):
            bench_backends(["milvus"], [10], 10, print)


@pytest.mark.integration
def test_the_pgvector_row_is_measured_through_the_knowledge_base(database_url):
    report = bench_backends(["pgvector"], [200], 10, lambda line: None)
    result = report["sizes"][200]["pgvector"]
    assert result["write_chunks_per_s"] > 0 and result["dense_p95_ms"] >= result["dense_p50_ms"] > 0
    assert result["keyword_p50_ms"] > 0
    # Its writes against a COPY of the same rows into a bare table, interleaved with them in the same run.
    assert result["write_floor_chunks_per_s"] > 0
    assert result["ready_vs_floor"] >= result["write_vs_floor"] > 0
