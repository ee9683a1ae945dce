"""PDF: text per page with pypdf, running headers and footers removed; title and
creation date from the PDF's document information."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from components.ingestion.formats.common import ConversionError, title_from_filename
from components.ingestion.structure import ConvertedDocument, TextBuilder, paragraphs, remove_repeated_page_lines

if TYPE_CHECKING:
    from components.ingestion.limits import IngestLimits


def convert_pdf(data: bytes, filename: str, limits: IngestLimits | None = None) -> ConvertedDocument:
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

    # Page by page, so a PDF whose pages expand to too much text stops at the limit.
    texts: list[str] = []
    extracted = 0
    try:
        for page in reader.pages:
            texts.append(page.extract_text() or "")
            extracted += len(texts[-1])
            if limits is not None:
                limits.check_chars(extracted)
    except ConversionError:
        raise
    except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds of errors on damaged content streams
        raise ConversionError(f"its text could not be extracted ({exc}).") from exc
    if not any(text.strip() for text in texts):
        raise ConversionError("no text could be extracted from it (a scanned PDF needs OCR first).")
    pages = remove_repeated_page_lines(texts)

    builder = TextBuilder(limits)
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
