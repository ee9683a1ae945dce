"""`IngestLimits`: how big one file may be, how much text it may expand to, and how many chunks it may become.

Each limit is checked as early as it can be: the size before the file is read, the unpacked size of a packed
format before it is unpacked, the characters while the text is extracted (extraction stops at the limit), the
chunks right after splitting and before anything is embedded. A file over a limit fails with one sentence naming
the limit's setting; the rest of the batch goes on.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.ingestion.formats.common import ConversionError
from components.validation import positive_int

# How much more than the byte limit a packed format may unpack to: a Word file's XML deflates about tenfold, and its
# blank template alone unpacks to over 0.8 MB; four times leaves room for real documents, not for bombs.
UNPACKED_FACTOR = 4


@dataclass(frozen=True)
class IngestLimits:
    """Per-file limits: bytes (packed, and unpacked for zip-based formats), extracted characters, chunks.

    Usage:
    ```python
    limits = IngestLimits.from_settings()  # INGEST_MAX_FILE_BYTES, INGEST_MAX_CHARS, INGEST_MAX_CHUNKS
    limits.check_bytes(path.stat().st_size)  # raises ConversionError with one sentence when over
    ```
    """

    max_bytes: int = 25_000_000
    max_chars: int = 2_000_000
    max_chunks: int = 4_000

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_chars", "max_chunks"):
            positive_int(name, getattr(self, name))

    @classmethod
    def from_settings(cls) -> IngestLimits:
        """The limits in force (the settings' `INGEST_MAX_*`)."""
        from components.settings import get_settings

        settings = get_settings()
        return cls(settings.ingest_max_file_bytes, settings.ingest_max_chars, settings.ingest_max_chunks)

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


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size:,} bytes"
