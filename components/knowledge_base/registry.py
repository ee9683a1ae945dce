"""`DocumentRegistry`: the documents of a knowledge base, one small PostgreSQL store beside any chunk index.

Whatever engine holds the chunks (pgvector, Qdrant, Milvus), the documents they belong to live here: the
`DATABASE_URL` database, or the embedded PostgreSQL of the data folder (`components/database.py`), where the
embedded graph lives too, so a document and its graph facts change in one transaction.

Per collection, two tables (named `<backend>_<collection>_...` for Milvus and Qdrant):

- `<collection>_documents`: one row per ingested file, page or paper (document_id, title, source UNIQUE, doc_type,
  content_hash, text, url, date, ingested_at, metadata, chunk_count) with `chunk_ids`, its chunk ids in order;
- `<collection>_chunk_documents`: chunk_id -> (document_id, chunk_index), so that a chunk found in the index, even
  one written by someone else, is attributed to its document in one query.

The registry row is the commit point of an ingestion: the index is written first, then `put` replaces the document row
(and runs the caller's `also(conn)` in the same transaction), then the chunks the new version no longer has are deleted
from the index. A crash in between leaves orphan chunks that no search returns, never a document without its chunks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from haystack import logging
from psycopg import sql
from psycopg.types.json import Jsonb
from psycopg_pool import PoolTimeout

from components.database import DatabaseUnavailable, connection_pool_for, database_url
from components.knowledge_base.attach import ATTACHED
from components.knowledge_base.store import (
    DocumentRecord,
    DocumentSummary,
    KnowledgeBaseMismatch,
    KnowledgeBaseUnavailable,
    SearchFilters,
)
from components.resilience.errors import first_line

logger = logging.getLogger(__name__)

# The longest index name suffix is 26 characters ("_chunk_documents_document"); PostgreSQL truncates names at 63.
_COLLECTION_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,36}$")
# The document columns every query reads, in this order, named as `DocumentRecord`'s fields.
_FIELDS = ("document_id", "title", "source", "doc_type", "content_hash", "url", "date", "ingested_at", "metadata")
_COLUMNS = ", ".join(_FIELDS)


def validate_collection(collection: str) -> str:
    """`collection` if it is a safe table-name prefix, else a ValueError saying what is allowed."""
    if not isinstance(collection, str) or not _COLLECTION_RE.match(collection):
        raise ValueError(
            f"Collection name {collection!r} is not allowed: use 1-37 letters, digits, underscores and hyphens, "
            "starting with a letter or underscore."
        )
    return collection


def _record(row: tuple, text: str = "") -> DocumentRecord:
    """The document of a row that starts with `_COLUMNS`."""
    fields = dict(zip(_FIELDS, row, strict=False))
    return DocumentRecord(**{**fields, "metadata": fields["metadata"] or {}}, text=text)


class DocumentRegistry:
    """The documents of one collection, whatever engine holds its chunks. Thread-safe (a shared connection pool).

    Usage:
    ```python
    registry = DocumentRegistry("research")  # the settings' database (embedded PostgreSQL by default)
    stale = registry.put(document, ["doc-1:0", "doc-1:1"])  # chunk ids the old version had and this one lacks
    index.delete(stale)
    record, chunk_ids = registry.get("doc-1")
    ```
    """

    def __init__(self, collection: str, url: str | None = None, table_prefix: str | None = None) -> None:
        """
        :param collection: the collection whose documents these are (the chunk table's / collection's name).
        :param url: the PostgreSQL connection string; None for the settings' database (`DATABASE_URL`, else the
            embedded server of the data folder).
        :param table_prefix: the registry tables' prefix; default the collection (a knowledge base on another engine
            than pgvector prefixes its backend, so that same-named collections on two engines keep two registries).
        """
        self.collection = validate_collection(collection)
        self.table_prefix = prefix = validate_collection(table_prefix or collection)
        self._documents = sql.Identifier(f"{prefix}_documents")
        self._chunks = sql.Identifier(f"{prefix}_chunk_documents")
        try:
            self._pool = connection_pool_for(url or database_url())
        except DatabaseUnavailable as exc:
            raise KnowledgeBaseUnavailable(str(exc)) from exc
        self._create_schema()

    # -- connections ----------------------------------------------------------------------------------------------

    def connection(self) -> Any:
        """A pooled connection (a context manager); connection faults become one-sentence
        `KnowledgeBaseUnavailable`s."""
        return pooled_connection(self._pool)

    def _q(self, template: str) -> sql.Composed:
        return sql.SQL(template).format(documents=self._documents, chunks=self._chunks)

    # -- schema ---------------------------------------------------------------------------------------------------

    def _create_schema(self) -> None:
        names = {
            "documents": self._documents,
            "chunks": self._chunks,
            "documents_ingested_idx": sql.Identifier(f"{self.table_prefix}_documents_ingested_idx"),
            "chunks_document_idx": sql.Identifier(f"{self.table_prefix}_chunk_documents_document"),
        }
        statements = [
            """CREATE TABLE IF NOT EXISTS {documents} (
                document_id text PRIMARY KEY,
                title text NOT NULL DEFAULT '',
                source text NOT NULL UNIQUE,
                doc_type text NOT NULL DEFAULT '',
                content_hash text NOT NULL DEFAULT '',
                text text NOT NULL DEFAULT '',
                url text,
                date date,
                ingested_at timestamptz NOT NULL DEFAULT now(),
                metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb,
                chunk_count integer NOT NULL DEFAULT 0,
                chunk_ids text[] NOT NULL DEFAULT '{{}}')""",
            "CREATE INDEX IF NOT EXISTS {documents_ingested_idx} ON {documents} (ingested_at DESC, document_id)",
            """CREATE TABLE IF NOT EXISTS {chunks} (
                chunk_id text PRIMARY KEY,
                document_id text NOT NULL REFERENCES {documents} (document_id) ON DELETE CASCADE,
                chunk_index integer NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS {chunks_document_idx} ON {chunks} (document_id, chunk_index)",
        ]
        with self.connection() as conn, conn.transaction():
            # Two processes creating the same tables at once collide on the catalog; the lock serialises them.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"kb-registry:{self.table_prefix}",))
            old_layout = conn.execute(
                """SELECT 1 FROM pg_class c WHERE c.oid = to_regclass(%s) AND NOT EXISTS (
                       SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'chunk_ids')""",
                (self._documents.as_string(conn),),
            ).fetchone()
            if old_layout is not None:
                raise KnowledgeBaseMismatch(
                    f"Collection {self.collection!r} was written by an earlier version of the research assistant in "
                    "its own table layout; re-ingest the documents into a new collection (KB_COLLECTION)."
                )
            for statement in statements:
                conn.execute(sql.SQL(statement).format(**names))

    # -- writes ---------------------------------------------------------------------------------------------------

    def put(
        self, document: DocumentRecord, chunk_ids: list[str], *, also: Callable[[Any], None] | None = None
    ) -> list[str]:
        """Replace `document` (same id or same source) with this version whose chunks are `chunk_ids` in order.

        `also(conn)` runs in the same transaction. Returns the chunk ids of the replaced version(s) that this one no
        longer has: the caller deletes them from the index.
        """
        chunk_ids = [str(chunk_id) for chunk_id in chunk_ids]
        # Pipelined: two round trips (the replaced rows, then the commit) instead of one per statement.
        with self.connection() as conn, conn.pipeline(), conn.transaction():
            # A crash may lose the last few commits (never corrupt them); ingestion re-runs by content hash, and not
            # waiting for the WAL flush per document is what makes one transaction per document affordable.
            conn.execute("SET LOCAL synchronous_commit = off")
            replaced = conn.execute(
                self._q("DELETE FROM {documents} WHERE document_id = %s OR source = %s RETURNING chunk_ids"),
                (document.document_id, document.source),
            ).fetchall()
            conn.execute(
                self._q(
                    "INSERT INTO {documents} (document_id, title, source, doc_type, content_hash, text, url, date, "
                    "ingested_at, metadata, chunk_count, chunk_ids) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, "
                    "coalesce(%s, now()), %s, %s, %s)"
                ),
                (
                    document.document_id,
                    document.title or "",
                    document.source,
                    document.doc_type or "",
                    document.content_hash or "",
                    (document.text or "").replace("\x00", ""),
                    document.url,
                    document.date,
                    document.ingested_at,
                    Jsonb(document.metadata or {}),
                    len(chunk_ids),
                    chunk_ids,
                ),
            )
            if chunk_ids:
                conn.execute(
                    self._q(
                        "INSERT INTO {chunks} (chunk_id, document_id, chunk_index) "
                        "SELECT chunk_id, %s, ordinality - 1 FROM unnest(%s::text[]) WITH ORDINALITY AS u(chunk_id) "
                        "ON CONFLICT (chunk_id) DO UPDATE SET document_id = EXCLUDED.document_id, "
                        "chunk_index = EXCLUDED.chunk_index"
                    ),
                    (document.document_id, chunk_ids),
                )
            if also is not None:
                also(conn)
        kept = set(chunk_ids)
        return [chunk_id for (old,) in replaced for chunk_id in (old or []) if chunk_id not in kept]

    def delete(self, document_id: str, *, also: Callable[[Any], None] | None = None) -> list[str] | None:
        """Remove a document; `also(conn)` runs in the same transaction. Returns its chunk ids (to delete from the
        index), or None when there was no such document (`also` is not run then)."""
        with self.connection() as conn, conn.transaction():
            row = conn.execute(
                self._q("DELETE FROM {documents} WHERE document_id = %s RETURNING chunk_ids"), (document_id,)
            ).fetchone()
            if row is None:
                return None
            if also is not None:
                also(conn)
        return list(row[0] or [])

    def drop(self) -> None:
        """Delete the collection's registry tables and everything in them."""
        with self.connection() as conn, conn.transaction():
            conn.execute(self._q("DROP TABLE IF EXISTS {chunks}, {documents} CASCADE"))

    # -- reads ----------------------------------------------------------------------------------------------------

    def get(self, document_id: str) -> tuple[DocumentRecord, list[str]] | None:
        """The document (with its text) and its chunk ids in order, or None."""
        with self.connection() as conn:
            row = conn.execute(
                self._q(f"SELECT {_COLUMNS}, text, chunk_ids FROM {{documents}} WHERE document_id = %s"),
                (document_id,),
            ).fetchone()
        return None if row is None else (_record(row, text=row[9]), list(row[10] or []))

    def get_many(self, document_ids: list[str]) -> dict[str, tuple[DocumentRecord, int]]:
        """Per document id that exists, its record (without text) and chunk count; one query."""
        statement = self._q(f"SELECT {_COLUMNS}, chunk_count FROM {{documents}} WHERE document_id = ANY(%s)")
        return {row[0]: (_record(row), int(row[9])) for row in select_by_ids(self._pool, statement, document_ids)}

    def find_by_source(self, source: str) -> DocumentRecord | None:
        """The document ingested from `source` (path, URL or arXiv id), without its text, or None."""
        with self.connection() as conn:
            row = conn.execute(self._q(f"SELECT {_COLUMNS} FROM {{documents}} WHERE source = %s"), (source,)).fetchone()
        return _record(row) if row else None

    def chunk_documents(self, chunk_ids: list[str]) -> dict[str, tuple[str, int]]:
        """Per chunk id the registry knows, its (document_id, chunk_index); one query."""
        statement = self._q("SELECT chunk_id, document_id, chunk_index FROM {chunks} WHERE chunk_id = ANY(%s)")
        rows = select_by_ids(self._pool, statement, chunk_ids)
        return {row[0]: (row[1], int(row[2])) for row in rows}

    def list(
        self, limit: int = 20, offset: int = 0, search: str | None = None, filters: SearchFilters | None = None
    ) -> tuple[list[DocumentSummary], int]:
        """A page of documents, newest first, with chunk counts, and how many match in all; `search` matches a
        substring of the title or source (case-insensitive)."""
        conditions, params = _conditions(filters, search)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        with self.connection() as conn:
            total = conn.execute(self._q(f"SELECT count(*) FROM {{documents}} {where}"), params).fetchone()[0]
            rows = conn.execute(
                self._q(
                    f"SELECT {_COLUMNS}, chunk_count FROM {{documents}} {where} "
                    "ORDER BY ingested_at DESC, document_id LIMIT %s OFFSET %s"
                ),
                [*params, max(1, int(limit)), max(0, int(offset))],
            ).fetchall()
        return [DocumentSummary(document=_record(row), chunk_count=int(row[9])) for row in rows], int(total)

    def attached_chunk_ids(self, filters: SearchFilters) -> list[str] | None:
        """The chunk ids of the recognised documents of an attached collection (see `attach.py`) that match
        `filters`, for filtering chunks that carry none of the assistant's meta; None when the collection has no
        recognised documents. One query."""
        conditions, params = _conditions(filters)
        with self.connection() as conn:
            row = conn.execute(
                self._q(
                    "SELECT bool_or(true), coalesce(array_agg(c) FILTER (WHERE "
                    f"{' AND '.join(conditions) if conditions else 'true'}), '{{{{}}}}') "
                    "FROM {documents} d LEFT JOIN LATERAL unnest(d.chunk_ids) AS c ON true "
                    "WHERE d.metadata @> %s"
                ),
                [*params, Jsonb({ATTACHED: True})],
            ).fetchone()
        return [str(chunk_id) for chunk_id in row[1] if chunk_id is not None] if row and row[0] else None

    def attached_document_ids(self) -> list[str]:
        """The ids of the documents recognised in an attached collection (see `attach.py`); one query."""
        with self.connection() as conn:
            rows = conn.execute(
                self._q("SELECT document_id FROM {documents} WHERE metadata @> %s"), [Jsonb({ATTACHED: True})]
            )
            return [row[0] for row in rows.fetchall()]

    def count(self) -> int:
        """How many documents the collection holds."""
        with self.connection() as conn:
            return int(conn.execute(self._q("SELECT count(*) FROM {documents}")).fetchone()[0])

    def count_chunks(self) -> int:
        """How many chunks the documents list (the chunks search can return)."""
        with self.connection() as conn:
            return int(conn.execute(self._q("SELECT COALESCE(sum(chunk_count), 0) FROM {documents}")).fetchone()[0])

    def iter_documents(self, batch_size: int = 100) -> Iterator[tuple[DocumentRecord, list[str]]]:
        """Every document (with its text) and its chunk ids, in document-id order, a batch per query."""
        statement = self._q(
            f"SELECT {_COLUMNS}, text, chunk_ids FROM {{documents}} WHERE document_id > %s "
            "ORDER BY document_id LIMIT %s"
        )
        for rows in keyset_pages(self._pool, statement, batch_size):
            for row in rows:
                yield _record(row, text=row[9]), list(row[10] or [])


