"""Plain text: paragraphs separated by blank lines, their wrapped lines joined, but a row of a table or a line of
results set on a line of its own stays one (`_rows`); a short first line is the title, and `Date:` / `Source:` lines
at the top give the date and URL, as in most plain-text notes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from components.ingestion.formats.common import decode_text, title_from_filename
from components.ingestion.structure import ConvertedDocument, TextBuilder, paragraphs
from components.text.dates import parse_date

if TYPE_CHECKING:
    from components.ingestion.limits import IngestLimits

_FIELD = re.compile(r"^(date|published|updated|source|url)\s*:\s*(\S.*)$", re.IGNORECASE)
# Lines opening a text that end no sentence, or are written in capitals whatever closes them (a wire's "SOCCER - OSTBY
# WIN ."), and are followed by a line starting like a new one: a headline, a dateline.
# (The capitals line is a lookahead then one run, so a long line is read once: two runs around a capital would try every
# split of a line that never ends.)
_LEADING_LINES = re.compile(r"\A(?:(?:[^\n]*[^\s.!?:;,\"')\]”’]|(?=[^a-z\n]*[A-Z])[^a-z\n]*)\n(?=[A-Z0-9\"“`']))+")
# A line that ends in a figure, followed by one that starts with a capital or a figure: a row of a table, a results
# line ("Ostby 2 Dalby 1"), a dateline. Such a break is the writer's, not a wrap, when the line had room for the next
# line's first word (`_rows`).
_ROW_BREAK = re.compile(r"(?<=\d)[ \t]*\n(?=[A-Z0-9])")


def convert_text(data: bytes, filename: str, limits: IngestLimits | None = None) -> ConvertedDocument:
    """Convert a .txt file; pages separated by form feeds keep their page numbers."""
    text = decode_text(data)
    pages = text.split("\f")
    builder = TextBuilder(limits)
    fields: dict[str, str] = {}
    for page_number, page in enumerate(pages, start=1):
        parts = paragraphs(page)
        if page_number == 1 and parts and (heading := _LEADING_LINES.match(parts[0])):
            parts[:1] = [*heading.group().split("\n")[:-1], parts[0][heading.end() :]]
        parts = [row for part in parts for row in _rows(part)]
        for position, paragraph in enumerate(parts):
            lines = [_FIELD.match(line.strip()) for line in paragraph.split("\n")]
            if page_number == 1 and position < 4 and all(lines):
                for match in lines:
                    fields.setdefault(match.group(1).lower(), match.group(2).strip())  # type: ignore[union-attr]
                continue
            builder.paragraph(paragraph, page_number if len(pages) > 1 else None)
    first = builder.blocks[0] if builder.blocks else None
    first_text = builder.text[first.start : first.end] if first else ""
    title = first_text if first and len(first_text) <= 120 and not first_text.endswith((".", "?", "!")) else ""
    date = parse_date(fields.get("date") or fields.get("published") or fields.get("updated"))
    url = fields.get("source") or fields.get("url")
    return builder.build(
        "txt",
        title=title or title_from_filename(filename),
        date=date,
        url=url if url and url.startswith(("http://", "https://")) else None,
    )


def _rows(paragraph: str) -> list[str]:
    """A paragraph cut at the line breaks its writer made after a figure (`_ROW_BREAK`): the rows of a table and the
    lines of results that a wire story sets one under another, each a paragraph of its own, where joining the lines
    as a wrapped paragraph's would run one row's names into the next row's ("Dalby 1 Kessby"). A wrapped line is
    full: it breaks because the next word would not fit, so its length and the next word pass the paragraph's longest
    line; a line with room for that word ended where its writer ended it, and so did one followed by another line
    ending in a figure (rows of one table are of a length, and wrapped prose does not end line after line in one)."""
    lines = paragraph.split("\n")
    width = max(len(line.rstrip()) for line in lines)
    pieces: list[str] = []
    start = 0
    for match in _ROW_BREAK.finditer(paragraph):
        line = paragraph[paragraph.rfind("\n", 0, match.start()) + 1 : match.start()]
        end = paragraph.find("\n", match.end())
        following = paragraph[match.end() : end if end >= 0 else len(paragraph)].rstrip()
        room = len(line.rstrip()) + 1 + len(following.split(maxsplit=1)[0]) <= width
        if room or following[-1:].isdigit():
            pieces.append(paragraph[start : match.start()])
            start = match.end()
    return [*pieces, paragraph[start:]]
