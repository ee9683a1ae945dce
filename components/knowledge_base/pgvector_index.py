"""`PgvectorChunkIndex`: a knowledge base's chunks in pgvector-haystack's `PgvectorDocumentStore`.

What goes through the integration, and what through our own SQL, and why:

- writes: the store's own `write_documents(..., policy=OVERWRITE)` and `delete_documents`, so the table is an
  ordinary Haystack table that `PgvectorEmbeddingRetriever` reads and a Haystack `DocumentWriter` could have filled;
  a new table and its keyword index are created by the store itself (its first call);
- reads: our own SQL on the store's database (its `connection_string`), through the process's pool for that
  database (`components.database.connection_pool_for`), because the store's single connection and cursors cannot
  serve the concurrent searches of one question (dense and keyword run at once). The integration's retrievers fall
  short here: keyword retrieval ANDs every term (`plainto_tsquery`) and re-parses each matching row's text to rank
  it (multi-second at 100k chunks for common words), and every retrieval is `SELECT *`, embeddings included (about
  twice the cost of the search). Ours finds the exact BM25 top k of the question's analyzer terms in the process's
  in-memory copy of the postings while it is at the database's generation (`keyword_memory.py`), else in
  impact-ordered postings read with a cut-off (`KeywordPostings`, `postings_index.py`), reads only id, content and
  meta, computes sentence cosines in SQL for given ids (`sentence_similarities`), and sets `hnsw.ef_search`
  per query, with an exact fallback when a selective filter leaves too few rows.
  Filters are translated by the product's own SQL (`pgvector_adapter.where_clause`), which a conformance test
  holds to the rows the integration's `filter_documents` selects, so they mean what they mean to its retrievers.

HNSW and the side table's GIN are built after bulk loads (an HNSW-indexed table writes several times slower; the GIN
kept up row by row cost twice its build): bulk loaders (`research kb copy`, the benchmarks) call
`ensure_vector_index()` at the end, and a search on 1,000+ chunks without them starts a background build. The
integration's keyword index stays as it made it (deferred, its build took back what it saved the writes).
`write_documents` is used as it is: its `executemany` already pipelines the rows' `INSERT ... ON CONFLICT` with one
commit per call (two round trips a document, beside one for the evidence and two for the registry).

A table this index did not create (`research kb attach`) gets no DDL at all: the integration's setup (its keyword
index) is skipped, and HNSW is built on it only when asked (`ensure_vector_index(users_table=True)`, `research kb
enrich --index`); until then dense search is exact, or uses an HNSW index the table already has.

The evidence lives in side tables on the same database, never as columns of the integration's table, so a user's
attached table is only read: `<table>_chunk_terms` (per chunk: a stored english tsvector with a GIN index, the
analyzer's term counts and their total), `<table>_sentences` (sentence spans with in-context embeddings) and
`<table>_terms` (each analyzer term's document frequency, for BM25 with collection IDF), and the keyword postings
(`<table>_postings`, `<table>_postings_totals`), all written in the evidence's transaction.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from haystack import Document, logging
from haystack.document_stores.types import DuplicatePolicy
from haystack.utils import Secret
from haystack.utils.auth import EnvVarSecret
from haystack_integrations.document_stores.pgvector import PgvectorDocumentStore
from psycopg import sql
from psycopg.conninfo import make_conninfo
from psycopg.types.json import Jsonb

from components.contracts import ScoreKind
from components.database import DatabaseUnavailable, connection_pool_for, database_url, postgres_url
from components.knowledge_base.chunk_index import ChunkEvidence, ChunkIndex, IndexHit, in_order
from components.knowledge_base.keyword_memory import KeywordMemory, shared_memory
from components.knowledge_base.pgvector_adapter import adopt_existing_table, env_var_names, where_clause
from components.knowledge_base.postings_index import KeywordPostings
from components.knowledge_base.registry import keyset_pages, pooled_connection, select_by_ids
from components.knowledge_base.store import KnowledgeBaseUnavailable, TermStatistics
from components.settings import get_settings
from components.text import bm25
from components.text.analyzer import term_counts
from components.text.analyzer import terms as analyzer_terms

logger = logging.getLogger(__name__)

# HNSW candidates per query. pgvector 0.6 filters after the scan, so filtered queries take more candidates (at 10k
# chunks ef 400 cost ~80 ms, ef 100 ~8 ms), and a filter too selective for them falls back to the exact order.
# Unfiltered: 100 kept recall@10 at 0.98 against exact at 100k chunks (64: 0.96, 40: 0.94; docs/search-at-scale.md).
_EF_SEARCH_MIN = 100
_EF_SEARCH_FILTERED = 100
_EF_SEARCH_FILTERED_PER_ROW = 5
_BUILD_MEMORY = "256MB"
# Measured: exact top-10 over 3k chunks ~10x slower than HNSW (31 vs 3 ms on a busy machine); below 1k it is cheap.
_INDEX_MIN_ROWS = 1000
_INDEX_CHECK_EVERY_S = 30.0
# With a filter, keyword search in memory reads its ranking this deep (per result, at least the minimum) under the
# filter; a filter that leaves fewer than asked for there goes to the server-side path.
_FILTER_DEPTH = 20
_FILTER_DEPTH_MIN = 200
_OPS = {"cosine_similarity": "vector_cosine_ops", "inner_product": "vector_ip_ops", "l2_distance": "vector_l2_ops"}


def _as_array(vector: Any) -> np.ndarray:
    return np.asarray(vector.to_numpy() if hasattr(vector, "to_numpy") else vector, dtype=np.float32)


class _VectorRow(Document):
    """A chunk on its way into `PgvectorDocumentStore.write_documents`: the same Document, whose unflattened
    `to_dict` (what the integration's converter reads) hands over the embedding as a float32 array, which pgvector's
    own psycopg adapter sends as a binary vector.

    Given a plain Document, the converter deep-copies the 384 floats one by one (`dataclasses.asdict`) and psycopg
    sends them as a float8[] text literal for the server to cast: measured about 1 ms + 2 ms of Python per chunk, most
    of a write. The row written is the same (a test compares the two paths).
    """

    def to_dict(self, flatten: bool = True) -> dict[str, Any]:
        if flatten or self.embedding is None:
            return super().to_dict(flatten=flatten)
        bare = dataclasses.replace(self, embedding=None).to_dict(flatten=False)
        return {**bare, "embedding": np.asarray(self.embedding, dtype=np.float32)}


def _vector_row(document: Document) -> Document:
    return _VectorRow(**{item.name: getattr(document, item.name) for item in dataclasses.fields(Document)})


@contextmanager
def _build_progress(pool: Any, pid: int, progress: Callable[[int, int], None] | None) -> Iterator[None]:
    """While an index is built on the connection of backend `pid`, tell `progress(done, total)` twice a second how
    many of the table's blocks its scan has read (`pg_stat_progress_create_index`; pgvector reports no tuple total)."""
    finished = threading.Event()

    def watch() -> None:
        while progress is not None and not finished.wait(0.5):
            with pooled_connection(pool) as conn:
                row = conn.execute(
                    "SELECT blocks_done, blocks_total FROM pg_stat_progress_create_index WHERE pid = %s", (pid,)
                ).fetchone()
            if row is not None and row[1]:
                progress(int(row[0]), int(row[1]))

    watcher = threading.Thread(target=watch, name="index-progress", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        finished.set()
        watcher.join(5)


class PgvectorChunkIndex(ChunkIndex):
    """The chunks of one knowledge base in a `PgvectorDocumentStore` (see the module docstring for what is read
    how). Thread-safe.

    Usage:
    ```python
    store = PgvectorDocumentStore(table_name="research", embedding_dimension=384,
                                  keyword_index_name="research_keyword", hnsw_index_name="research_hnsw")
    index = PgvectorChunkIndex(store, url=database_url())
    index.write(documents, evidence)
    hits = index.dense(query_vector, 10, filters={"field": "meta.doc_type", "operator": "==", "value": "pdf"})
    ```

    `ef_search_min` (public, may be changed on an open index) is the fewest HNSW candidates an unfiltered dense search
    takes (`hnsw.ef_search`; more when the limit asks for more): a benchmark sets it to measure recall against cost.
    """

    backend = "pgvector"

    def __init__(
        self,
        document_store: Any,
        url: str,
        embedding_model: str | None = None,
        checks_text_analysis: bool = True,
        keyword_index_max_postings: int | None = None,
    ) -> None:
        """
        :param document_store: the integration's `PgvectorDocumentStore`, as given (never replaced).
        :param url: the database the store's `connection_string` resolves to (`open_chunk_index` resolves it).
        :param embedding_model: the model the embeddings come from (recorded beside the table; a table made for
            another model is a `KnowledgeBaseMismatch`); the settings' model when None.
        :param checks_text_analysis: False for a reader that never keyword-searches or writes
            (`ChunkIndex.check_text_analysis`).
        :param keyword_index_max_postings: keyword search scores in an in-memory copy of the postings
            (`keyword_memory`) while the collection holds at most this many (0: always on the database); the
            settings' `KEYWORD_INDEX_MAX_POSTINGS` when None.
        """
        self.checks_text_analysis = checks_text_analysis
        if keyword_index_max_postings is None:
            keyword_index_max_postings = get_settings().keyword_index_max_postings
        self.keyword_index_max_postings = max(0, int(keyword_index_max_postings))
        self.ef_search_min = _EF_SEARCH_MIN
        self.document_store = document_store
        self.collection = str(document_store.table_name)
        self.schema = str(document_store.schema_name)
        self.dimension = int(document_store.embedding_dimension)
        self.embedding_model = embedding_model or get_settings().embedding_model
        self.database_url = url
        try:
            self._pool = connection_pool_for(url)
        except DatabaseUnavailable as exc:
            raise KnowledgeBaseUnavailable(str(exc)) from exc
        self._vector_function = str(document_store.vector_function)
        self._vector_type = str(getattr(document_store, "vector_type", "vector"))
        self._table = sql.Identifier(self.schema, self.collection)
        self._chunk_terms = sql.Identifier(self.schema, f"{self.collection}_chunk_terms")
        self._sentences = sql.Identifier(self.schema, f"{self.collection}_sentences")
        self._terms = sql.Identifier(self.schema, f"{self.collection}_terms")
        self._tsv_index = f"{self.collection}_chunk_terms_tsv"
        self._postings = KeywordPostings(self.schema, self.collection)
        self._memory = shared_memory(url, self._pool, self._postings)
        # The indexes a bulk load is faster without, by the name they are checked under: HNSW on the integration's
        # table (any name), the GIN of the side table's tsvectors.
        self._deferred = {
            "hnsw": self._q(
                "CREATE INDEX IF NOT EXISTS {name} ON {table} USING hnsw (embedding {ops}) "
                "WITH (m = 16, ef_construction = 64)",
                name=sql.Identifier(f"{self.collection}_hnsw"),
                ops=sql.SQL(_OPS.get(self._vector_function, "vector_cosine_ops")),
            ),
            self._tsv_index: self._q(
                "CREATE INDEX IF NOT EXISTS {name} ON {chunk_terms} USING gin (tsv)",
                name=sql.Identifier(self._tsv_index),
            ),
        }
        self._write_lock = threading.Lock()  # the store's one connection serves one write at a time
        self._index_lock = threading.Lock()
        self._start_lock = threading.Lock()
        self.owns_table = False  # set by `_open`: whether this index created the integration's table
        self._hnsw = False  # the table has an HNSW index (any name)
        self._sealed = False  # no deferred index left to build without being asked
        self._index_build: threading.Thread | None = None
        self._next_index_check = 0.0
        self._answers_lock = threading.Lock()
        self._answered_from_memory = 0
        self._open()

    @property
    def keyword_memory(self) -> KeywordMemory:
        """The process's in-memory copy of this collection's keyword postings (one per database and collection,
        shared by every index opened on it): what keyword search answers from while it is current."""
        return self._memory

    # -- connections and schema -------------------------------------------------------------------------------------

    def _connection(self) -> Any:
        return pooled_connection(self._pool)

    def _q(self, template: str, **more: sql.Composable) -> sql.Composed:
        """`template` with the table names (and `more`) filled in."""
        return sql.SQL(template).format(
            table=self._table, chunk_terms=self._chunk_terms, sentences=self._sentences, terms=self._terms, **more
        )

    def _open(self) -> None:
        """Check an existing table's dimension and model, let the store create a new table, add the side tables.

        A table this index did not create (an attached one) is never altered by the integration: its first call
        would add its keyword index (and with `search_strategy="hnsw"` rebuild that index, with `recreate_table`
        drop the table), so the store is pointed at the table's own indexes (`pgvector_adapter`)."""
        with self._connection() as conn:
            created, typmod, storage, comment = conn.execute(
                """SELECT to_regclass(%(t)s) IS NULL, a.atttypmod, a.attstorage,
                          obj_description(to_regclass(%(c)s), 'pg_class')
                   FROM (SELECT 1) one LEFT JOIN pg_attribute a
                   ON a.attrelid = to_regclass(%(t)s) AND a.attname = 'embedding'""",
                {"t": self._table.as_string(conn), "c": self._chunk_terms.as_string(conn)},
            ).fetchone()
        if typmod is not None and typmod > 0:
            self.check_embeddings(typmod)
        try:
            recorded = dict(json.loads(comment or "{}"))
        except (ValueError, TypeError):
            recorded = {}
        # Tables made before the marker existed are known by the in-row storage this index gives a table it makes.
        self.owns_table = bool(created or recorded.get("owns_table", storage == "m"))
        if self.owns_table:
            with self._write_lock:
                self.document_store.count_documents()  # the integration creates its table and keyword index
        else:
            with self._connection() as conn:
                adopt_existing_table(self.document_store, conn)
        with self._connection() as conn, conn.transaction():
            # Two processes creating the same tables at once collide on the catalog; the lock serialises them.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"kb-index:{self.collection}",))
            for statement in (
                """CREATE TABLE IF NOT EXISTS {chunk_terms} (
                    chunk_id text PRIMARY KEY, tsv tsvector NOT NULL, term_counts jsonb, term_total integer)""",
                """CREATE TABLE IF NOT EXISTS {sentences} (
                    chunk_id text NOT NULL, idx integer NOT NULL, start_char integer NOT NULL,
                    end_char integer NOT NULL, embedding vector({dimension}) NOT NULL, PRIMARY KEY (chunk_id, idx))""",
                "CREATE TABLE IF NOT EXISTS {terms} (term text PRIMARY KEY, df integer NOT NULL)",
            ):
                conn.execute(self._q(statement, dimension=sql.Literal(self.dimension)))
            if self._postings.create(conn):
                logger.info("Keyword postings of {collection} created", collection=self.collection)
            if created:
                # The side GIN waits for the seal. Out of line (pgvector's default, taken beside a chunk's text), each
                # vector cost a TOAST row per write and a TOAST read per HNSW build step (twice the build's CPU).
                conn.execute(self._q("ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE MAIN"))
            else:
                conn.execute(self._deferred[self._tsv_index])
            self.check_embeddings(self.dimension, recorded.get("embedding_model"))
            marker = {"embedding_model": recorded.get("embedding_model") or self.embedding_model}
            marker["owns_table"] = self.owns_table
            holds_terms = conn.execute(self._q("SELECT EXISTS (SELECT 1 FROM {chunk_terms})")).fetchone()[0]
            analysis = self.check_text_analysis(recorded.get("text_analysis"), bool(holds_terms))
            if analysis is not None:
                marker["text_analysis"] = analysis
            if marker != recorded:
                conn.execute(self._q("COMMENT ON TABLE {chunk_terms} IS {m}", m=sql.Literal(json.dumps(marker))))
            self._hnsw, missing = self._index_state(conn)
            self._sealed = not missing

    # -- writes -----------------------------------------------------------------------------------------------------

    def write(self, chunks: list[Document], evidence: list[ChunkEvidence]) -> None:
        if chunks:
            # pgvector's adapter sends numpy arrays as `vector` only; a halfvec table gets the plain Documents.
            rows = [_vector_row(doc) for doc in chunks] if self._vector_type == "vector" else chunks
            with self._write_lock:
                self.document_store.write_documents(rows, policy=DuplicatePolicy.OVERWRITE)
        self.add_evidence(chunks, evidence)

    def add_evidence(self, chunks: list[Document], evidence: list[ChunkEvidence]) -> None:
        """The side rows (tsvector, term counts, sentences) in one round trip: the statements go out as one pipeline
        and commit together, none of them reads a result back (so the sentence vectors go as one `vector[]`
        parameter: COPY cannot be pipelined)."""
        if not chunks:
            return
        by_id = {item.chunk_id: item for item in evidence}
        ids, texts, counts, totals = [], [], [], []
        frequency: Counter[str] = Counter()
        for doc in chunks:
            item = by_id.get(str(doc.id))
            terms = item.term_counts if item is not None else None
            if terms is None:
                # Keyword search reads the postings of these counts: a chunk written without them gets what
                # ingestion would have counted (its title and text).
                terms = term_counts(f"{(doc.meta or {}).get('title') or ''}\n{doc.content or ''}") or None
            if not terms or sum(terms.values()) <= 0:
                terms = None  # no terms: stored as none, so no count of the keyword totals ever includes it
            ids.append(str(doc.id))
            texts.append((doc.content or "").replace("\x00", ""))
            counts.append(None if terms is None else Jsonb(terms))
            totals.append(None if terms is None else int(sum(terms.values())))
            frequency.update((terms or {}).keys())  # one chunk more holds each of its terms
        sentences: list[list[Any]] = [[], [], [], [], []]
        for item in evidence:
            if item.sentence_spans and item.sentence_embeddings is not None:
                vectors = np.asarray(item.sentence_embeddings, dtype=np.float32)
                for k, ((start, end), vector) in enumerate(zip(item.sentence_spans, vectors, strict=True)):
                    for column, value in zip(sentences, (item.chunk_id, k, int(start), int(end), vector), strict=True):
                        column.append(value)
        with self._connection() as conn, conn.pipeline(), conn.transaction():
            conn.execute("SET LOCAL synchronous_commit = off")
            # Writers of one collection update shared term rows; one writer at a time cannot deadlock.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"kb-terms:{self.collection}",))
            self._forget(conn, ids)
            # The server parses each text into its stored tsvector.
            conn.execute(
                self._q(
                    "INSERT INTO {chunk_terms} (chunk_id, tsv, term_counts, term_total) "
                    "SELECT u.id, to_tsvector('english'::regconfig, u.body), u.counts, u.total "
                    "FROM unnest(%s::text[], %s::text[], %s::jsonb[], %s::integer[]) AS u(id, body, counts, total)"
                ),
                (ids, texts, counts, totals),
            )
            self._postings.add(conn, ids, [None if c is None else c.obj for c in counts])
            if frequency:
                ordered = sorted(frequency)
                conn.execute(
                    self._q(
                        "INSERT INTO {terms} (term, df) SELECT * FROM unnest(%s::text[], %s::integer[]) "
                        "ON CONFLICT (term) DO UPDATE SET df = {terms}.df + EXCLUDED.df"
                    ),
                    (ordered, [frequency[term] for term in ordered]),
                )
            if sentences[0]:
                conn.execute(
                    self._q(
                        "INSERT INTO {sentences} (chunk_id, idx, start_char, end_char, embedding) SELECT * FROM "
                        "unnest(%s::text[], %s::integer[], %s::integer[], %s::integer[], %s::vector[])"
                    ),
                    sentences,
                )

    def _forget(self, conn: Any, chunk_ids: list[str]) -> None:
        """Take these chunks' side rows away, and their terms out of the document frequencies (a term no chunk has
        any more is deleted). Reads nothing back, so it pipelines."""
        self._postings.forget(conn, chunk_ids)
        conn.execute(
            self._q(
                "WITH o AS ("
                "  SELECT k.term, count(*) AS n FROM {chunk_terms} c, jsonb_object_keys(c.term_counts) AS k(term)"
                "  WHERE c.term_counts IS NOT NULL AND c.chunk_id = ANY(%s) GROUP BY k.term"
                "), gone AS (DELETE FROM {terms} t USING o WHERE t.term = o.term AND t.df <= o.n) "
                "UPDATE {terms} t SET df = t.df - o.n FROM o WHERE t.term = o.term AND t.df > o.n"
            ),
            (chunk_ids,),
        )
        conn.execute(self._q("DELETE FROM {chunk_terms} WHERE chunk_id = ANY(%s)"), (chunk_ids,))
        conn.execute(self._q("DELETE FROM {sentences} WHERE chunk_id = ANY(%s)"), (chunk_ids,))

    def delete(self, chunk_ids: list[str]) -> None:
        ids = [str(chunk_id) for chunk_id in chunk_ids]
        if not ids:
            return
        with self._connection() as conn, conn.pipeline(), conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"kb-terms:{self.collection}",))
            self._forget(conn, ids)
        with self._write_lock:
            self.document_store.delete_documents(ids)

    # -- reads ------------------------------------------------------------------------------------------------------

    def fetch(self, chunk_ids: list[str], with_embeddings: bool = False) -> list[Document]:
        columns = "id, content, meta" + (", embedding" if with_embeddings else "")
        rows = select_by_ids(self._pool, self._q(f"SELECT {columns} FROM {{table}} WHERE id = ANY(%s)"), chunk_ids)
        return in_order(map(str, chunk_ids), {row[0]: self._document(row, with_embeddings) for row in rows})

    @staticmethod
    def _document(row: tuple, with_embedding: bool = False) -> Document:
        embedding = _as_array(row[3]).tolist() if with_embedding and row[3] is not None else None
        return Document(id=row[0], content=row[1], meta=row[2] or {}, embedding=embedding)

    def dense(self, embedding: np.ndarray, limit: int, filters: dict | None = None) -> list[IndexHit]:
        """The `limit` nearest chunks by cosine (raw score = cosine similarity)."""
        vector = np.asarray(embedding, dtype=np.float32).reshape(-1)
        limit = max(1, int(limit))
        self._index_on_first_search()
        where, params = where_clause(filters, "WHERE")
        filtered = bool(filters)
        template = (
            "SELECT id, content, meta, 1 - (embedding <=> %s) AS cosine FROM {table}{where} ORDER BY {order} LIMIT %s"
        )
        floor, per_row = (_EF_SEARCH_FILTERED, _EF_SEARCH_FILTERED_PER_ROW) if filtered else (self.ef_search_min, 2)
        ef_search = min(1000, max(floor, per_row * limit))

        def statement(order: str) -> sql.Composed:
            return self._q(template, where=where, order=sql.SQL(order))

        values = (vector, *params, vector, limit)
        with self._connection() as conn, conn.transaction():
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef_search),))
            rows = conn.execute(statement("embedding <=> %s"), values).fetchall()
            if filtered and len(rows) < limit and self._hnsw:
                # The approximate scan filters after it finds candidates; a selective filter can leave too few,
                # so the exact order (not index-orderable, hence the + 0) finds every row that exists.
                rows = conn.execute(statement("(embedding <=> %s) + 0"), values).fetchall()
        return [
            IndexHit(self._document(row), float(row[3]), ScoreKind.COSINE, float(row[3]))
            for row in rows
            if row[3] is not None
        ]

    def keyword(
        self, query: str, limit: int, filters: dict | None = None, query_embedding: np.ndarray | None = None
    ) -> list[IndexHit]:
        """The `limit` chunks with the best BM25 of the question's analyzer terms, best first: exact top-k BM25 over
        the collection (k1 1.2, b 0.75, IDF from the collection's document frequencies: the statistics the ranker
        reads), scored in the in-memory copy of the postings when it is at the database's generation
        (`_keyword_in_memory`), else found in the impact-ordered postings with a cut-off (`KeywordPostings`), so its
        cost follows the answer, not the table. Raw score: the BM25 score. With `query_embedding`, cosines are
        computed in SQL for the returned rows only.
        """
        limit = max(1, int(limit))
        self._index_on_first_search()
        wanted = sorted(set(analyzer_terms(query or "")))
        if not wanted:
            return []
        cosine = sql.SQL("1 - (embedding <=> %s)") if query_embedding is not None else sql.SQL("NULL::float8")
        vector = [] if query_embedding is None else [np.asarray(query_embedding, dtype=np.float32).reshape(-1)]
        found = self._keyword_in_memory(wanted, limit, filters, cosine, vector)
        if found is not None:
            with self._answers_lock:
                self._answered_from_memory += 1
            return found
        if not filters:
            # One statement: the server-side function reads the statistics and finds the top k (the same steps as
            # `KeywordPostings.search`, without a round trip each), joined with the rows it names.
            with self._connection() as conn:
                rows = conn.execute(
                    self._q(
                        "SELECT t.id, t.content, t.meta, {cosine}, f.score FROM {top} f JOIN {table} t "
                        "ON t.id = f.chunk_id ORDER BY f.place",
                        cosine=cosine,
                        top=self._postings.top(),
                    ),
                    [*vector, *self._postings.top_params(wanted, limit)],
                ).fetchall()
            return [
                IndexHit(self._document(row), float(row[4]), ScoreKind.BM25, None if row[3] is None else float(row[3]))
                for row in rows
            ]
        where, params = where_clause(filters, "AND")
        # With a filter, every posting of the terms is scored (a filter can leave any chunk as the best); also one
        # statement, the statistics read in it.
        with self._connection() as conn:
            rows = conn.execute(
                self._q(
                    "WITH f AS ({top}) SELECT t.id, t.content, t.meta, {cosine}, f.score FROM f JOIN {table} t "
                    'ON t.id = f.chunk_id ORDER BY f.score DESC, f.chunk_id COLLATE "C"',
                    top=self._postings.filtered_top(where),
                    cosine=cosine,
                ),
                [wanted, *params, limit, *vector],
            ).fetchall()
        return [
            IndexHit(self._document(row), float(row[4]), ScoreKind.BM25, None if row[3] is None else float(row[3]))
            for row in rows
        ]

    def _keyword_in_memory(
        self, wanted: list[str], limit: int, filters: dict | None, cosine: sql.Composable, vector: list
    ) -> list[IndexHit] | None:
        """`keyword` scored in the process's in-memory copy of the postings (`keyword_memory`), when there is one at
        the database's generation; None when the server-side path must answer (no copy, another generation, or a
        filter the candidates read could not settle).

        The rows are read in one statement with the database's generation: when it is the copy's, the statement's
        snapshot holds exactly the postings the copy scored. Without a filter the top `limit` are read by id. With
        one, the copy's ranking is read in order to a depth (`_FILTER_DEPTH` per result) under the filter: its first
        `limit` rows that pass are the filtered top `limit` (ties are ordered by id in both), and when fewer pass the
        answer is settled only if the ranking ended within the depth (every chunk holding a term was read)."""
        copy = self._memory.current(self.keyword_index_max_postings)
        if copy is None:
            return None
        depth = limit if not filters else max(_FILTER_DEPTH * limit, _FILTER_DEPTH_MIN)
        ranked = copy.ranked(wanted, depth)
        where, params = where_clause(filters, "AND")
        scores = dict(ranked)
        with self._connection() as conn:
            rows = conn.execute(
                self._q(
                    "SELECT g.generation, x.id, x.content, x.meta, x.cosine FROM {totals} g LEFT JOIN LATERAL ("
                    "  SELECT t.id, t.content, t.meta, {cosine} AS cosine, c.place "
                    "  FROM unnest(%s::text[]) WITH ORDINALITY AS c(wanted_id, place) JOIN {table} t "
                    "  ON t.id = c.wanted_id WHERE true {where} ORDER BY c.place LIMIT %s) x ON true ORDER BY x.place",
                    totals=self._postings.totals_table,
                    cosine=cosine,
                    where=where,
                ),
                [*vector, [chunk_id for chunk_id, _ in ranked], *params, limit],
            ).fetchall()
        generation = int(rows[0][0]) if rows else None
        if generation != copy.generation:
            if generation is not None:
                self._memory.stale(generation, self.keyword_index_max_postings)
            return None
        found = [row[1:] for row in rows if row[1] is not None]
        if filters and len(found) < limit and len(ranked) == depth:
            return None  # the ranking goes on past the depth read: the server-side path scores every posting
        return [
            IndexHit(self._document(row), scores[row[0]], ScoreKind.BM25, None if row[3] is None else float(row[3]))
            for row in found
        ]

    @property
    def keyword_answers_from_memory(self) -> int:
        """How many `keyword` searches this index has answered from the in-memory copy of the postings (the others
        were answered on the database): what a measurement of that path checks it measured."""
        with self._answers_lock:
            return self._answered_from_memory

    def warm_keyword(self) -> None:
        """Start loading the in-memory copy of the keyword postings in the background (when allowed and not
        loaded): the first questions are answered on the database meanwhile."""
        if self.keyword_index_max_postings > 0:
            self._memory.current(self.keyword_index_max_postings)

    def count(self) -> int:
        with self._connection() as conn:
            return int(conn.execute(self._q("SELECT count(*) FROM {table}")).fetchone()[0])

    def iter_documents(self, batch_size: int = 1000, with_embeddings: bool = False) -> Iterator[list[Document]]:
        columns = "id, content, meta" + (", embedding" if with_embeddings else "")
        statement = self._q(f"SELECT {columns} FROM {{table}} WHERE id > %s ORDER BY id LIMIT %s")
        for rows in keyset_pages(self._pool, statement, batch_size):
            yield [self._document(row, with_embeddings) for row in rows]

    # -- evidence ---------------------------------------------------------------------------------------------------

    def evidence(self, chunk_ids: list[str]) -> dict[str, ChunkEvidence]:
        counts = select_by_ids(
            self._pool, self._q("SELECT chunk_id, term_counts FROM {chunk_terms} WHERE chunk_id = ANY(%s)"), chunk_ids
        )
        statement = self._q(
            "SELECT chunk_id, start_char, end_char, embedding FROM {sentences} WHERE chunk_id = ANY(%s) "
            "ORDER BY chunk_id, idx"
        )
        spans: dict[str, list[tuple[int, int]]] = {}
        vectors: dict[str, list[np.ndarray]] = {}
        for chunk_id, start, end, vector in select_by_ids(self._pool, statement, chunk_ids):
            spans.setdefault(chunk_id, []).append((start, end))
            vectors.setdefault(chunk_id, []).append(_as_array(vector))
        terms = dict(counts)
        found = [
            ChunkEvidence.stored(chunk_id, spans.get(chunk_id), vectors.get(chunk_id), terms.get(chunk_id))
            for chunk_id in terms.keys() | spans.keys()
        ]
        return {item.chunk_id: item for item in found if not item.empty}

    def sentence_similarities(
        self, chunk_ids: list[str], query_embedding: np.ndarray
    ) -> dict[str, list[tuple[int, int, float]]]:
        """Computed in SQL for the given chunks only, in one round trip."""
        vector = np.asarray(query_embedding, dtype=np.float32).ravel()
        return _similarities(select_by_ids(self._pool, self._sentence_similarities_statement(), chunk_ids, vector))

    def ranking_evidence(
        self, chunk_ids: list[str], query_embedding: np.ndarray, terms: list[str]
    ) -> tuple[dict[str, list[tuple[int, int, float]]], TermStatistics | None]:
        """`sentence_similarities` and `term_statistics` in one statement, one round trip: the sentences come as
        arrays in their usual order (chunk id, then position), beside the statistics. Against the two statements one
        after the other on one connection (which beat a worker thread and a psycopg pipeline), alternated call by
        call on the benchmark's questions: p50 0.48 against 0.69 ms, mean 0.62 against 1.10 ms, the same answers;
        see docs/measurements.md."""
        unique = sorted({str(chunk_id) for chunk_id in chunk_ids})
        wanted = sorted({str(term) for term in terms})
        if not unique:
            return {}, self.term_statistics(wanted)
        vector = np.asarray(query_embedding, dtype=np.float32).ravel()
        with self._connection() as conn:
            row = conn.execute(self._ranking_evidence_statement(), (wanted, vector, unique)).fetchone()
        rows = zip(row[0] or (), row[1] or (), row[2] or (), row[3] or (), strict=True)
        return _similarities(rows), _term_statistics(wanted, row[4], row[5], row[6])

    def _sentence_similarities_statement(self) -> sql.Composed:
        return self._q(
            "SELECT chunk_id, start_char, end_char, 1 - (embedding <=> %s) FROM {sentences} "
            "WHERE chunk_id = ANY(%s) ORDER BY chunk_id, idx"
        )

    def _ranking_evidence_statement(self) -> sql.Composed:
        """The sentences' (chunk id, start, end, cosine) as four arrays in `_sentence_similarities_statement`'s order,
        then `_statistics`' three values; one row even when no sentence matches or the totals are empty."""
        order = "ORDER BY chunk_id, idx"
        return self._q(
            f"SELECT s.ids, s.starts, s.ends, s.cosines, (SELECT jsonb_object_agg(term, df) FROM {{terms}} "
            f"WHERE term = ANY(%s)), t.chunks, t.terms FROM (SELECT array_agg(chunk_id {order}) AS ids, "
            f"array_agg(start_char {order}) AS starts, array_agg(end_char {order}) AS ends, "
            f"array_agg(1 - (embedding <=> %s) {order}) AS cosines FROM {{sentences}} WHERE chunk_id = ANY(%s)) s "
            "LEFT JOIN {totals} t ON true",
            totals=self._postings.totals_table,
        )

    def term_statistics(self, terms: list[str]) -> TermStatistics | None:
        """One round trip; the chunk count and average length are the postings' running totals (no scan), the same
        statistics keyword search scores with."""
        with self._connection() as conn:
            return self._statistics(conn, sorted({str(term) for term in terms}))

    def _statistics(self, conn: Any, wanted: list[str]) -> TermStatistics | None:
        """The document frequencies of `wanted` and the postings' totals, in one statement."""
        row = conn.execute(
            self._q(
                "SELECT (SELECT jsonb_object_agg(term, df) FROM {terms} WHERE term = ANY(%s)), t.chunks, t.terms "
                "FROM {totals} t",
                totals=self._postings.totals_table,
            ),
            (wanted,),
        ).fetchone()
        return None if row is None else _term_statistics(wanted, *row)

    def stored_term_counts(self) -> list[tuple[str, dict[str, int]]]:
        """Every chunk's stored analyzer term counts (those keyword search scores), `(chunk_id, counts)` by chunk id,
        chunks without terms left out: what an exact BM25 reference is computed from, whichever analyzer wrote them.
        Reads the whole side table."""
        with self._connection() as conn:
            rows = conn.execute(
                self._q("SELECT chunk_id, term_counts FROM {chunk_terms} WHERE term_total > 0 ORDER BY chunk_id")
            ).fetchall()
        return [(str(row[0]), dict(row[1])) for row in rows]

    def exact_nearest(self, embedding: np.ndarray, limit: int) -> list[str]:
        """The ids of the `limit` chunks nearest `embedding` by cosine distance, exactly (every row read, no
        approximate index): the reference `dense`'s recall is measured against. Its cost grows with the table."""
        vector = np.asarray(embedding, dtype=np.float32).reshape(-1)
        statement = self._q("SELECT id FROM {table} ORDER BY (embedding <=> %s) + 0 LIMIT %s")
        with self._connection() as conn:
            rows = conn.execute(statement, (vector, max(1, int(limit)))).fetchall()
        return [str(row[0]) for row in rows]

    # -- diagnostics: the keyword strategies `keyword` was chosen over ----------------------------------------------
    #
    # For measuring (`research bench --only scale`, docs/search-at-scale.md), never for answering a question: each
    # runs one alternative on the index's own tables, so that a benchmark compares it with the path in use through
    # the index's public methods.

    def keyword_by_ts_rank(self, query: str, limit: int) -> list[str]:
        """Diagnostic: the ids of the `limit` chunks PostgreSQL's `ts_rank` (normalisation 33) ranks best for an OR
        of the question's english lexemes over the stored tsvectors, best first (its score is not BM25's): full-text
        ranking as the database offers it, which keyword search does not use."""
        statement = self._q(
            """
            WITH q AS (
                SELECT (SELECT string_agg('''' || replace(replace(t, '\\', '\\\\'), '''', '''''') || '''', ' | ')
                        FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, %s))) AS t)::tsquery AS tsq
            ) SELECT s.chunk_id, ts_rank(s.tsv, q.tsq, 33) AS score FROM {chunk_terms} s, q WHERE s.tsv @@ q.tsq
            ORDER BY score DESC, s.chunk_id LIMIT %s
            """
        )
        with self._connection() as conn:
            return [str(row[0]) for row in conn.execute(statement, (query, limit)).fetchall()]

    def keyword_every_posting(self, query: str, limit: int) -> list[tuple[str, float]]:
        """Diagnostic: the exact BM25 top `limit` of the question's analyzer terms, `(chunk_id, score)` best first,
        found by scoring every posting of the terms (no cut-off; what a filtered search does), after a statistics
        lookup of its own."""
        statistics = self.term_statistics(sorted(set(analyzer_terms(query or ""))))
        if statistics is None:
            return []
        with self._connection() as conn:
            return self._postings.search(conn, _idf(statistics), limit, statistics.avg_terms, sql.SQL(""), ())

    def keyword_cut_off_steps(self, query: str, limit: int) -> list[tuple[str, float]]:
        """Diagnostic: the BM25 top `limit`, `(chunk_id, score)` best first, by the cut-off over the impact-ordered
        postings run from the client a statement per step (the statistics, each step of `KeywordPostings.search`, then
        the rows read by id): the index's former path, which the one server-side statement replaced."""
        wanted = sorted(set(analyzer_terms(query or "")))
        with self._connection() as conn:
            statistics = self._statistics(conn, wanted)
            if statistics is None:
                return []
            top = self._postings.search(conn, _idf(statistics), limit, statistics.avg_terms)
            conn.execute(
                self._q("SELECT id, content, meta FROM {table} WHERE id = ANY(%s)"),
                ([chunk_id for chunk_id, _ in top],),
            ).fetchall()
        return top

    @contextmanager
    def keyword_function_session(self) -> Iterator[tuple[int, Callable[[str, int], list[tuple[str, float]]]]]:
        """Diagnostic: one pooled connection held open, as `(server process id, search)`, where `search(query, limit)`
        calls the server-side keyword function on that connection alone (`(chunk_id, score)` best first, no rows read):
        for measuring what the function costs the database server, by that process's CPU time."""
        with self._connection() as conn:

            def search(query: str, limit: int) -> list[tuple[str, float]]:
                return self._postings.search_on_server(conn, sorted(set(analyzer_terms(query or ""))), limit)

            yield int(conn.info.backend_pid), search

    # -- the vector index -------------------------------------------------------------------------------------------

    def _index_state(self, conn: Any, users_table: bool = False) -> tuple[bool, list[sql.Composed]]:
        """Whether the table has an HNSW index (under any name: a user's table may have its own), and the statements
        creating the deferred indexes that are missing; HNSW among them only on a table this index created, or when
        `users_table` asks for it."""
        rows = conn.execute(
            "SELECT indexname, tablename, indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = ANY(%s)",
            (self.schema, [self.collection, f"{self.collection}_chunk_terms"]),
        ).fetchall()
        hnsw = any(table == self.collection and "USING hnsw" in definition for _, table, definition in rows)
        found = {name for name, _, _ in rows} | ({"hnsw"} if hnsw or not (self.owns_table or users_table) else set())
        return hnsw, [statement for name, statement in self._deferred.items() if name not in found]

    def ensure_vector_index(
        self, users_table: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> bool:
        """Build the missing indexes deferred until after bulk loads: the side table's tsvector GIN, and HNSW
        (`<table>_hnsw`, for the store's vector function) unless the table has one. On a table this index did not
        create (an attached one) HNSW is built only with `users_table=True` (`research kb enrich --index`): it is
        the one change to the user's table; without it, dense search stays exact. `progress(done, total)` is told
        the table blocks the build has read. True when the table has an HNSW index afterwards.
        Then the keyword postings are vacuumed (`KeywordPostings.vacuum`), so that keyword search reads them from
        their index alone. Idempotent; bulk loads call it once at the end (the benchmark's seal)."""
        hnsw = self._ensure_indexes(users_table, progress)
        with self._connection() as conn:
            self._postings.vacuum(conn)
        return hnsw

    def _ensure_indexes(self, users_table: bool, progress: Callable[[int, int], None] | None) -> bool:
        if self._sealed and (self._hnsw or not users_table):
            return self._hnsw
        with self._index_lock:
            started = time.monotonic()
            with self._connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"kb-hnsw:{self.collection}",))
                self._hnsw, missing = self._index_state(conn, users_table)
                if missing:
                    # The default maintenance_work_mem makes large builds spill to disk and take minutes.
                    conn.execute(sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(_BUILD_MEMORY)))
                    pid = conn.info.backend_pid
                    with _build_progress(self._pool, pid, progress):
                        for statement in missing:
                            conn.execute(statement)
                    self._hnsw = self._hnsw or self.owns_table or users_table
                    logger.info(
                        "Built {count} indexes of {collection} in {seconds:.1f} s",
                        count=len(missing),
                        collection=self.collection,
                        seconds=time.monotonic() - started,
                    )
            self._sealed = True
            return self._hnsw

    def _index_on_first_search(self) -> None:
        if self._sealed or time.monotonic() < self._next_index_check:
            return
        self._next_index_check = time.monotonic() + _INDEX_CHECK_EVERY_S
        with self._connection() as conn:
            self._hnsw, missing = self._index_state(conn)
            if not missing:
                self._sealed = True
                return
            # Below this size an exact scan is a few ms, and an index on a near-empty table would slow the bulk
            # load that usually follows.
            rows = conn.execute(self._q("SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT %s) s"), (_INDEX_MIN_ROWS,))
            if rows.fetchone()[0] < _INDEX_MIN_ROWS:
                return
        # Not `_index_lock`: a running build holds that one, and a search must never wait for it.
        with self._start_lock:
            if self._index_build is None or not self._index_build.is_alive():
                self._index_build = threading.Thread(
                    target=self._build_quietly, name=f"hnsw-{self.collection}", daemon=True
                )
                self._index_build.start()

    def _build_quietly(self) -> None:
        try:
            self.ensure_vector_index()
        except Exception as exc:  # noqa: BLE001 - a failed background build only means searches stay exact
            logger.warning(
                "Building the vector index of {collection} failed: {reason}",
                collection=self.collection,
                reason=str(exc),
            )

    def wait_for_vector_index(self, timeout_s: float = 60.0) -> bool:
        """Wait for a background index build started by a search; True when the table has an HNSW index."""
        thread = self._index_build
        if thread is not None:
            thread.join(timeout_s)
        return self._hnsw

    # -- housekeeping -----------------------------------------------------------------------------------------------

    def drop(self) -> None:
        """Delete the evidence tables and, through the integration, the chunk table if this index created it."""
        self._memory.forget()
        with self._connection() as conn, conn.transaction():
            self._postings.drop(conn)
            conn.execute(self._q("DROP TABLE IF EXISTS {sentences}, {terms}, {chunk_terms}"))
        if self.owns_table:
            with self._write_lock:
                self.document_store.delete_table()
        self._hnsw = self._sealed = False

    def close(self) -> None:
        """Let a background index build finish and close the store's own connection (the pool is the process's)."""
        thread = self._index_build
        if thread is not None and thread.is_alive():
            thread.join(30)
        with self._write_lock:
            self.document_store.close()