def _conditions(filters: SearchFilters | None, search: str | None = None) -> tuple[list[str], list[Any]]:
    """SQL conditions (ANDed) and their parameters for document filters and a title/source substring search."""
    conditions: list[str] = []
    params: list[Any] = []
    if filters is not None and not filters.empty:
        for condition, value in (
            ("doc_type = ANY(%s)", list(filters.doc_types) or None),
            ("date >= %s", filters.date_from),
            ("date <= %s", filters.date_to),
            ("document_id = ANY(%s)", list(filters.document_ids) or None),
        ):
            if value is not None:
                conditions.append(condition)
                params.append(value)
    if search and search.strip():
        escaped = search.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        conditions.append("(title ILIKE %s OR source ILIKE %s)")
        params += [f"%{escaped}%", f"%{escaped}%"]
    return conditions, params


def select_by_ids(pool: Any, statement: sql.Composable, ids: Iterable[Any], *before: Any) -> list[tuple]:
    """The rows `statement` selects for `ids` in one round trip: its last parameter (`= ANY(%s)`) is the ids, unique
    and sorted, after the parameters `before`; no rows without ids."""
    unique = sorted({str(item) for item in ids})
    if not unique:
        return []
    with pooled_connection(pool) as conn:
        return conn.execute(statement, (*before, unique)).fetchall()


def keyset_pages(pool: Any, statement: sql.Composable, batch_size: int) -> Iterator[list[tuple]]:
    """The rows of `statement`, a page per query: its parameters are the last key read ("" first) and the page size,
    its first column the key it orders by."""
    after, size = "", max(1, int(batch_size))
    while True:
        with pooled_connection(pool) as conn:
            rows = conn.execute(statement, (after, size)).fetchall()
        if not rows:
            return
        yield rows
        after = rows[-1][0]


@contextmanager
def pooled_connection(pool: Any) -> Iterator[Any]:
    """A connection of `pool` for the knowledge base's own SQL (the registry's and the pgvector index's): a pool with
    no free connection or a database that cannot be reached is a one-sentence `KnowledgeBaseUnavailable`."""
    try:
        with pool.connection() as conn:
            yield conn
    except PoolTimeout as exc:
        raise KnowledgeBaseUnavailable("The knowledge base's PostgreSQL has no free connection; try again.") from exc
    except psycopg.OperationalError as exc:
        raise KnowledgeBaseUnavailable(f"The knowledge base's PostgreSQL cannot be reached: {first_line(exc)}") from exc
