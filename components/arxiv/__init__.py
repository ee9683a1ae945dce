"""The arXiv source: search as a pipeline component, paper ingestion and BibTeX."""

from components.arxiv.access import ArxivAccess, ArxivPaper, normalise_id
from components.arxiv.bibtex import bibtex_entry, bibtex_for_chunk, bibtex_for_paper
from components.arxiv.ingest import ArxivIngestOutcome, fetch_papers, ingest_arxiv
from components.arxiv.search import ArxivSearch

__all__ = [
    "ArxivAccess",
    "ArxivIngestOutcome",
    "ArxivPaper",
    "ArxivSearch",
    "bibtex_entry",
    "bibtex_for_chunk",
    "bibtex_for_paper",
    "fetch_papers",
    "ingest_arxiv",
    "normalise_id",
]
