"""`PostgresGraphStore`: the embedded default graph, as tables in the knowledge base's PostgreSQL.

Five tables per collection (`<collection>_graph_entities`, `_aliases`, `_facts`, `_fact_entities` for the entities
taking part in a fact, `_fact_mentions` for the other names its sentence mentions, which only the retrieval walk
reads); relationships
are walked with a recursive query; fact text has a generated full-text column. A document's facts are written in
the caller's transaction when one is given, so a document, its chunks and its facts change together.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from contextlib import contextmanager
from typing import Any

from haystack import logging
from psycopg import sql
from psycopg.rows import dict_row

from components.graph.dates import FuzzyDate
from components.graph.model import DocumentGraph, Entity, EntityMatch, Fact, FactHit, name_grams
from components.graph.store import (
    MAX_ENTITY_CANDIDATES,
    EntityPassageLinks,
    EntitySearchTerms,
    FactScope,
    GraphStore,
    GraphUnavailable,
    entity_merge,
    fact_entity_positions,
    table_prefix,
)

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {entities} (
    uuid text PRIMARY KEY,
    key text NOT NULL UNIQUE,
    name text NOT NULL,
    kind text NOT NULL DEFAULT 'other'
);
CREATE TABLE IF NOT EXISTS {aliases} (
    alias_key text NOT NULL,
    entity_uuid text NOT NULL REFERENCES {entities}(uuid) ON DELETE CASCADE,
    document_id text NOT NULL,
    PRIMARY KEY (alias_key, entity_uuid, document_id)
);
CREATE TABLE IF NOT EXISTS {facts} (
    uuid text PRIMARY KEY,
    document_id text NOT NULL,
    chunk_id text,
    chunk_index integer,
    sentence_index integer NOT NULL,
    text text NOT NULL,
    valid_from date,
    valid_to date,
    valid_precision text,
    invalid_from date,
    invalid_precision text,
    date_method text NOT NULL DEFAULT 'document',
    document_title text NOT NULL DEFAULT '',
    document_url text,
    document_date date,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
CREATE TABLE IF NOT EXISTS {fact_entities} (
    fact_uuid text NOT NULL REFERENCES {facts}(uuid) ON DELETE CASCADE,
    entity_uuid text NOT NULL REFERENCES {entities}(uuid) ON DELETE CASCADE,
    position integer NOT NULL,
    PRIMARY KEY (fact_uuid, entity_uuid)
);
CREATE TABLE IF NOT EXISTS {fact_mentions} (
    fact_uuid text NOT NULL REFERENCES {facts}(uuid) ON DELETE CASCADE,
    entity_key text NOT NULL,
    PRIMARY KEY (fact_uuid, entity_key)
);
CREATE INDEX IF NOT EXISTS {facts_doc_idx} ON {facts} (document_id);
CREATE INDEX IF NOT EXISTS {facts_date_idx} ON {facts} (valid_from);
CREATE INDEX IF NOT EXISTS {facts_tsv_idx} ON {facts} USING gin (tsv);
CREATE INDEX IF NOT EXISTS {fe_entity_idx} ON {fact_entities} (entity_uuid);
CREATE INDEX IF NOT EXISTS {aliases_doc_idx} ON {aliases} (document_id);
CREATE INDEX IF NOT EXISTS {aliases_entity_idx} ON {aliases} (entity_uuid);
ALTER TABLE {facts} ADD COLUMN IF NOT EXISTS embedding vector, ADD COLUMN IF NOT EXISTS embedding_model text;
CREATE TABLE IF NOT EXISTS {documents} (
    document_id text PRIMARY KEY,
    extractor text NOT NULL
);
"""

# The graphs' change counters: one row per facts table, bumped by a statement trigger on every write or delete of
# facts, in the writer's transaction, so a reader in any process sees the new number exactly when the facts commit.
_VERSION_SCHEMA = """
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

_FACT_COLUMNS = """
    f.uuid, f.document_id, f.chunk_id, f.chunk_index, f.sentence_index, f.text, f.valid_from, f.valid_precision,
    f.invalid_from, f.invalid_precision, f.date_method, f.document_title, f.document_url, f.document_date,
    ARRAY(SELECT e.name FROM {fact_entities} x JOIN {entities} e ON e.uuid = x.entity_uuid
          WHERE x.fact_uuid = f.uuid ORDER BY x.position) AS entity_names,
    ARRAY(SELECT x.entity_uuid FROM {fact_entities} x WHERE x.fact_uuid = f.uuid ORDER BY x.position) AS entity_uuids,
    ARRAY(SELECT e.key FROM {fact_entities} x JOIN {entities} e ON e.uuid = x.entity_uuid
          WHERE x.fact_uuid = f.uuid ORDER BY x.position) AS entity_keys
