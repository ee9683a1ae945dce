"""`IngestLimits`: how big one file may be, how much text it may expand to, and how many chunks it may become.

Each limit is checked as early as it can be: the size before the file is read, the unpacked size of a packed
format before it is unpacked, the characters while the text is extracted (extraction stops at the limit), the
chunks right after splitting and before anything is embedded. Parsing is bounded in time and memory too: the
elements of an HTML page or a Word document are counted by a streaming pass (no tree is built) before the file is
parsed, and the whole extraction stops at a parse deadline. A file over a limit fails with one sentence naming
the limit's setting; the rest of the batch goes on.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any

from components.ingestion.formats.common import ConversionError
from components.settings import Settings, default_setting, get_settings
from components.validation import positive, positive_int

# How much more than the byte limit a packed format may unpack to: a Word file's XML deflates about tenfold, and its
# blank template alone unpacks to over 0.8 MB; four times leaves room for real documents, not for bombs.
UNPACKED_FACTOR = 4
_FEED_BYTES = 1 << 16


@dataclass(frozen=True)
class IngestLimits:
    """Per-file limits: bytes (packed, and unpacked for zip-based formats), extracted characters, chunks.

    Usage:
    ```python
    limits = IngestLimits.from_settings()  # INGEST_MAX_FILE_BYTES, INGEST_MAX_CHARS, INGEST_MAX_CHUNKS
    limits.check_bytes(path.stat().st_size)  # raises ConversionError with one sentence when over
    ```
    """

    # The defaults are the INGEST_MAX_* settings' own (declared once, in `components/settings.py`).
    max_bytes: int = default_setting("ingest_max_file_bytes")
    max_chars: int = default_setting("ingest_max_chars")
    max_chunks: int = default_setting("ingest_max_chunks")
    max_elements: int = default_setting("ingest_max_elements")
    max_parse_s: float = default_setting("ingest_max_parse_s")

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_chars", "max_chunks", "max_elements"):
            positive_int(name, getattr(self, name))
        positive("max_parse_s", self.max_parse_s)

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> IngestLimits:
        """The limits `settings` (None: the process's) set (`INGEST_MAX_*`)."""
        settings = settings or get_settings()
        return cls(
            settings.ingest_max_file_bytes,
            settings.ingest_max_chars,
            settings.ingest_max_chunks,
            settings.ingest_max_elements,
            settings.ingest_max_parse_s,
        )

    def check_bytes(self, size: int) -> None:
        """Refuse a file of `size` bytes over the byte limit."""
        if size > self.max_bytes:
            raise ConversionError(
                f"it is {_megabytes(size)}, over the {_megabytes(self.max_bytes)} limit for one file "
                "(INGEST_MAX_FILE_BYTES)."
            )

    def check_unpacked(self, size: int) -> None:
        """Refuse a packed file (a .docx is a zip) whose parts unpack to more than `UNPACKED_FACTOR` times the
        byte limit."""
        if size > self.max_bytes * UNPACKED_FACTOR:
            raise ConversionError(
                f"it unpacks to {_megabytes(size)}, over the {_megabytes(self.max_bytes * UNPACKED_FACTOR)} a packed "
                f"file may unpack to ({UNPACKED_FACTOR} times INGEST_MAX_FILE_BYTES)."
            )

    def check_chars(self, count: int) -> None:
        """Refuse text of `count` characters over the character limit (called while extracting)."""
        if count > self.max_chars:
            raise ConversionError(
                f"it holds more than {self.max_chars:,} characters of text, the limit for one file (INGEST_MAX_CHARS)."
            )

    def check_chunks(self, count: int) -> None:
        """Refuse a file that splits into more chunks than the chunk limit."""
        if count > self.max_chunks:
            raise ConversionError(
                f"it would become {count:,} chunks, over the limit of {self.max_chunks:,} for one file "
                "(INGEST_MAX_CHUNKS)."
            )

    def deadline(self) -> float:
        """The `time.monotonic()` instant by which a file's extraction must be done (now + `max_parse_s`)."""
        return time.monotonic() + self.max_parse_s

    def check_time(self, deadline: float) -> None:
        """Refuse a file still being extracted at `deadline`."""
        if time.monotonic() > deadline:
            raise ConversionError(
                f"reading it took more than {self.max_parse_s:g} s, the limit for one file (INGEST_MAX_PARSE_S)."
            )

    def check_elements(self, count: int, what: str = "elements") -> None:
        """Refuse a file of more than `max_elements` markup elements (HTML tags, Word XML elements)."""
        if count > self.max_elements:
            raise ConversionError(
                f"it holds more than {self.max_elements:,} {what}, the limit for one file (INGEST_MAX_ELEMENTS)."
            )

    def check_html_elements(self, data: bytes, deadline: float) -> None:
        """Count an HTML page's elements with a streaming parser that builds no tree; refuse it over the element
        limit or the deadline, before the page is parsed for its text."""
        from lxml import etree

        counter = _ElementCounter()
        parser = etree.HTMLParser(target=counter, recover=True, no_network=True)
        self._count(parser, counter, [io.BytesIO(data)], deadline, "HTML elements")

    def check_xml_elements(self, streams: Iterable[IO[bytes]], deadline: float, what: str) -> None:
        """Count the elements of XML parts (each a binary stream, all parts together) with a streaming parser that
        builds no tree; refuse them over the element limit or the deadline, before they are loaded."""
        from lxml import etree

        counter = _ElementCounter()
        for stream in streams:
            parser = etree.XMLParser(target=counter, resolve_entities=False, no_network=True, recover=True)
            self._count(parser, counter, [stream], deadline, what)

    def _count(
        self, parser: Any, counter: _ElementCounter, streams: Iterable[IO[bytes]], deadline: float, what: str
    ) -> None:
        for stream in streams:
            while chunk := stream.read(_FEED_BYTES):
                parser.feed(chunk)
                self.check_elements(counter.count, what)
                self.check_time(deadline)
        parser.close()


class _ElementCounter:
    """An lxml parser target that only counts start tags (no tree, no text kept)."""

    def __init__(self) -> None:
        self.count = 0

    def start(self, tag: str, attributes: object) -> None:
        self.count += 1

    def close(self) -> int:
        return self.count


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size:,} bytes"
