"""Exports of pinned evidence: a Markdown brief with numbered references, and BibTeX for arXiv chunks."""

from __future__ import annotations

from typing import Any

from components.arxiv.bibtex import bibtex_for_chunk
from components.contracts import ContextChunk, SourceType


def _reference(number: int, chunk: ContextChunk) -> str:
    parts = [f"[{number}] {chunk.source_title or chunk.source_id}"]
    authors = chunk.metadata.get("authors")
    if authors:
        parts.append(", ".join(authors[:3]) + (" et al." if len(authors) > 3 else ""))
    if chunk.source_date:
        parts.append(chunk.source_date.isoformat())
    parts.append(chunk.source_type.value)
    if chunk.source_url:
        parts.append(f"<{chunk.source_url}>")
    return ". ".join(parts)


def markdown_brief(items: list[dict[str, Any]], title: str = "Evidence brief") -> str:
    """A Markdown brief: each pinned chunk quoted with its note and a numbered reference list.

    `items` are dicts with `chunk` (ContextChunk), `question` and `note`.
    """
    lines = [f"# {title}", ""]
    references: list[str] = []
    numbers: dict[str, int] = {}
    for item in items:
        chunk: ContextChunk = item["chunk"]
        number = numbers.setdefault(chunk.source_id, len(numbers) + 1)
        if number > len(references):
            references.append(_reference(number, chunk))
        lines.append(f"## {item.get('question') or 'Evidence'}")
        lines.append("")
        lines.extend(f"> {line}" if line else ">" for line in chunk.text.splitlines())
        lines.append(f"> [{number}]")
        if item.get("note"):
            lines.extend(["", f"**Note:** {item['note']}"])
        lines.append("")
    lines.append("## References")
    lines.append("")
    lines.extend(references)
    return "\n".join(lines) + "\n"


def bibtex_for_chunks(chunks: list[ContextChunk]) -> str:
    """BibTeX entries for the distinct arXiv papers among `chunks` (empty when there are none)."""
    seen: set[str] = set()
    entries = []
    for chunk in chunks:
        if chunk.source_type is not SourceType.ARXIV:
            continue
        paper_id = chunk.metadata.get("paper_id")
        if not paper_id or paper_id in seen:
            continue
        seen.add(paper_id)
        entries.append(bibtex_for_chunk(chunk).strip())
    return "\n\n".join(entries) + ("\n" if entries else "")
