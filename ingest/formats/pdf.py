"""PDF: text per page with Haystack's `PyPDFToDocument` (pypdf), running headers and footers removed; title and
creation date from the PDF's document information."""

from __future__ import annotations

import io

from haystack.components.converters import PyPDFToDocument
from haystack.dataclasses import ByteStream

from ingest.formats.common import ConversionError, title_from_filename
from ingest.structure import ConvertedDocument, TextBuilder, paragraphs, remove_repeated_page_lines


def convert_pdf(data: bytes, filename: str) -> ConvertedDocument:
    """Convert a PDF; every paragraph keeps its 1-based page number."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    if not data.lstrip().startswith(b"%PDF"):
        raise ConversionError("it is not a PDF file (no %PDF header).")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ConversionError("it is an encrypted PDF; decrypt it first.")
        info = reader.metadata
        page_count = len(reader.pages)
    except ConversionError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise ConversionError(f"it could not be read as a PDF ({exc}).") from exc

    documents = PyPDFToDocument().run(sources=[ByteStream(data=data, meta={"file_path": filename})])["documents"]
    if not documents or not (documents[0].content or "").strip():
        raise ConversionError("no text could be extracted from it (a scanned PDF needs OCR first).")
    pages = remove_repeated_page_lines((documents[0].content or "").split("\f"))

    builder = TextBuilder()
    for page_number, page in enumerate(pages, start=1):
        for paragraph in paragraphs(page):
            builder.paragraph(paragraph, page_number)

    title = str(info.title or "").strip() if info else ""
    date = None
    metadata: dict[str, object] = {"pages": page_count}
    if info:
        try:
            created = info.creation_date
            date = created.date() if created else None
        except (ValueError, TypeError):
            date = None  # a malformed /CreationDate is common and not worth failing the file for
        if info.author:
            metadata["author"] = str(info.author)
    return builder.build("pdf", title=title or title_from_filename(filename), date=date, metadata=metadata)