# -- building the store and the index ----------------------------------------------------------------------------------

# The environment variables the catalog's store reads its connection string from, first one set wins.
CONNECTION_ENV_VARS = ["DATABASE_URL", "PG_CONN_STR"]


@dataclass(frozen=True)
class EmbeddedDatabaseSecret(EnvVarSecret):
    """An env-var secret that, when none of its variables is set, resolves to the embedded PostgreSQL of the data
    folder. It serialises exactly as the env-var secret it replaces (never the URL), so a pipeline dumped after
    warm-up still reads `DATABASE_URL` when loaded elsewhere.

    On the embedded server the integration's own connection does not wait for the WAL flush at commit: its
    `write_documents` commits every row on its own (autocommit), and waiting for each flush made writes about 1.4x
    slower (measured). The registry's commit-point order still holds after a crash: the WAL is one sequential log,
    so losing these rows loses the document row written after them too. A server of the user's own (`DATABASE_URL`)
    keeps its own setting."""

    _fallback: str = field(default="", repr=False, compare=False)

    @property
    def database_url(self) -> str:
        """The database this secret names: the variable's value, or the embedded server's URL."""
        return super().resolve_value() or self._fallback

    def resolve_value(self) -> Any | None:
        value = super().resolve_value()
        if value or not self._fallback:
            return value
        return make_conninfo(self._fallback, options="-c synchronous_commit=off")


