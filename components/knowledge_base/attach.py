"""Bring your own store: recognising the documents of a collection that Haystack's `DocumentWriter` filled.

A collection written by a Haystack indexing pipeline holds chunks as `Document`s with `content`, `meta` and
`embedding`, and nothing else the assistant needs: no document records, no sentence vectors, no term statistics, no
graph facts. `DocumentRecogniser` reads the chunks once and groups them into documents from Haystack's own fields:

- the chunks of one document share a key: `document_id` (the assistant's own chunks), else `source_id` (what
  Haystack's splitters set to the parent document's id), else `file_path` (what the converters set), else `url`,
  else `source`; a chunk with none of them is a document of its own. `document_field` names another meta field;
- the order inside a document is `chunk_index`, else `split_id`, else `split_idx_start`, else `page_number`, else
  the order the collection returned them in;
- the title is the meta's `title` or `name`, else the file name of `file_path`, else the URL, else the first line
  of the text; the type comes from the file extension (`haystack` when there is none); the date from the meta's
  `date`, `published`, `publication_date` or `created_at`.

The records go into the document registry only: the user's rows are read, never written (`enrich` then adds the
evidence beside them: see `components/knowledge_base/enrichment.py`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import urlparse

from haystack import Document

from components.ingestion.formats import SUFFIX_TYPES
from components.knowledge_base.store import DocumentRecord
from components.text.dates import parse_date

DOCUMENT_KEYS = ("document_id", "source_id", "file_path", "url", "source")
ORDER_KEYS = ("chunk_index", "split_id", "split_idx_start", "page_number")
TITLE_KEYS = ("title", "name")
DATE_KEYS = ("date", "published", "publication_date", "created_at")
ATTACHED_TYPE = "haystack"
# The marker in a recognised document's metadata: the registry says which documents the assistant must not delete.
ATTACHED = "attached"
_TITLE_CHARS = 120


@dataclass
class RecognisedDocument:
    """A document recognised in an attached collection: its record and its chunk ids in order."""

    record: DocumentRecord
    chunk_ids: list[str]


@dataclass
class _Group:
    key_field: str | None
    key: str
    chunks: list[tuple[tuple, int, str, str]] = field(default_factory=list)  # (order, arrival, id, content)
    meta: dict[str, Any] = field(default_factory=dict)  # the first chunk's meta


class DocumentRecogniser:
    """Groups the chunks of a Haystack-written collection into documents, a batch at a time.

    Usage:
    ```python
    recogniser = DocumentRecogniser("haystack_docs")
    for batch in index.iter_documents(batch_size=1000):
        recogniser.add(batch)
    for found in recogniser.documents():
        registry.put(found.record, found.chunk_ids)
    ```
    """

    def __init__(self, collection: str, document_field: str | None = None) -> None:
        if document_field is not None and (not isinstance(document_field, str) or not document_field.strip()):
            raise ValueError(
                "document_field must be a meta field's name, or None to recognise documents by "
                f"{', '.join(DOCUMENT_KEYS)}"
            )
        self.collection = collection
        self.document_field = document_field.strip() if document_field else None
        self._groups: dict[tuple[str | None, str], _Group] = {}
        self._arrival = 0

    def _key(self, doc: Document) -> tuple[str | None, str]:
        meta = doc.meta or {}
        keys = (self.document_field,) if self.document_field else DOCUMENT_KEYS
        for name in keys:
            value = meta.get(name)
            if value not in (None, ""):
                return name, str(value)
        return None, str(doc.id)

    def add(self, docs: Iterable[Document]) -> None:
        """Take a batch of chunks (embeddings are not needed and not kept)."""
        for doc in docs:
            key_field, key = self._key(doc)
            group = self._groups.get((key_field, key))
            if group is None:
                group = self._groups[(key_field, key)] = _Group(key_field, key, meta=dict(doc.meta or {}))
            group.chunks.append((_order(doc.meta or {}), self._arrival, str(doc.id), doc.content or ""))
            self._arrival += 1

    def documents(self) -> list[RecognisedDocument]:
        """The documents found so far, in the order their first chunk arrived (the order the groups were made in)."""
        return [self._recognised(group) for group in self._groups.values()]

    def _recognised(self, group: _Group) -> RecognisedDocument:
        chunks = sorted(group.chunks)  # by order key, then arrival (unique, so ids and texts are never compared)
        meta = group.meta
        own = group.key_field in ("file_path", "url", "source")
        source = group.key if own else f"haystack://{self.collection}/{group.key_field or 'chunk'}/{group.key}"
        text = "\n\n".join(c[3] for c in chunks)
        digest = hashlib.sha256("\x00".join(f"{c[2]}\x01{c[3]}" for c in chunks).encode("utf-8")).hexdigest()
        record = DocumentRecord(
            document_id="att_" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:20],
            title=_title(meta, group, text),
            source=source,
            doc_type=_doc_type(meta),
            content_hash=digest,
            text=text,
            url=_url(meta),
            date=_date(meta),
            metadata={ATTACHED: True, "recognised_by": group.key_field or "chunk"},
        )
        return RecognisedDocument(record, [c[2] for c in chunks])


def _order(meta: dict[str, Any]) -> tuple:
    for name in ORDER_KEYS:
        value = meta.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return (0, float(value))
    return (1, 0.0)


def _path_name(value: str) -> str:
    return PureWindowsPath(value).name if "\\" in value and "/" not in value else PurePosixPath(value).name


def _title(meta: dict[str, Any], group: _Group, text: str) -> str:
    for name in TITLE_KEYS:
        value = meta.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()[:_TITLE_CHARS]
    path = meta.get("file_path")
    if isinstance(path, str) and path.strip():
        return _path_name(path.strip()) or path.strip()
    url = _url(meta)
    if url:
        return url[:_TITLE_CHARS]
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first[:_TITLE_CHARS] or group.key[:_TITLE_CHARS]


def _doc_type(meta: dict[str, Any]) -> str:
    path = meta.get("file_path")
    if isinstance(path, str):
        suffix = PurePosixPath(_path_name(path)).suffix.lower()
        if suffix in SUFFIX_TYPES:
            return SUFFIX_TYPES[suffix]
    return "web" if _url(meta) else ATTACHED_TYPE


def _url(meta: dict[str, Any]) -> str | None:
    value = meta.get("url")
    return value.strip() if isinstance(value, str) and urlparse(value.strip()).scheme in ("http", "https") else None


def _date(meta: dict[str, Any]) -> dt.date | None:
    for name in DATE_KEYS:
        with suppress(TypeError, ValueError):
            if (found := parse_date(meta.get(name))) is not None:
                return found
    return None
