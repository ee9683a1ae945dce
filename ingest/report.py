"""What an ingestion run reports: the outcome per document, and progress while it runs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Characters a terminal acts on instead of showing: C0 and C1 controls (ESC starts ANSI sequences), DEL, and the
# bidirectional overrides that make a name read differently from what it is.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` safe to print on one line: control characters, ANSI escapes and bidi overrides shown as `\\xNN` /
    `\\uNNNN` escapes instead of acting on the terminal."""
    return _UNPRINTABLE.sub(lambda match: match.group(0).encode("unicode_escape").decode("ascii"), text)


@dataclass
class IngestProgress:
    """A snapshot while ingesting: files finished of the total, chunks written, the file in hand, chunks per second."""

    files_done: int
    files_total: int
    chunks_done: int
    current: str
    rate: float


@dataclass
class IngestReport:
    """The outcome of one run; sources are paths, URLs or ids as given."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    reextracted: list[str] = field(default_factory=list)  # unchanged, but derived data (the graph) made again
    failed: list[tuple[str, str]] = field(default_factory=list)
    chunks_written: int = 0
    seconds: float = 0.0
    document_ids: dict[str, str] = field(default_factory=dict)  # source -> document_id, for every written source
    embedding_seconds: float = 0.0  # time the embedder was busy; close to `seconds` when nothing else holds it up
    notes: list[str] = field(default_factory=list)  # one sentence each from the hooks (documents without a graph)

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def embedder_busy(self) -> float:
        """The share of the run's time the embedder was working (0-1)."""
        return min(1.0, self.embedding_seconds / self.seconds) if self.seconds > 0 else 0.0

    @property
    def chunks_per_second(self) -> float:
        return self.chunks_written / self.seconds if self.seconds > 0 else 0.0

    def merge(self, other: IngestReport) -> IngestReport:
        """This report with `other`'s outcomes added (used when a run ingests in several passes)."""
        self.added += other.added
        self.replaced += other.replaced
        self.skipped += other.skipped
        self.reextracted += other.reextracted
        self.failed += other.failed
        self.chunks_written += other.chunks_written
        self.seconds += other.seconds
        self.embedding_seconds += other.embedding_seconds
        self.document_ids.update(other.document_ids)
        self.notes += [note for note in other.notes if note not in self.notes]
        return self

    def summary(self) -> str:
        """One line: `3 added, 1 replaced, 5 unchanged, 1 failed; 142 chunks in 9.8 s (14.5 chunks/s)`; unchanged
        documents whose graph was extracted again are counted too when there are any."""
        reextracted = f" ({len(self.reextracted)} re-extracted)" if self.reextracted else ""
        return (
            f"{len(self.added)} added, {len(self.replaced)} replaced, {len(self.skipped)} unchanged{reextracted}, "
            f"{len(self.failed)} failed; {self.chunks_written} chunks in {self.seconds:.1f} s "
            f"({self.chunks_per_second:.1f} chunks/s)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": list(self.added),
            "replaced": list(self.replaced),
            "skipped": list(self.skipped),
            "reextracted": list(self.reextracted),
            "failed": [{"source": source, "reason": reason} for source, reason in self.failed],
            "chunks_written": self.chunks_written,
            "seconds": round(self.seconds, 3),
            "chunks_per_second": round(self.chunks_per_second, 2),
            "embedding_seconds": round(self.embedding_seconds, 3),
            "document_ids": dict(self.document_ids),
            "notes": list(self.notes),
        }