def _term_statistics(wanted: list[str], found: dict | None, chunks: Any, total_terms: Any) -> TermStatistics | None:
    """The statistics of `wanted` from the terms' document frequencies found and the postings' totals; None when no
    chunk has terms (a count below 1 would make no IDF)."""
    if chunks is None or int(chunks) <= 0:
        return None
    found = found or {}
    return TermStatistics(
        n_chunks=int(chunks), avg_terms=float(total_terms) / float(chunks), df={t: int(found.get(t, 0)) for t in wanted}
    )


def _similarities(rows: Iterable[tuple]) -> dict[str, list[tuple[int, int, float]]]:
    """Rows of (chunk id, start, end, cosine), in sentence order, as `sentence_similarities` returns them."""
    similarities: dict[str, list[tuple[int, int, float]]] = {}
    for chunk_id, start, end, cosine in rows:
        similarities.setdefault(chunk_id, []).append((int(start), int(end), float(cosine)))
    return similarities


def document_store_for(settings: Any, collection: str, dimension: int) -> Any:
    """The `PgvectorDocumentStore` of `collection` for the catalog: its connection string from `DATABASE_URL` (or
    `PG_CONN_STR`; the embedded server of the data folder when neither is set), index names of its own (PostgreSQL's
    index names are schema-wide), cosine, and no index built at creation (see `ensure_vector_index`)."""
    return PgvectorDocumentStore(
        connection_string=Secret.from_env_var(CONNECTION_ENV_VARS, strict=False),
        table_name=collection,
        embedding_dimension=dimension,
        vector_function="cosine_similarity",
        search_strategy="exact_nearest_neighbor",
        keyword_index_name=f"{collection}_keyword",
        hnsw_index_name=f"{collection}_hnsw",
        recreate_table=False,
    )