"""

_AS_OF = (
    " AND (f.valid_from IS NULL OR f.valid_from <= %(as_of)s)"
    " AND (f.invalid_from IS NULL OR f.invalid_from > %(as_of)s)"
)
# A name (`{column}`: an entity's key or an alias) that is the search key, starts with it, shares a word with it, or
# has a word sharing its first or last three letters with a longer word of it (for misspellings).
_NAMED = (
    "{column} = %(key)s OR {column} LIKE %(prefix)s OR string_to_array({column}, ' ') && %(words)s "
    "OR EXISTS (SELECT 1 FROM unnest(string_to_array({column}, ' ')) AS w(word) WHERE length(w.word) >= 4 "
    "AND (left(w.word, 3) = ANY(%(heads)s) OR right(w.word, 3) = ANY(%(tails)s)))"
)
_WORD_RE = re.compile(r"[A-Za-z0-9]+")


def _fuzzy(value: dt.date | None, precision: str | None) -> FuzzyDate | None:
    return FuzzyDate(value, precision or "day") if value is not None else None


def row_to_fact(row: dict[str, Any]) -> Fact:
    """A `Fact` from a facts row with its entity arrays."""
    return Fact(
        uuid=row["uuid"],
        text=row["text"],
        document_id=row["document_id"],
        sentence_index=row["sentence_index"],
        entity_keys=list(row.get("entity_keys") or []),
        valid_at=_fuzzy(row["valid_from"], row["valid_precision"]),
        invalid_at=_fuzzy(row["invalid_from"], row["invalid_precision"]),
        date_method=row["date_method"],
        chunk_id=row["chunk_id"],
        chunk_index=row["chunk_index"],
        document_title=row["document_title"] or "",
        document_url=row["document_url"],
        document_date=row["document_date"],
        entity_names=list(row.get("entity_names") or []),
        entity_uuids=list(row.get("entity_uuids") or []),
    )


class PostgresGraphStore(GraphStore):
    """The graph in PostgreSQL tables named for the knowledge-base collection.

    Usage:
    ```python
    store = PostgresGraphStore(collection="research")
    store.warm_up()
    store.replace_document(LanguageExtractor().extract(document, chunks))
    store.entity_facts([e.uuid for e in store.find_entities("Airbus")])
    ```
    """

    in_process_parameters = ("pool",)
    backend = "postgres"

    def __init__(self, collection: str = "research", pool: Any = None) -> None:
        """
        :param collection: the knowledge base's collection; its graph tables are named for it.
        :param pool: a psycopg connection pool to use (tests; never serialised); by default the pool of the
            settings' database, shared by every embedded store of the process (`components/database.py`).
        """
        if not isinstance(collection, str) or not collection.strip():
            raise ValueError("collection must be a non-empty name")
        self.collection = collection
        prefix = table_prefix(collection)
        names = {
            "entities": prefix + "entities",
            "aliases": prefix + "aliases",
            "facts": prefix + "facts",
            "fact_entities": prefix + "fact_entities",
            "fact_mentions": prefix + "fact_mentions",
            "facts_doc_idx": prefix + "facts_doc_idx",
            "facts_date_idx": prefix + "facts_date_idx",
            "facts_tsv_idx": prefix + "facts_tsv_idx",
            "fe_entity_idx": prefix + "fe_entity_idx",
            "aliases_doc_idx": prefix + "aliases_doc_idx",
            "aliases_entity_idx": prefix + "aliases_entity_idx",
            "documents": prefix + "documents",
        }
        self._names = {key: sql.Identifier(value) for key, value in names.items()}
        self._pool = pool
        self._ready = False
        self._versioned = False
        self._lock = threading.Lock()

    # -- plumbing -----------------------------------------------------------------------------------------------

    def _q(self, template: str) -> sql.Composed:
        return sql.SQL(template).format(**self._names)

    def _get_pool(self) -> Any:
        if self._pool is None:
            from components.database import connection_pool

            self._pool = connection_pool()
        return self._pool

    def _create_schema(self) -> None:
        """The tables (starting the embedded PostgreSQL if needed; concurrent processes are serialised by an
        advisory lock)."""
        try:
            with self._get_pool().connection() as conn, conn.transaction():
                # The last table added; when it exists the schema is complete and no lock is needed.
                mentions = self._q("{fact_mentions}").as_string(conn)
                found = conn.execute("SELECT to_regclass(%s)", (mentions,)).fetchone()
                if found is None or found[0] is None:
                    conn.execute("SELECT pg_advisory_xact_lock(726355)")
                    conn.execute(self._q(_SCHEMA))
        except Exception as exc:  # noqa: BLE001 - any driver failure means the graph cannot be used
            raise GraphUnavailable(f"The graph tables cannot be created: {exc}") from exc

    @contextmanager
    def _connection(self, connection: Any = None, write: bool = False):  # noqa: ANN202
        self.ensure_schema()
        if connection is not None:
            yield connection
            return
        with self._get_pool().connection() as conn:
            if write:
                with conn.transaction():
                    yield conn
            else:
                yield conn

    def _fetch(self, template: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        query = sql.SQL(template.replace("{fact_columns}", _FACT_COLUMNS)).format(**self._names)
        with self._connection() as conn, conn.cursor(row_factory=dict_row) as cursor:
            cursor.execute(query, params)
            return list(cursor.fetchall())

    # -- writes -------------------------------------------------------------------------------------------------

    def _delete(self, cursor: Any, document_id: str) -> int:
        cursor.execute(self._q("DELETE FROM {documents} WHERE document_id = %s"), (document_id,))
        cursor.execute(self._q("DELETE FROM {aliases} WHERE document_id = %s"), (document_id,))
        cursor.execute(
            self._q(
                "DELETE FROM {facts} WHERE document_id = %s RETURNING (SELECT array_agg(DISTINCT x.entity_uuid) "
                "FROM {fact_entities} x WHERE x.fact_uuid = {facts}.uuid)"
            ),
            (document_id,),
        )
        rows = cursor.fetchall()
        touched = sorted({uuid for (uuids,) in rows for uuid in (uuids or [])})
        if touched:
            # Entities the document leaves without any fact go with it.
            cursor.execute(
                self._q(
                    "DELETE FROM {entities} e WHERE e.uuid = ANY(%s) "
                    "AND NOT EXISTS (SELECT 1 FROM {fact_entities} x WHERE x.entity_uuid = e.uuid)"
                ),
                (touched,),
            )
        return len(rows)

    def replace_document(self, graph: DocumentGraph, *, connection: Any = None) -> None:
        with self._connection(connection, write=True) as conn, conn.cursor() as cursor:
            self._delete(cursor, graph.document_id)
            if graph.extractor:
                cursor.execute(
                    self._q("INSERT INTO {documents} (document_id, extractor) VALUES (%s, %s)"),
                    (graph.document_id, graph.extractor),
                )
            if not graph.facts:
                return
            keys = sorted({mention.key for mention in graph.entities})
            # A key another document taught as an alias ("jobs" -> Steve Jobs) goes to that entity.
            cursor.execute(
                self._q(
                    "SELECT a.alias_key, min(a.entity_uuid), count(DISTINCT a.entity_uuid) FROM {aliases} a "
                    "WHERE a.alias_key = ANY(%s) AND NOT EXISTS (SELECT 1 FROM {entities} e WHERE e.key = a.alias_key) "
                    "GROUP BY a.alias_key"
                ),
                (keys,),
            )
            by_alias = {key: uuid for key, uuid, count in cursor.fetchall() if count == 1}
            uuid_of, own, aliases = entity_merge(graph, by_alias)
            entity_rows = [(m.uuid, m.key, m.name, m.kind) for m in own]
            cursor.executemany(
                self._q(
                    "INSERT INTO {entities} (uuid, key, name, kind) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (uuid) DO UPDATE SET "
                    "name = CASE WHEN length(EXCLUDED.name) < length({entities}.name) THEN EXCLUDED.name "
                    "ELSE {entities}.name END, "
                    "kind = CASE WHEN {entities}.kind = 'other' THEN EXCLUDED.kind ELSE {entities}.kind END"
                ),
                entity_rows,
            )
            alias_rows = [(alias, uuid, graph.document_id) for alias, uuid in aliases]
            if alias_rows:
                cursor.executemany(
                    self._q(
                        "INSERT INTO {aliases} (alias_key, entity_uuid, document_id) VALUES (%s, %s, %s) "
                        "ON CONFLICT DO NOTHING"
                    ),
                    alias_rows,
                )
            fact_rows = []
            link_rows = []
            for fact in graph.facts:
                valid, invalid = fact.valid_at, fact.invalid_at
                fact_rows.append(
                    (
                        fact.uuid,
                        fact.document_id,
                        fact.chunk_id,
                        fact.chunk_index,
                        fact.sentence_index,
                        fact.text,
                        valid.value if valid else None,
                        valid.end if valid else None,
                        valid.precision if valid else None,
                        invalid.value if invalid else None,
                        invalid.precision if invalid else None,
                        fact.date_method,
                        fact.document_title,
                        fact.document_url,
                        fact.document_date,
                    )
                )
                link_rows += [(fact.uuid, uuid, position) for uuid, position in fact_entity_positions(fact, uuid_of)]
            cursor.executemany(
                self._q(
                    "INSERT INTO {facts} (uuid, document_id, chunk_id, chunk_index, sentence_index, text, "
                    "valid_from, valid_to, valid_precision, invalid_from, invalid_precision, date_method, "
                    "document_title, document_url, document_date) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (uuid) DO NOTHING"
                ),
                fact_rows,
            )
            cursor.executemany(
                self._q(
                    "INSERT INTO {fact_entities} (fact_uuid, entity_uuid, position) VALUES (%s, %s, %s) "
                    "ON CONFLICT DO NOTHING"
                ),
                link_rows,
            )
            mention_rows = sorted({(fact.uuid, key) for fact in graph.facts for key in fact.mention_keys if key})
            if mention_rows:
                cursor.executemany(
                    self._q(
                        "INSERT INTO {fact_mentions} (fact_uuid, entity_key) VALUES (%s, %s) ON CONFLICT DO NOTHING"
                    ),
                    mention_rows,
                )
            # Entities of this document that ended up without a fact (all facts deduplicated away) are not kept.
            cursor.execute(
                self._q(
                    "DELETE FROM {entities} e WHERE e.uuid = ANY(%s) "
                    "AND NOT EXISTS (SELECT 1 FROM {fact_entities} x WHERE x.entity_uuid = e.uuid)"
                ),
                ([row[0] for row in entity_rows],),
            )

    def delete_document(self, document_id: str, *, connection: Any = None) -> int:
        with self._connection(connection, write=True) as conn, conn.cursor() as cursor:
            return self._delete(cursor, document_id)

    # -- reads --------------------------------------------------------------------------------------------------

    def _entity_candidates(self, key: str) -> list[Entity]:
        rows = self._fetch(
            """
            SELECT e.uuid, e.key, e.name, e.kind,
                   (SELECT count(*) FROM {fact_entities} x WHERE x.entity_uuid = e.uuid) AS fact_count,
                   ARRAY(SELECT DISTINCT a.alias_key FROM {aliases} a WHERE a.entity_uuid = e.uuid) AS aliases
            FROM {entities} e
            WHERE string_to_array(e.key, ' ') && %(words)s
               OR e.uuid IN (SELECT a.entity_uuid FROM {aliases} a WHERE a.alias_key = ANY(%(keys)s))
            ORDER BY e.key = ANY(%(keys)s)
                     OR e.uuid IN (SELECT a.entity_uuid FROM {aliases} a WHERE a.alias_key = ANY(%(keys)s)) DESC,
                     (SELECT count(*) FROM unnest(string_to_array(e.key, ' ')) AS w(word)
                      WHERE w.word = ANY(%(words)s)) DESC
            LIMIT %(cap)s
            """,
            {"words": sorted(set(key.split())), "keys": [key], "cap": MAX_ENTITY_CANDIDATES},
        )
        return [Entity(r["uuid"], r["name"], r["kind"], sorted(r["aliases"]), r["fact_count"]) for r in rows]

    def _entity_match_candidates(
        self, terms: EntitySearchTerms, kinds: list[str] | None, as_of: dt.date | None
    ) -> list[EntityMatch]:
        template = f"""
            WITH named AS (
                SELECT e.uuid FROM {{entities}} e WHERE {_NAMED.format(column="e.key")}
                UNION
                SELECT a.entity_uuid FROM {{aliases}} a WHERE {_NAMED.format(column="a.alias_key")}
            )
            SELECT e.uuid, e.key, e.name, e.kind,
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
            JOIN {{facts}} f ON f.uuid = x.fact_uuid{_AS_OF if as_of is not None else ""}
            WHERE {"e.kind = ANY(%(kinds)s)" if kinds else "true"}
            GROUP BY e.uuid, e.key, e.name, e.kind
            ORDER BY tier, n DESC, e.name
            LIMIT %(cap)s
        """
        rows = self._fetch(
            template,
            {
                "key": terms.key,
                "prefix": terms.like_prefix,
                "words": list(terms.words),
                "heads": list(terms.heads),
                "tails": list(terms.tails),
                "kinds": list(kinds or []),
                "as_of": as_of,
                "cap": MAX_ENTITY_CANDIDATES,
            },
        )
        return [
            EntityMatch(
                Entity(r["uuid"], r["name"], r["kind"], sorted(r["aliases"]), int(r["n"])),
                match="",
                score=0.0,
                matched=r["key"],
                first_date=_fuzzy(r["first_from"], r["first_precision"]),
                last_date=_fuzzy(r["last_from"], r["last_precision"]),
            )
            for r in rows
        ]

    def _best_entity_facts(
        self, entity_uuids: list[str], per_entity: int, as_of: dt.date | None
    ) -> list[tuple[str, Fact]]:
        template = f"""
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
                WHERE x.entity_uuid = ANY(%(uuids)s){_AS_OF if as_of is not None else ""}
            )
            SELECT {{fact_columns}}, r.entity_uuid AS for_entity
            FROM ranked r JOIN {{facts}} f ON f.uuid = r.fact_uuid
            WHERE r.rank <= %(per)s
            ORDER BY r.entity_uuid, r.rank
        """
        rows = self._fetch(template, {"uuids": list(entity_uuids), "per": per_entity, "as_of": as_of})
        return [(row["for_entity"], row_to_fact(row)) for row in rows]

    def document_entities(self, document_id: str, limit: int = 200) -> list[Entity]:
        rows = self._fetch(
            "SELECT e.uuid, e.name, e.kind, count(*) AS n FROM {facts} f "
            "JOIN {fact_entities} x ON x.fact_uuid = f.uuid JOIN {entities} e ON e.uuid = x.entity_uuid "
            "WHERE f.document_id = %(d)s GROUP BY e.uuid, e.name, e.kind ORDER BY n DESC, e.name LIMIT %(limit)s",
            {"d": document_id, "limit": max(1, min(int(limit), 1000))},
        )
        return [Entity(r["uuid"], r["name"], r["kind"], [], int(r["n"])) for r in rows]

    def _named_entities(self, query: str) -> list[str]:
        grams = name_grams(query)
        if not grams:
            return []
        rows = self._fetch(
            "SELECT uuid FROM {entities} WHERE key = ANY(%(grams)s) "
            "UNION SELECT entity_uuid FROM {aliases} WHERE alias_key = ANY(%(grams)s)",
            {"grams": grams},
        )
        return [row["uuid"] for row in rows]

    def search_facts(
        self, query: str, limit: int = 10, as_of: dt.date | None = None, scope: FactScope | None = None
    ) -> list[FactHit]:
        words = _WORD_RE.findall(query.lower())
        named = self._named_entities(query)
        if not words and not named:
            return []
        tsquery = " | ".join(words) if words else "zzzznothing"
        template = """
            SELECT {fact_columns}, ts_rank(f.tsv, q.q) AS rank,
                   EXISTS (SELECT 1 FROM {fact_entities} x WHERE x.fact_uuid = f.uuid
                           AND x.entity_uuid = ANY(%(named)s)) AS named
            FROM {facts} f, (SELECT to_tsquery('english', %(tsquery)s) AS q) q
            WHERE (f.tsv @@ q.q OR f.uuid IN (SELECT x.fact_uuid FROM {fact_entities} x
                                              WHERE x.entity_uuid = ANY(%(named)s)))
        """
        if as_of is not None:
            template += _AS_OF
        params: dict[str, Any] = {"named": named, "tsquery": tsquery, "limit": limit, "as_of": as_of}
        if scope is not None and scope.document_ids:
            template += " AND f.document_id = ANY(%(document_ids)s)"
            params["document_ids"] = list(scope.document_ids)
        if scope is not None and scope.date_from:
            template += " AND f.document_date >= %(date_from)s"
            params["date_from"] = scope.date_from
        if scope is not None and scope.date_to:
            template += " AND f.document_date <= %(date_to)s"
            params["date_to"] = scope.date_to
        template += " ORDER BY named DESC, rank DESC, f.valid_from DESC NULLS LAST, f.uuid LIMIT %(limit)s"
        rows = self._fetch(template, params)
        hits = []
        for row in rows:
            rank = float(row["rank"] or 0.0)
            score = 0.5 * bool(row["named"]) + 0.5 * (rank / (rank + 0.1))
            hits.append(FactHit(row_to_fact(row), round(min(1.0, score), 6)))
        return hits

    def _entity_facts(
        self, entity_uuids: list[str], start: dt.date | None, end: dt.date | None, as_of: dt.date | None, limit: int
    ) -> list[FactHit]:
        template = """
            SELECT {fact_columns} FROM {facts} f
            WHERE f.uuid IN (SELECT x.fact_uuid FROM {fact_entities} x WHERE x.entity_uuid = ANY(%(uuids)s))
        """
        if start is not None:
            template += " AND f.valid_to >= %(start)s"
        if end is not None:
            template += " AND f.valid_from <= %(end)s"
        if as_of is not None:
            template += _AS_OF
        template += (
            " ORDER BY f.valid_from NULLS LAST, f.document_date NULLS LAST, f.document_id, f.sentence_index"
            " LIMIT %(limit)s"
        )
        rows = self._fetch(
            template, {"uuids": entity_uuids, "start": start, "end": end, "as_of": as_of, "limit": limit}
        )
        return [FactHit(row_to_fact(row), 1.0) for row in rows]

    def related_facts(
        self, entity_uuid: str, depth: int = 2, limit: int = 50, as_of: dt.date | None = None
    ) -> list[FactHit]:
        template = """
            WITH RECURSIVE walk(entity_uuid, hop) AS (
                SELECT %(start)s::text, 0
                UNION
                SELECT b.entity_uuid, w.hop + 1
                FROM walk w
                JOIN {fact_entities} a ON a.entity_uuid = w.entity_uuid
                JOIN {fact_entities} b ON b.fact_uuid = a.fact_uuid AND b.entity_uuid <> w.entity_uuid
                WHERE w.hop + 1 < %(depth)s
            ),
            reach AS (SELECT entity_uuid, min(hop) AS hop FROM walk GROUP BY entity_uuid),
            edges AS (
                SELECT x.fact_uuid, min(r.hop) + 1 AS hop
                FROM reach r JOIN {fact_entities} x ON x.entity_uuid = r.entity_uuid
                WHERE EXISTS (SELECT 1 FROM {fact_entities} y WHERE y.fact_uuid = x.fact_uuid
                              AND y.entity_uuid <> x.entity_uuid)
                GROUP BY x.fact_uuid
            )
            SELECT {fact_columns}, edges.hop FROM edges JOIN {facts} f ON f.uuid = edges.fact_uuid
            WHERE true
        """
        if as_of is not None:
            template += _AS_OF
        template += " ORDER BY edges.hop, f.valid_from NULLS LAST, f.uuid LIMIT %(limit)s"
        rows = self._fetch(template, {"start": entity_uuid, "depth": depth, "limit": limit, "as_of": as_of})
        return [FactHit(row_to_fact(row), round(1.0 / row["hop"], 6), hop=row["hop"]) for row in rows]

    def extractor_stamps(self, document_ids: list[str]) -> dict[str, str]:
        if not document_ids:
            return {}
        rows = self._fetch(
            "SELECT document_id, extractor FROM {documents} WHERE document_id = ANY(%(ids)s)",
            {"ids": list(document_ids)},
        )
        return {row["document_id"]: row["extractor"] for row in rows}

    def _known_names(self, keys: list[str]) -> set[str]:
        rows = self._fetch(
            "SELECT key FROM {entities} WHERE key = ANY(%(keys)s) "
            "UNION SELECT alias_key FROM {aliases} WHERE alias_key = ANY(%(keys)s)",
            {"keys": keys},
        )
        return {row["key"] for row in rows}

    def _ensure_version_trigger(self) -> None:
        """Install the change counter's trigger on the facts table once (idempotent, serialised across processes)."""
        if self._versioned:
            return
        self.ensure_schema()
        facts = table_prefix(self.collection) + "facts"
        trigger = table_prefix(self.collection) + "version"
        names = {**self._names, "version_trigger": sql.Identifier(trigger), "facts_name": sql.Literal(facts)}
        try:
            with self._get_pool().connection() as conn, conn.transaction():
                found = conn.execute(
                    "SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname = %s",
                    (sql.Identifier(facts).as_string(conn), trigger),
                ).fetchone()
                if found is None:
                    conn.execute("SELECT pg_advisory_xact_lock(726355)")
                    conn.execute(sql.SQL(_VERSION_SCHEMA).format(**names))
        except Exception as exc:  # noqa: BLE001 - any driver failure means the graph cannot be used
            raise GraphUnavailable(f"The graph's change counter cannot be installed: {exc}") from exc
        self._versioned = True

    def graph_version(self) -> str | None:
        self._ensure_version_trigger()
        with self._get_pool().connection() as conn:
            row = conn.execute(
                "SELECT version FROM graph_versions WHERE facts_table = %s",
                (table_prefix(self.collection) + "facts",),
            ).fetchone()
        return str(row[0]) if row else "0"

    def entity_passage_links(self) -> EntityPassageLinks:
        self._ensure_version_trigger()
        rows = self._fetch(
            """
            SELECT true AS link, x.entity_uuid AS entity, f.chunk_id AS passage, f.document_id AS document,
                   count(*) AS n
            FROM {fact_entities} x JOIN {facts} f ON f.uuid = x.fact_uuid
            GROUP BY x.entity_uuid, f.chunk_id, f.document_id
            UNION ALL SELECT true, coalesce(e.uuid, 'mention:' || m.entity_key), f.chunk_id, f.document_id, count(*)
            FROM {fact_mentions} m JOIN {facts} f ON f.uuid = m.fact_uuid
            LEFT JOIN {entities} e ON e.key = m.entity_key
            GROUP BY 2, f.chunk_id, f.document_id
            UNION ALL SELECT false, e.uuid, e.key, NULL, 0 FROM {entities} e
            UNION ALL SELECT false, a.entity_uuid, a.alias_key, NULL, 0 FROM {aliases} a
            UNION ALL SELECT DISTINCT false, 'mention:' || m.entity_key, m.entity_key, NULL, 0 FROM {fact_mentions} m
            WHERE NOT EXISTS (SELECT 1 FROM {entities} e WHERE e.key = m.entity_key)
            """,
            {},
        )
        links = tuple((r["entity"], r["passage"], r["document"], int(r["n"])) for r in rows if r["link"])
        names = tuple((r["passage"], r["entity"]) for r in rows if not r["link"])
        return EntityPassageLinks(links=links, names=names)

    def document_fact_count(self, document_id: str) -> int:
        rows = self._fetch("SELECT count(*) AS n FROM {facts} WHERE document_id = %(d)s", {"d": document_id})
        return int(rows[0]["n"])

    def counts(self) -> dict[str, int]:
        rows = self._fetch(
            "SELECT (SELECT count(*) FROM {entities}) AS entities, (SELECT count(*) FROM {facts}) AS facts, "
            "(SELECT count(*) FROM {aliases}) AS aliases",
            {},
        )
        return {key: int(value) for key, value in rows[0].items()}

    def drop(self) -> None:
        with self._get_pool().connection() as conn:
            conn.execute(
                self._q(
                    "DROP TABLE IF EXISTS {fact_mentions}, {fact_entities}, {aliases}, {facts}, {entities}, {documents}"
                )
            )
        self._ready = False
        self._versioned = False
