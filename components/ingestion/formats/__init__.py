"""Turning the bytes of a file into a `ConvertedDocument`, one module per format.

`convert_bytes(data, filename)` picks the format by suffix (or `doc_type`); every failure is a `ConversionError`
whose message is one sentence an analyst can act on.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from components.ingestion.formats.common import ConversionError
from components.ingestion.formats.docx import convert_docx
from components.ingestion.formats.markdown import convert_markdown
from components.ingestion.formats.pdf import convert_pdf
from components.ingestion.formats.text import convert_text
from components.ingestion.structure import ConvertedDocument

if TYPE_CHECKING:
    from components.ingestion.limits import IngestLimits

SUFFIX_TYPES = {
    ".txt": "txt",
    ".text": "txt",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}
SUPPORTED_SUFFIXES = frozenset(SUFFIX_TYPES)


def doc_type_for(filename: str) -> str | None:
    """The document type of a file name by its suffix, or None when the format is not supported."""
    return SUFFIX_TYPES.get(Path(filename).suffix.lower())


def convert_bytes(
    data: bytes, filename: str, doc_type: str | None = None, limits: IngestLimits | None = None
) -> ConvertedDocument:
    """Convert one file's bytes; `doc_type` overrides the suffix (txt, md, html, pdf, docx, web, arxiv).

    With `limits`, a file over the byte limit is refused before it is parsed, and extraction stops at the
    character limit (a `ConversionError` saying which limit).
    """
    doc_type = doc_type or doc_type_for(filename)
    if doc_type is None:
        supported = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise ConversionError(f"{Path(filename).suffix or 'files without a suffix'} is not supported ({supported}).")
    if limits is not None:
        limits.check_bytes(len(data))
    if not data.strip():
        raise ConversionError("the file is empty.")
    if doc_type in ("txt", "arxiv"):
        converted = convert_text(data, filename, limits)
    elif doc_type in ("md", "web"):
        converted = convert_markdown(data, filename, limits)
    elif doc_type == "html":
        from components.ingestion.formats.html import convert_html  # late: bs4, ~0.2 s on `docs list`

        converted = convert_html(data, filename, limits)
    elif doc_type == "pdf":
        converted = convert_pdf(data, filename, limits)
    elif doc_type == "docx":
        converted = convert_docx(data, filename, limits)
    else:
        raise ConversionError(f"document type {doc_type!r} is not one of txt, md, html, pdf, docx, web, arxiv.")
    if converted.empty:
        raise ConversionError("no text could be extracted from it.")
    converted.doc_type = doc_type
    return converted


__all__ = ["SUPPORTED_SUFFIXES", "ConversionError", "convert_bytes", "doc_type_for"]
