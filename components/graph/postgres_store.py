"""`PostgresGraphStore`: the embedded default graph, as tables in the knowledge base's PostgreSQL.

Six tables per collection (`<collection>_graph_entities`, `_aliases`, `_facts`, `_fact_entities` for the entities
taking part in a fact, `_fact_mentions` for the other names its sentence mentions, which only the retrieval walk
reads, and `_documents` for each document's extractor version and the mark of the text it was extracted from); fact
text has a generated full-text column. A statement trigger counts every change of the facts (`graph_version`). A
document's facts are written in the caller's transaction when one is given, so a document, its chunks and its facts
change together. The counter is bumped in the writer's transaction, so a reader in any process sees the new number
exactly when the facts commit.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from contextlib import contextmanager, nullcontext
from typing import Any

from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from components.database import connection_pool
from components.graph.store import GraphStore, GraphUnavailable, table_prefix
from components.settings import default_setting, get_settings

COLLECTION: str = default_setting("kb_collection")  # the KB_COLLECTION setting's default

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {entities} (
    uuid text PRIMARY KEY, key text NOT NULL UNIQUE, name text NOT NULL, kind text NOT NULL DEFAULT 'other'
);
CREATE TABLE IF NOT EXISTS {aliases} (
    alias_key text NOT NULL, entity_uuid text NOT NULL REFERENCES {entities}(uuid) ON DELETE CASCADE,
    document_id text NOT NULL, PRIMARY KEY (alias_key, entity_uuid, document_id)
);
CREATE TABLE IF NOT EXISTS {facts} (
    uuid text PRIMARY KEY, document_id text NOT NULL, chunk_id text, chunk_index integer,
    sentence_index integer NOT NULL, text text NOT NULL,
    valid_from date, valid_to date, valid_precision text, invalid_from date, invalid_precision text,
    date_method text NOT NULL DEFAULT 'document',
    document_title text NOT NULL DEFAULT '', document_url text, document_date date,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
CREATE TABLE IF NOT EXISTS {fact_entities} (
    fact_uuid text NOT NULL REFERENCES {facts}(uuid) ON DELETE CASCADE,
    entity_uuid text NOT NULL REFERENCES {entities}(uuid) ON DELETE CASCADE,
    position integer NOT NULL, PRIMARY KEY (fact_uuid, entity_uuid)
);
CREATE TABLE IF NOT EXISTS {fact_mentions} (
    fact_uuid text NOT NULL REFERENCES {facts}(uuid) ON DELETE CASCADE, entity_key text NOT NULL,
    PRIMARY KEY (fact_uuid, entity_key)
);
ALTER TABLE {entities} ADD COLUMN IF NOT EXISTS confidence real NOT NULL DEFAULT 0;
ALTER TABLE {entities} ADD COLUMN IF NOT EXISTS evidence text NOT NULL DEFAULT '';
ALTER TABLE {aliases} ADD COLUMN IF NOT EXISTS reason text NOT NULL DEFAULT '';
ALTER TABLE {facts} ADD COLUMN IF NOT EXISTS confidence real;
CREATE INDEX IF NOT EXISTS {facts_doc_idx} ON {facts} (document_id);
CREATE INDEX IF NOT EXISTS {facts_date_idx} ON {facts} (valid_from);
CREATE INDEX IF NOT EXISTS {facts_tsv_idx} ON {facts} USING gin (tsv);
CREATE INDEX IF NOT EXISTS {fe_entity_idx} ON {fact_entities} (entity_uuid);
CREATE INDEX IF NOT EXISTS {aliases_doc_idx} ON {aliases} (document_id);
CREATE INDEX IF NOT EXISTS {aliases_entity_idx} ON {aliases} (entity_uuid);
CREATE TABLE IF NOT EXISTS {documents} (document_id text PRIMARY KEY, extractor text NOT NULL);
ALTER TABLE {documents} ADD COLUMN IF NOT EXISTS source text;
CREATE TABLE IF NOT EXISTS graph_versions (facts_table text PRIMARY KEY, version bigint NOT NULL);
CREATE OR REPLACE FUNCTION graph_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO graph_versions AS v (facts_table, version) VALUES (TG_ARGV[0], 1)
    ON CONFLICT (facts_table) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS {version_trigger} ON {facts};
CREATE TRIGGER {version_trigger} AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF document_id, chunk_id ON {facts}
    FOR EACH STATEMENT EXECUTE FUNCTION graph_version_bump({facts_name});
"""