def open_chunk_index(
    document_store: Any,
    embedding_model: str | None = None,
    checks_text_analysis: bool = True,
    keyword_index_max_postings: int | None = None,
) -> PgvectorChunkIndex:
    """The chunk index over `document_store` (on the database `_store_url` resolves)."""
    return PgvectorChunkIndex(
        document_store,
        url=_store_url(document_store),
        embedding_model=embedding_model,
        checks_text_analysis=checks_text_analysis,
        keyword_index_max_postings=keyword_index_max_postings,
    )


def collection_names(document_store: Any) -> list[str]:
    """The document tables of the store's schema (those with a document store's `embedding` and `meta` columns: not
    the graph's, the keyword postings' or the conversation memory's tables beside them), read on the process's pool
    without the store (whose first call creates its table)."""
    with pooled_connection(connection_pool_for(_store_url(document_store))) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = %s"
            " AND column_name IN ('embedding', 'meta') GROUP BY table_name HAVING count(DISTINCT column_name) = 2",
            (document_store.schema_name,),
        ).fetchall()
    return [row[0] for row in rows]


def _store_url(document_store: Any) -> str:
    """The store's database URL; when its connection string resolves to nothing, the embedded PostgreSQL of the
    data folder is started and given to the store (as an `EmbeddedDatabaseSecret`)."""
    secret = document_store.connection_string
    if isinstance(secret, EmbeddedDatabaseSecret):
        url = secret.database_url
    else:
        url = secret.resolve_value() if secret is not None else None
    if url:
        try:
            postgres_url(url, _setting_of(secret))
        except DatabaseUnavailable as exc:
            raise KnowledgeBaseUnavailable(str(exc)) from exc
    else:
        try:
            url = database_url()
        except DatabaseUnavailable as exc:
            raise KnowledgeBaseUnavailable(str(exc)) from exc
        default = (tuple(CONNECTION_ENV_VARS), False)
        env_vars, strict = env_var_names(secret) if isinstance(secret, EnvVarSecret) else default
        document_store.connection_string = EmbeddedDatabaseSecret(_env_vars=env_vars, _strict=strict, _fallback=url)
    return url


def _setting_of(secret: Any) -> str:
    """The environment variable an env-var secret read its value from (the first one set), else "the connection
    string"."""
    if isinstance(secret, EnvVarSecret):
        return next((name for name in env_var_names(secret)[0] if os.environ.get(name)), "the connection string")
    return "the connection string"


def _idf(statistics: TermStatistics) -> dict[str, float]:
    """BM25's IDF of each term some chunk holds, as keyword search computes it."""
    n = statistics.n_chunks
    return {term: bm25.idf(n, min(df, n)) for term, df in statistics.df.items() if df}
