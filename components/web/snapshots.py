"""`SnapshotStore`: every fetched page kept as a timestamped snapshot, so a citation can be checked later.

Layout under the root folder (default: the data folder's `snapshots`): one folder per URL (named by a hash of
the URL) holding `index.jsonl`, one line per fetch (time, content hash, title, metadata), and one
`<content hash>.md` per distinct content, written once. A page fetched twice unchanged costs one index line;
a changed page keeps both versions. Appends are single writes, so several processes can share the folder.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.text.dates import parse_moment
from components.web.chunking import page_text


def url_key(url: str) -> str:
    """The folder name of a URL's snapshots."""
    return hashlib.sha256(url.strip().encode("utf-8")).hexdigest()[:24]


def content_hash(text: str) -> str:
    """The hash that names a snapshot's content."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def utc_now() -> str:
    """Now, as the ISO-8601 UTC timestamp snapshots and chunks carry."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _parse_time(value: str | dt.datetime | dt.date) -> dt.datetime:
    moment = parse_moment(value)
    if isinstance(moment, dt.datetime):
        return moment
    if moment is None:
        raise ValueError("a snapshot time must not be empty")
    return dt.datetime.combine(moment, dt.time.max, tzinfo=dt.UTC)  # a day includes all of it


@dataclass(frozen=True)
class PageSnapshot:
    """A page as it was fetched at `fetched_at`."""

    snapshot_id: str
    url: str
    fetched_at: str
    content_hash: str
    title: str
    markdown: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def contains(self, text: str) -> bool:
        """True when every paragraph of `text` occurs in this snapshot's readable text (whitespace aside).

        This is the check a citation needs: chunks are cut from the page's readable text, paragraph by paragraph.
        """

        def squash(value: str) -> str:
            return " ".join(value.split())

        page = squash(page_text(self.markdown))
        paragraphs = [squash(part) for part in text.split("\n\n") if part.strip()]
        return bool(paragraphs) and all(paragraph in page for paragraph in paragraphs)


class SnapshotStore:
    """Timestamped page snapshots on disk.

    Usage:
    ```python
    store = SnapshotStore(settings.data_dir / "snapshots")
    snap = store.save("https://example.org/a", "# A\\n\\ntext", title="A")
    store.get(snap.snapshot_id).contains("text")  # True
    store.at("https://example.org/a", "2026-01-01")  # the version fetched on or before that day, or None
    ```
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def save(
        self,
        url: str,
        markdown: str,
        *,
        title: str = "",
        fetched_at: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> PageSnapshot:
        """Keep `markdown` as fetched from `url` now (or at `fetched_at`); returns the snapshot."""
        if not url or not url.strip():
            raise ValueError("a snapshot needs the page's URL")
        url = url.strip()
        fetched_at = fetched_at or utc_now()
        digest = content_hash(markdown)
        folder = self.root / url_key(url)
        folder.mkdir(parents=True, exist_ok=True)
        body = folder / f"{digest}.md"
        if not body.exists():
            # Write-then-rename: a reader never sees half a page.
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".md")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(markdown)
            os.replace(temporary, body)
        record = {
            "url": url,
            "fetched_at": fetched_at,
            "content_hash": digest,
            "title": title,
            "metadata": metadata or {},
        }
        line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        descriptor = os.open(folder / "index.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)
        return _snapshot(record, markdown)

    def history(self, url: str) -> list[PageSnapshot]:
        """Every snapshot of `url`, oldest first (with content)."""
        folder = self.root / url_key(url.strip())
        snapshots = []
        for record in _index_records(folder):
            body = folder / f"{record['content_hash']}.md"
            if body.exists():
                snapshots.append(_snapshot(record, body.read_text(encoding="utf-8")))
        snapshots.sort(key=lambda snap: _parse_time(snap.fetched_at))
        return snapshots

    def get(self, snapshot_id: str) -> PageSnapshot | None:
        """The snapshot a chunk's `snapshot_id` names, or None."""
        key, _, fetched_at = snapshot_id.partition("@")
        records = _index_records(self.root / key) if fetched_at else []
        url = next((record["url"] for record in records if record.get("fetched_at") == fetched_at), None)
        return next((snap for snap in self.history(url) if snap.fetched_at == fetched_at), None) if url else None

    def at(self, url: str, when: str | dt.datetime | dt.date | None = None) -> PageSnapshot | None:
        """The latest snapshot of `url` fetched at or before `when` (default: the latest), or None."""
        snapshots = self.history(url)
        if when is not None:
            limit = _parse_time(when)
            snapshots = [snap for snap in snapshots if _parse_time(snap.fetched_at) <= limit]
        return snapshots[-1] if snapshots else None


def _snapshot(record: dict[str, Any], markdown: str) -> PageSnapshot:
    """The snapshot an index record describes, with its content; its id is `<url key>@<fetch time>`."""
    return PageSnapshot(
        f"{url_key(record['url'])}@{record['fetched_at']}",
        record["url"],
        record["fetched_at"],
        record["content_hash"],
        record.get("title", ""),
        markdown,
        dict(record.get("metadata") or {}),
    )


def _index_records(folder: Path) -> list[dict[str, Any]]:
    """The records of a page's snapshot index (none when it has no index); a line cut short by a crash is passed
    over, the others still count."""
    index = folder / "index.jsonl"
    if not index.exists():
        return []
    records = []
    for line in index.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records