# A fact row as `fact_from_row` reads it: the fact's columns, and its entities with their positions.
_FACT = """to_jsonb(f) - 'tsv' AS fact, (SELECT coalesce(jsonb_agg(jsonb_build_object('uuid', e.uuid,
    'name', e.name, 'key', e.key, 'kind', e.kind, 'position', x.position)), '[]'::jsonb)
    FROM {fact_entities} x JOIN {entities} e ON e.uuid = x.entity_uuid WHERE x.fact_uuid = f.uuid) AS entities"""
_AS_OF = """ AND (%(as_of)s::date IS NULL OR ((f.valid_from IS NULL OR f.valid_from <= %(as_of)s)
    AND (f.invalid_from IS NULL OR f.invalid_from > %(as_of)s)))"""
_SCOPE = (
    _AS_OF
    + """ AND (%(document_ids)s::text[] IS NULL OR f.document_id = ANY(%(document_ids)s::text[]))
    AND (%(date_from)s::date IS NULL OR f.document_date >= %(date_from)s)
    AND (%(date_to)s::date IS NULL OR f.document_date <= %(date_to)s)"""
)
_TSQUERY = "to_tsquery('english', array_to_string(%(words)s::text[], ' | '))"
_NAMED_FACT = """f.uuid IN (SELECT x.fact_uuid FROM {fact_entities} x WHERE x.entity_uuid IN (
    SELECT uuid FROM {entities} WHERE key = ANY(%(grams)s) UNION
    SELECT entity_uuid FROM {aliases} WHERE alias_key = ANY(%(grams)s)))"""
# A name (an entity's key or an alias) that is the search key, starts with it, shares a word with it, or has a word
# sharing its first or last three letters with a longer word of it (for misspellings).
_NAMED = (
    "{column} = %(key)s OR {column} LIKE %(prefix)s OR string_to_array({column}, ' ') && %(words)s::text[] "
    "OR EXISTS (SELECT 1 FROM unnest(string_to_array({column}, ' ')) AS w(word) WHERE length(w.word) >= 4 "
    "AND (left(w.word, 3) = ANY(%(heads)s::text[]) OR right(w.word, 3) = ANY(%(tails)s::text[])))"
)
_DELETE_ORPHANS = """DELETE FROM {entities} e WHERE e.uuid = ANY(%(uuids)s::text[])
    AND NOT EXISTS (SELECT 1 FROM {fact_entities} x WHERE x.entity_uuid = e.uuid)"""

# Which statements return rows, read from their text (see `_run`).
_RETURNS_ROWS = re.compile(r"^\s*(?:SELECT|WITH)\b|\bRETURNING\b", re.IGNORECASE)

