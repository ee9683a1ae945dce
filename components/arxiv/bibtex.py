"""BibTeX for arXiv papers: from an `ArxivPaper`, or from any arXiv chunk (its Document or ContextChunk)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from haystack import Document

from components.arxiv.access import ArxivPaper
from components.contracts import ContextChunk, SourceType

_SPECIAL = str.maketrans(
    {
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "\\": r"\textbackslash{}",
    }
)
_SKIP_WORDS = {"a", "an", "the", "on", "of", "for", "in", "and", "to", "with", "is", "are", "towards", "toward"}


def _escape(text: str) -> str:
    return " ".join(text.split()).translate(_SPECIAL)


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def _author(name: str) -> str:
    """`Last, First` for a person; a collaboration or one-word name stays whole, in braces."""
    parts = name.split()
    if len(parts) < 2 or re.search(r"\b(collaboration|consortium|team|group)\b", name, re.IGNORECASE):
        return "{" + _escape(name) + "}"
    return f"{_escape(parts[-1])}, {_escape(' '.join(parts[:-1]))}"


def citation_key(authors: list[str], year: str, title: str) -> str:
    """`lastname` + `year` + first significant title word, ASCII letters and digits only."""
    first = authors[0].split()[-1] if authors and authors[0].split() else "anon"
    if authors and re.search(r"\b(collaboration|consortium)\b", authors[0], re.IGNORECASE):
        first = authors[0].split()[0]
    word = next((w for w in re.findall(r"[A-Za-z0-9]+", _ascii(title)) if w.lower() not in _SKIP_WORDS), "paper")
    return re.sub(r"[^a-z0-9]", "", _ascii(first).lower()) + year + re.sub(r"[^a-z0-9]", "", word.lower())


def bibtex_entry(
    paper_id: str,
    title: str,
    authors: list[str],
    published: str | None,
    primary_category: str | None = None,
    doi: str | None = None,
    journal_ref: str | None = None,
) -> str:
    """A `@misc` entry in the form arXiv itself recommends (eprint, archivePrefix, primaryClass)."""
    year = (published or "")[:4]
    fields = [
        # Inner braces keep the title's capitals (NLP, BERT) as written when a style lowercases titles.
        ("title", "{" + _escape(title) + "}"),
        ("author", " and ".join(_author(name) for name in authors) or "{Anonymous}"),
        ("year", year),
        ("eprint", paper_id),
        ("archivePrefix", "arXiv"),
    ]
    if primary_category:
        fields.append(("primaryClass", primary_category))
    if doi:
        fields.append(("doi", doi))
    if journal_ref:
        fields.append(("note", _escape(journal_ref)))
    fields.append(("url", f"https://arxiv.org/abs/{paper_id}"))
    width = max(len(name) for name, _ in fields)
    body = ",\n".join(f"  {name.ljust(width)} = {{{value}}}" for name, value in fields if value)
    return f"@misc{{{citation_key(authors, year or 'nd', title)},\n{body}\n}}\n"


def bibtex_for_paper(paper: ArxivPaper) -> str:
    """BibTeX for a paper the API returned."""
    return bibtex_entry(
        paper.paper_id,
        paper.title,
        paper.authors,
        paper.published.isoformat() if paper.published else None,
        paper.primary_category or (paper.categories[0] if paper.categories else None),
        paper.doi,
        paper.journal_ref,
    )


def bibtex_for_chunk(chunk: ContextChunk | Document | dict[str, Any]) -> str:
    """BibTeX for the paper an arXiv chunk came from (a ContextChunk, its Document, or a Document's dict / meta).

    Raises `ValueError` when the chunk is not from arXiv.
    """
    if isinstance(chunk, ContextChunk):
        meta: dict[str, Any] = {**chunk.metadata, "source_type": chunk.source_type.value}
    elif isinstance(chunk, Document):
        meta = dict(chunk.meta or {})
    elif isinstance(chunk, dict):
        meta = dict(chunk.get("meta") or chunk)
    else:
        raise ValueError("BibTeX needs an arXiv chunk (a ContextChunk or a Document)")
    if meta.get("source_type", SourceType.ARXIV.value) != SourceType.ARXIV.value or not meta.get("paper_id"):
        raise ValueError("BibTeX is made for arXiv chunks only; this chunk is not from arXiv")
    return bibtex_entry(
        meta["paper_id"],
        meta.get("paper_title") or meta.get("source_title") or meta["paper_id"],
        list(meta.get("authors") or []),
        meta.get("publication_date"),
        meta.get("primary_category") or next(iter(meta.get("arxiv_categories") or []), None),
        meta.get("doi"),
        meta.get("journal_ref"),
    )
