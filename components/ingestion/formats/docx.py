"""Word documents (.docx) with python-docx: heading styles as sections, tables as rows, title and creation date
from the core properties.

Haystack's `DOCXToDocument` flattens headings into plain paragraphs; section titles need the paragraph styles.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from typing import TYPE_CHECKING

from components.ingestion.formats.common import ConversionError, title_from_filename
from components.ingestion.structure import ConvertedDocument, TextBuilder

if TYPE_CHECKING:
    from components.ingestion.limits import IngestLimits

_TEMPLATE_CREATED = dt.datetime(2013, 12, 23, 23, 15)


def convert_docx(data: bytes, filename: str, limits: IngestLimits | None = None) -> ConvertedDocument:
    """Convert a .docx file in reading order (paragraphs and tables as they appear)."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table
    from docx.text.paragraph import Paragraph
    from lxml import etree

    deadline = limits.deadline() if limits is not None else None

    try:
        if limits is not None and deadline is not None:
            # A .docx is a zip: refuse a bomb from its directory, before anything is unpacked, then count the
            # elements of its XML parts streaming (millions of empty paragraphs fit in a small file).
            with zipfile.ZipFile(io.BytesIO(data)) as package:
                limits.check_unpacked(sum(info.file_size for info in package.infolist()))
                parts = [name for name in package.namelist() if name.startswith("word/") and name.endswith(".xml")]
                limits.check_xml_elements(
                    (package.open(name) for name in parts), deadline, "Word elements (paragraphs, runs, cells)"
                )
        document = docx.Document(io.BytesIO(data))
    except ConversionError:
        raise
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, etree.XMLSyntaxError) as exc:
        raise ConversionError("it could not be read as a Word (.docx) document.") from exc

    builder = TextBuilder(limits, deadline)
    first_heading: str | None = None
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            style = (block.style.name if block.style is not None else "") or ""
            if style.startswith("Heading") or style == "Title":
                first_heading = first_heading or block.text.strip() or None
                builder.heading(block.text)
            else:
                builder.paragraph(block.text)
        elif isinstance(block, Table):
            for row in block.rows:
                cells = []
                for cell in row.cells:
                    if cell.text.strip() and (not cells or cells[-1] != cell.text.strip()):  # merged cells repeat
                        cells.append(cell.text.strip())
                builder.paragraph(" | ".join(cells))

    core = document.core_properties
    metadata = {"author": core.author} if core.author else {}
    created = core.created
    if created is not None and created.replace(tzinfo=None) == _TEMPLATE_CREATED:
        created = None  # python-docx's blank template carries this date; it says nothing about the document
    return builder.build(
        "docx",
        title=(core.title or "").strip() or first_heading or title_from_filename(filename),
        date=created.date() if created else None,
        metadata=metadata,
    )
