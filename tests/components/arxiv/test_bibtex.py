"""BibTeX for arXiv papers and chunks."""

from __future__ import annotations

import datetime as dt

import pytest

from components.arxiv import ArxivPaper, ArxivSearch, bibtex_for_chunk, bibtex_for_paper
from components.contracts import ContextChunk, chunk_to_document


def paper(**changes) -> ArxivPaper:
    values = dict(
        paper_id="2005.11401",
        version="v4",
        title="Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks",
        authors=["Patrick Lewis", "Ethan Perez", "Heinrich Küttler"],
        abstract="An abstract.",
        published=dt.date(2020, 5, 22),
        updated=dt.date(2021, 4, 12),
        categories=["cs.CL", "cs.LG"],
        primary_category="cs.CL",
        arxiv_url="https://arxiv.org/abs/2005.11401",
        pdf_url="https://arxiv.org/pdf/2005.11401v4",
        doi=None,
    )
    values.update(changes)
    return ArxivPaper(**values)


class TestBibtex:
    def test_a_paper_entry(self):
        entry = bibtex_for_paper(paper())
        assert entry.startswith("@misc{lewis2020retrieval,\n")
        assert "  title         = {{Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks}},\n" in entry
        assert "author        = {Lewis, Patrick and Perez, Ethan and Küttler, Heinrich}" in entry
        for line in (
            "year          = {2020}",
            "eprint        = {2005.11401}",
            "archivePrefix = {arXiv}",
            "primaryClass  = {cs.CL}",
            "url           = {https://arxiv.org/abs/2005.11401}",
        ):
            assert line in entry
        assert "doi" not in entry
        assert entry.count("{") == entry.count("}")

    def test_special_characters_collaborations_and_dois(self):
        entry = bibtex_for_paper(
            paper(
                title="50% of R&D_costs: a #1 study",
                authors=["H1 Collaboration"],
                doi="10.1140/epjc/s2003-01326-x",
                paper_id="hep-ex/0307015",
            )
        )
        assert r"50\% of R\&D\_costs: a \#1 study" in entry
        assert "author        = {{H1 Collaboration}}" in entry
        assert "doi           = {10.1140/epjc/s2003-01326-x}" in entry
        assert entry.startswith("@misc{h12020")

    @pytest.mark.integration
    def test_any_arxiv_chunk_gives_its_papers_entry(self, arxiv_server):
        documents = ArxivSearch(api_url=arxiv_server.url, min_interval_s=0.0, timeout_s=10.0).run(
            query="dense passage retrieval"
        )["documents"]
        entry = bibtex_for_chunk(documents[0])
        assert "eprint        = {2004.04906}" in entry
        assert "doi           = {10.18653/v1/2020.emnlp-main.550}" in entry
        assert bibtex_for_chunk(documents[0].to_dict()) == entry
        assert bibtex_for_chunk(documents[0].meta) == entry

    def test_other_chunks_are_refused(self):
        web = ContextChunk(
            id="w",
            source_type="web",
            text="a page",
            semantic_relevance=0.5,
            source_id="u",
            metadata={
                "domain": "example.org",
                "page_url": "https://example.org",
                "fetch_timestamp": "2026-01-01T00:00:00Z",
            },
        )
        with pytest.raises(ValueError, match="arXiv chunks only"):
            bibtex_for_chunk(web)
        with pytest.raises(ValueError, match="arXiv chunks only"):
            bibtex_for_chunk(chunk_to_document(web))
