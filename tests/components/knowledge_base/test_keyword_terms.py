"""The offline BM25 sparse vectors Qdrant's keyword search runs on."""

from __future__ import annotations

import pytest

from components.knowledge_base.keyword_terms import (
    document_sparse_vector,
    query_sparse_vector,
    term_index,
    terms,
)


class TestKeywordTerms:
    def test_terms_drop_stop_words_and_case(self):
        assert terms("The HNSW index, and the Graph!") == ["hnsw", "index", "graph"]
        assert terms("the of and") == [] and terms("") == []

    def test_term_index_is_stable_and_31_bit(self):
        assert term_index("sourdough") == term_index("sourdough") != term_index("bread")
        assert 0 <= term_index("sourdough") < 2**31

    def test_document_weights_saturate_with_frequency_and_shrink_with_length(self):
        indices, values = document_sparse_vector("bread bread bread crust")
        weights = dict(zip(indices, values, strict=True))
        assert indices == sorted(indices) and len(indices) == 2
        assert weights[term_index("bread")] > weights[term_index("crust")]
        assert weights[term_index("bread")] < 3 * weights[term_index("crust")]  # BM25 saturation, not raw counts
        long_indices, long_values = document_sparse_vector("crust " + " ".join(f"word{i}" for i in range(300)))
        long_crust = dict(zip(long_indices, long_values, strict=True))[term_index("crust")]
        assert long_crust < weights[term_index("crust")]

    def test_query_vector_holds_each_term_once(self):
        indices, values = query_sparse_vector("Bread and bread crust")
        assert sorted(indices) == sorted({term_index("bread"), term_index("crust")})
        assert values == pytest.approx([1.0, 1.0])
        assert query_sparse_vector("the and") == ([], [])
