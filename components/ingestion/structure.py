"""What a converter hands the splitter: clean text with its structure (pages, sections) and its metadata.

`ConvertedDocument.text` is the whole cleaned text; `blocks` are paragraph spans into it, each knowing its page
and section, so every chunk can report `page_number`, `section_title` and character offsets exactly.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from components.ingestion.limits import IngestLimits

# Control characters except tab, newline and form feed (the page separator).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u200b\u200e\u200f\ufeff]")
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_HYPHEN_BREAK = re.compile(r"(\w)-\n(\w)")
_PAGE_NUMBER_LINE = re.compile(r"^\W*(page\s*)?\d+(\s*(of|/)\s*\d+)?\W*$", re.IGNORECASE)


@dataclass
class TextBlock:
    """A paragraph (or heading) of the document: `text[start:end]`, on `page_number`, under `section_title`."""

    start: int
    end: int
    page_number: int | None = None
    section_title: str | None = None
    section_index: int = 0  # the n-th section, so two sections with the same title stay apart
    is_heading: bool = False


@dataclass
class ConvertedDocument:
    """A converted file, page or paper, ready to split."""

    text: str
    blocks: list[TextBlock]
    doc_type: str
    title: str = ""
    date: dt.date | None = None
    url: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.text.strip()


class TextBuilder:
    """Appends paragraphs to one text, separated by blank lines, recording each paragraph's block.

    With `limits`, the paragraph that takes the text over the character limit raises a `ConversionError`, so a
    converter stops extracting there instead of building the whole text first.
    """

    def __init__(self, limits: IngestLimits | None = None, deadline: float | None = None) -> None:
        self.limits = limits
        # The extraction's deadline (`IngestLimits.deadline()`), checked at every paragraph, empty ones included.
        self.deadline = deadline if deadline is not None or limits is None else limits.deadline()
        self._parts: list[str] = []
        self._length = 0
        self.blocks: list[TextBlock] = []
        self.section_title: str | None = None
        self.section_index = 0

    def heading(self, title: str, page_number: int | None = None) -> None:
        """Start a new section; the heading itself is kept as a block of that section."""
        title = clean_inline(title)
        if not title:
            return
        self.section_title = title
        self.section_index += 1
        self._add(title, page_number, is_heading=True)

    def paragraph(self, text: str, page_number: int | None = None) -> None:
        """Add a paragraph of the current section (empty ones are dropped)."""
        if self.limits is not None and self.deadline is not None:
            self.limits.check_time(self.deadline)
        text = clean_inline(text)
        if text:
            self._add(text, page_number, is_heading=False)

    def _add(self, text: str, page_number: int | None, is_heading: bool) -> None:
        if self._parts:
            self._parts.append("\n\n")
            self._length += 2
        start = self._length
        self._parts.append(text)
        self._length += len(text)
        if self.limits is not None:
            self.limits.check_chars(self._length)
        self.blocks.append(
            TextBlock(start, self._length, page_number, self.section_title, self.section_index, is_heading)
        )

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def build(self, doc_type: str, **kwargs: Any) -> ConvertedDocument:
        return ConvertedDocument(text=self.text, blocks=list(self.blocks), doc_type=doc_type, **kwargs)


def clean_text(text: str) -> str:
    """Unicode-normalised text without control characters, trailing spaces or runs of blank lines."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    text = _SPACES.sub(" ", text)
    text = "\n".join(line.strip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def clean_inline(text: str) -> str:
    """One paragraph on one line: wrapped lines joined, hyphenated line breaks mended, spaces collapsed."""
    text = clean_text(text)
    text = _HYPHEN_BREAK.sub(r"\1\2", text)
    return re.sub(r"\s*\n\s*", " ", text).strip()


def paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs of plain text."""
    return [part for part in re.split(r"\n\s*\n", clean_text(text)) if part.strip()]


def remove_repeated_page_lines(pages: list[str], min_pages: int = 3, share: float = 0.6) -> list[str]:
    """Pages without their running headers, footers and page numbers.

    A line among the first or last two lines of a page is a header/footer when, with digits ignored, it recurs
    on at least `share` of the pages (documents of `min_pages` or more), or when it is a bare page number.
    """
    split_pages = [[line for line in clean_text(page).split("\n")] for page in pages]

    def edges(lines: list[str]) -> list[int]:
        filled = [i for i, line in enumerate(lines) if line.strip()]
        depth = 2 if len(filled) > 6 else 1  # on a short page the second line is already body text
        return sorted(set(filled[:depth] + filled[-depth:]))

    def key(line: str) -> str:
        return re.sub(r"\d+", "#", line.strip().lower())

    repeated: set[str] = set()
    if len(pages) >= min_pages:
        counts = Counter(k for lines in split_pages for k in {key(lines[i]) for i in edges(lines)})
        repeated = {k for k, n in counts.items() if k and n >= max(2, share * len(pages))}
    cleaned = []
    for lines in split_pages:
        drop = {i for i in edges(lines) if key(lines[i]) in repeated or _PAGE_NUMBER_LINE.match(lines[i].strip())}
        cleaned.append("\n".join(line for i, line in enumerate(lines) if i not in drop))
    return cleaned