QUERIES = {
    "delete_stamp": "DELETE FROM {documents} WHERE document_id = %(d)s",
    "delete_aliases": "DELETE FROM {aliases} WHERE document_id = %(d)s",
    "document_entity_uuids": "SELECT DISTINCT x.entity_uuid AS uuid FROM {facts} f "
    "JOIN {fact_entities} x ON x.fact_uuid = f.uuid WHERE f.document_id = %(d)s",
    "delete_facts": "WITH gone AS (DELETE FROM {facts} WHERE document_id = %(d)s RETURNING 1) "
    "SELECT count(*) AS n FROM gone",
    "delete_orphans": _DELETE_ORPHANS,
    "stamp": "INSERT INTO {documents} (document_id, extractor, source) VALUES (%(d)s, %(x)s, %(s)s)",
    "restamp": "UPDATE {documents} SET extractor = %(x)s WHERE document_id = %(d)s RETURNING 1 AS n",
    "taught_aliases": "SELECT a.alias_key AS key, array_agg(DISTINCT a.entity_uuid) AS uuids FROM {aliases} a "
    "WHERE a.alias_key = ANY(%(keys)s::text[]) "
    "AND NOT EXISTS (SELECT 1 FROM {entities} e WHERE e.key = a.alias_key) GROUP BY a.alias_key",
    # The kind of the document that tells it most confidently stays.
    "write_entities": """INSERT INTO {entities} (uuid, key, name, kind, confidence, evidence)
        SELECT uuid, key, name, kind, confidence, evidence FROM jsonb_to_recordset(%(rows)s)
            AS r(uuid text, key text, name text, kind text, confidence real, evidence text)
        ON CONFLICT (uuid) DO UPDATE SET
        name = CASE WHEN length(EXCLUDED.name) < length({entities}.name) THEN EXCLUDED.name ELSE {entities}.name END,
        kind = CASE WHEN EXCLUDED.confidence > {entities}.confidence THEN EXCLUDED.kind ELSE {entities}.kind END,
        evidence = CASE WHEN EXCLUDED.confidence > {entities}.confidence
            THEN EXCLUDED.evidence ELSE {entities}.evidence END,
        confidence = greatest(EXCLUDED.confidence, {entities}.confidence)""",
    "write_aliases": """INSERT INTO {aliases} (alias_key, entity_uuid, document_id, reason)
        SELECT key, uuid, d, reason FROM jsonb_to_recordset(%(rows)s) AS r(key text, uuid text, d text, reason text)
        ON CONFLICT DO NOTHING""",
    "entity_notes": """SELECT e.confidence, e.evidence, a.alias_key, a.reason, a.document_id
        FROM {entities} e LEFT JOIN {aliases} a ON a.entity_uuid = e.uuid WHERE e.uuid = %(uuid)s
        ORDER BY a.alias_key, a.document_id""",
    "write_facts": """INSERT INTO {facts} (uuid, document_id, chunk_id, chunk_index, sentence_index, text, valid_from,
            valid_to, valid_precision, invalid_from, invalid_precision, date_method, document_title, document_url,
            document_date, confidence)
        SELECT * FROM jsonb_to_recordset(%(rows)s) AS r(uuid text, document_id text, chunk_id text, chunk_index integer,
            sentence_index integer, text text, valid_from date, valid_to date, valid_precision text, invalid_from date,
            invalid_precision text, date_method text, document_title text, document_url text, document_date date,
            confidence real)
        ON CONFLICT (uuid) DO NOTHING""",
    "write_links": """INSERT INTO {fact_entities} (fact_uuid, entity_uuid, position)
        SELECT fact, entity, position FROM jsonb_to_recordset(%(rows)s) AS r(fact text, entity text, position integer)
        ON CONFLICT DO NOTHING""",
    "write_mentions": """INSERT INTO {fact_mentions} (fact_uuid, entity_key)
        SELECT r.fact, k.key FROM jsonb_to_recordset(%(rows)s) AS r(fact text, keys jsonb),
        jsonb_array_elements_text(r.keys) AS k(key) ON CONFLICT DO NOTHING""",
    "entity_candidates": f"""
        WITH named AS (
            SELECT e.uuid FROM {{entities}} e WHERE %(key)s::text IS NULL OR {_NAMED.format(column="e.key")}
            UNION
            SELECT a.entity_uuid FROM {{aliases}} a WHERE {_NAMED.format(column="a.alias_key")}
        )
        SELECT e.uuid, e.key, e.name, e.kind, e.confidence,
               ARRAY(SELECT DISTINCT a.alias_key FROM {{aliases}} a WHERE a.entity_uuid = e.uuid) AS aliases,
               count(f.uuid) AS n,
               min(f.valid_from) AS first_from,
               (array_agg(f.valid_precision ORDER BY f.valid_from)
                    FILTER (WHERE f.valid_from IS NOT NULL))[1] AS first_precision,
               max(f.valid_from) AS last_from,
               (array_agg(f.valid_precision ORDER BY f.valid_from DESC)
                    FILTER (WHERE f.valid_from IS NOT NULL))[1] AS last_precision,
               CASE WHEN e.key = %(key)s THEN 0
                    WHEN EXISTS (SELECT 1 FROM {{aliases}} a WHERE a.entity_uuid = e.uuid
                                 AND a.alias_key = %(key)s) THEN 1
                    WHEN e.key LIKE %(prefix)s THEN 2 ELSE 3 END AS tier
        FROM named
        JOIN {{entities}} e ON e.uuid = named.uuid
        JOIN {{fact_entities}} x ON x.entity_uuid = e.uuid
        JOIN {{facts}} f ON f.uuid = x.fact_uuid{_AS_OF}
        WHERE %(kinds)s::text[] IS NULL OR e.kind = ANY(%(kinds)s::text[])
        GROUP BY e.uuid, e.key, e.name, e.kind, e.confidence
        ORDER BY tier, n DESC, e.name
        LIMIT %(cap)s""",
    "best_entity_facts": f"""
        WITH ranked AS (
            SELECT x.entity_uuid, x.fact_uuid,
                   row_number() OVER (
                       PARTITION BY x.entity_uuid
                       ORDER BY (x.position = 0) DESC,
                                EXISTS (SELECT 1 FROM {{fact_entities}} y WHERE y.fact_uuid = x.fact_uuid
                                        AND y.entity_uuid <> x.entity_uuid) DESC,
                                f.valid_from DESC NULLS LAST, f.document_date DESC NULLS LAST,
                                f.document_id, f.sentence_index
                   ) AS rank
            FROM {{fact_entities}} x JOIN {{facts}} f ON f.uuid = x.fact_uuid
            WHERE x.entity_uuid = ANY(%(uuids)s){_AS_OF}
                AND (%(min_confidence)s::real IS NULL OR f.confidence IS NULL
                     OR f.confidence >= %(min_confidence)s::real)
        )
        SELECT {_FACT}, r.entity_uuid AS for_entity
        FROM ranked r JOIN {{facts}} f ON f.uuid = r.fact_uuid
        WHERE r.rank <= %(per)s
        ORDER BY r.entity_uuid, r.rank""",
    "document_entities": "SELECT e.uuid, e.name, e.kind, count(*) AS n FROM {facts} f "
    "JOIN {fact_entities} x ON x.fact_uuid = f.uuid JOIN {entities} e ON e.uuid = x.entity_uuid "
    "WHERE f.document_id = %(d)s GROUP BY e.uuid, e.name, e.kind ORDER BY n DESC, e.name LIMIT %(limit)s",
    "named_facts": f"""SELECT {_FACT}, ts_rank(f.tsv, {_TSQUERY}) AS rank, true AS named FROM {{facts}} f
        WHERE {_NAMED_FACT}{_SCOPE}
        ORDER BY rank DESC, f.valid_from DESC NULLS LAST, f.uuid LIMIT %(limit)s""",
    "text_facts": f"""SELECT {_FACT}, ts_rank(f.tsv, q.q) AS rank, {_NAMED_FACT} AS named
        FROM {{facts}} f, (SELECT {_TSQUERY} AS q) q
        WHERE f.tsv @@ q.q{_SCOPE}
        ORDER BY rank DESC, f.valid_from DESC NULLS LAST, f.uuid LIMIT %(limit)s""",
    "entity_facts": f"""SELECT {_FACT} FROM {{facts}} f
        WHERE f.uuid IN (SELECT x.fact_uuid FROM {{fact_entities}} x WHERE x.entity_uuid = ANY(%(uuids)s))
        AND (%(start)s::date IS NULL OR f.valid_to >= %(start)s) AND (%(end)s::date IS NULL OR f.valid_from <= %(end)s)
        {_AS_OF}
        ORDER BY f.valid_from NULLS LAST, f.document_date NULLS LAST, f.document_id, f.sentence_index
        LIMIT %(limit)s""",
    "linking_facts": f"""SELECT {_FACT} FROM {{facts}} f
        WHERE f.uuid IN (SELECT x.fact_uuid FROM {{fact_entities}} x JOIN {{fact_entities}} y
                         ON y.fact_uuid = x.fact_uuid AND y.entity_uuid <> x.entity_uuid
                         WHERE x.entity_uuid = ANY(%(frontier)s::text[])){_AS_OF}
        ORDER BY f.valid_from NULLS LAST, f.uuid LIMIT %(cap)s""",
    "known_names": "SELECT key FROM {entities} WHERE key = ANY(%(keys)s::text[]) "
    "UNION SELECT alias_key FROM {aliases} WHERE alias_key = ANY(%(keys)s::text[])",
    "extractor_stamps": "SELECT document_id, extractor FROM {documents} WHERE document_id = ANY(%(ids)s::text[])",
    "source_marks": "SELECT document_id, source FROM {documents} WHERE document_id = ANY(%(ids)s::text[]) "
    "AND source IS NOT NULL",
    "stamp_counts": "SELECT extractor, count(*) AS n FROM {documents} GROUP BY extractor",
    "document_fact_count": "SELECT count(*) AS n FROM {facts} WHERE document_id = %(d)s",
    "counts": "SELECT (SELECT count(*) FROM {entities}) AS entities, (SELECT count(*) FROM {facts}) AS facts, "
    "(SELECT count(*) FROM {aliases}) AS aliases",
    "passage_links": """
        SELECT true AS link, x.entity_uuid AS entity, f.chunk_id AS passage, f.document_id AS document, count(*) AS n
        FROM {fact_entities} x JOIN {facts} f ON f.uuid = x.fact_uuid
        GROUP BY x.entity_uuid, f.chunk_id, f.document_id
        UNION ALL SELECT true, coalesce(e.uuid, 'mention:' || m.entity_key), f.chunk_id, f.document_id, count(*)
        FROM {fact_mentions} m JOIN {facts} f ON f.uuid = m.fact_uuid
        LEFT JOIN {entities} e ON e.key = m.entity_key
        GROUP BY 2, f.chunk_id, f.document_id
        UNION ALL SELECT false, e.uuid, e.key, NULL, 0 FROM {entities} e
        UNION ALL SELECT false, a.entity_uuid, a.alias_key, NULL, 0 FROM {aliases} a
        UNION ALL SELECT DISTINCT false, 'mention:' || m.entity_key, m.entity_key, NULL, 0 FROM {fact_mentions} m
        WHERE NOT EXISTS (SELECT 1 FROM {entities} e WHERE e.key = m.entity_key)""",
}
# The facts tables of every collection's graph in the database (a graph exists once its facts table does).
_GRAPH_FACTS_TABLES = (
    "SELECT c.relname FROM pg_class c WHERE c.relkind IN ('r', 'p') AND right(c.relname, 12) = '_graph_facts' "
    "AND pg_table_is_visible(c.oid) ORDER BY c.relname"
)
_TABLES = ("entities", "aliases", "facts", "fact_entities", "fact_mentions", "documents")
_INDEXES = (
    "facts_doc_idx",
    "facts_date_idx",
    "facts_tsv_idx",
    "fe_entity_idx",
    "aliases_doc_idx",
    "aliases_entity_idx",
)


