"""Real PDF and Word files written by the tests themselves (no fixtures checked in)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, pages: list[list[str]], title: str | None = None, created: dt.datetime | None = None) -> Path:
    """A valid PDF with one text line per entry on each page (Helvetica), built with pypdf's object model."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    font_ref = writer._add_object(font)
    for lines in pages:
        page = writer.add_blank_page(width=612, height=792)
        body = ["BT", "/F1 11 Tf", "14 TL", "72 740 Td"]
        for line in lines:
            body += [f"({_escape(line)}) Tj", "T*"]
        body.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(body).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font_ref})}
        )
    metadata = {}
    if title:
        metadata["/Title"] = title
    if created:
        metadata["/CreationDate"] = created.strftime("D:%Y%m%d%H%M%S+00'00'")
    if metadata:
        writer.add_metadata(metadata)
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def write_docx(path: Path, title: str | None = None, created: dt.datetime | None = None) -> Path:
    """A Word document with a title, two headed sections, a paragraph each and a table."""
    import docx

    document = docx.Document()
    document.add_heading("Milvus and Zilliz", level=1)
    document.add_paragraph("Zilliz released Milvus as open source in October 2019. It joined the LF AI Foundation.")
    document.add_heading("Milvus 2.0", level=2)
    document.add_paragraph("Milvus 2.0 reached general availability in January 2022.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Version", "Year"
    table.cell(1, 0).text, table.cell(1, 1).text = "2.0", "2022"
    if title:
        document.core_properties.title = title
    if created:
        document.core_properties.created = created
    document.save(str(path))
    return path