class PostgresGraphStore(GraphStore):
    """The graph in PostgreSQL tables named for the knowledge-base collection.

    Usage:
    ```python
    store = PostgresGraphStore(collection="research")
    store.warm_up()
    store.replace_document(LanguageExtractor().extract(document, chunks))
    store.entity_facts([e.uuid for e in store.find_entities("Nordvik Aviation")])
    ```
    """

    in_process_parameters = ("pool",)
    backend = "postgres"
    rank_half = 0.1

    def __init__(self, collection: str = COLLECTION, pool: Any = None) -> None:
        """
        :param collection: the knowledge base's collection; its graph tables are named for it.
        :param pool: a psycopg connection pool to use (tests; never serialised); by default the pool of the
            settings' database, shared by every embedded store of the process (`components/database.py`).
        """
        if not isinstance(collection, str) or not collection.strip():
            raise ValueError("collection must be a non-empty name")
        self.collection = collection
        prefix = table_prefix(collection)
        self._facts_table, self._trigger = prefix + "facts", prefix + "version"
        self._names: dict[str, sql.Composable] = {name: sql.Identifier(prefix + name) for name in _TABLES + _INDEXES}
        self._names |= {"version_trigger": sql.Identifier(self._trigger), "facts_name": sql.Literal(self._facts_table)}
        self._queries = {name: sql.SQL(query).format(**self._names) for name, query in QUERIES.items()}
        self._row_queries = {name for name, query in QUERIES.items() if _RETURNS_ROWS.search(query)}
        self._pool = pool
        # Which database (DATABASE_URL, else the data folder's embedded one) is decided now; the pool opens later.
        self._database_settings = get_settings() if pool is None else None
        self._ready = False
        self._lock = threading.Lock()

    def _get_pool(self) -> Any:
        if self._pool is None:
            self._pool = connection_pool(self._database_settings)
        return self._pool

    def _create_schema(self) -> None:
        """The tables and the change counter (starting the embedded PostgreSQL if needed; concurrent processes are
        serialised by an advisory lock)."""
        try:
            with self._get_pool().connection() as conn, conn.transaction():
                # The trigger is made last; when it exists and the columns added last are there (a graph of an
                # earlier version lacks them), the schema is complete and no lock is needed.
                facts = self._names["facts"].as_string(conn)
                found = conn.execute(
                    "SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname = %s "
                    "AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'reason') "
                    "AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'confidence'"
                    " AND NOT attisdropped) "
                    "AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'source')",
                    (
                        facts,
                        self._trigger,
                        self._names["aliases"].as_string(conn),
                        facts,
                        self._names["documents"].as_string(conn),
                    ),
                ).fetchone()
                if found is None:
                    conn.execute("SELECT pg_advisory_xact_lock(726355)")
                    conn.execute(sql.SQL(_SCHEMA).format(**self._names))
        except Exception as exc:  # noqa: BLE001 - any driver failure means the graph cannot be used
            raise GraphUnavailable(f"The graph tables cannot be created: {exc}") from exc

    def exists(self) -> bool:
        if self._ready:
            return True
        try:
            with self._get_pool().connection() as conn:
                row = conn.execute("SELECT to_regclass(%s)", (self._names["facts"].as_string(conn),)).fetchone()
        except Exception as exc:  # noqa: BLE001 - any driver failure means the graph cannot be used
            raise GraphUnavailable(f"The graph cannot be read: {exc}") from exc
        return row is not None and row[0] is not None

    def collections(self) -> list[str]:
        """The collections with graph tables, named as their tables are (lower case; letters, digits and `_`)."""
        try:
            with self._get_pool().connection() as conn:
                rows = conn.execute(_GRAPH_FACTS_TABLES).fetchall()
        except Exception as exc:  # noqa: BLE001 - any driver failure means the graph cannot be used
            raise GraphUnavailable(f"The graph cannot be read: {exc}") from exc
        return [row[0][: -len("_graph_facts")] for row in rows]

    @contextmanager
    def _cursor(self, connection: Any = None, write: bool = False):  # noqa: ANN202
        self.ensure_schema()
        if connection is not None:
            with connection.cursor(row_factory=dict_row) as cursor:
                yield cursor
            return
        with self._get_pool().connection() as conn, conn.transaction() if write else nullcontext():
            with conn.cursor(row_factory=dict_row) as cursor:
                yield cursor

    def _run(self, tx: Any, name: str, **params: Any) -> list[Mapping[str, Any]]:
        if "rows" in params:
            params["rows"] = Jsonb(params["rows"])
        tx.execute(self._queries[name], params)
        # Not `tx.description`: in psycopg's pipeline mode (the registry writes a document in one) it stays None until
        # a fetch syncs the pipeline, and the rows of a read inside the write would be lost.
        return tx.fetchall() if name in self._row_queries else []

    def _read(self, name: str, **params: Any) -> list[Mapping[str, Any]]:
        if not self.ensure_readable():
            return []
        with self._cursor() as cursor:
            return self._run(cursor, name, **params)

    def _in_transaction(self, work: Callable[..., Any], *args: Any, connection: Any = None) -> Any:
        with self._cursor(connection, write=True) as cursor:
            return work(cursor, *args)

    def graph_version(self) -> str | None:
        if not self.ensure_readable():
            return "0"
        with self._get_pool().connection() as conn:
            found = conn.execute("SELECT version FROM graph_versions WHERE facts_table = %s", (self._facts_table,))
            row = found.fetchone()
        return str(row[0]) if row else "0"

    def drop(self) -> None:
        with self._get_pool().connection() as conn:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.SQL(", ").join(self._names[t] for t in _TABLES)))
        self._ready = False
