"""`EmbeddedMemoryStore`: remembered interactions in a table of the shared PostgreSQL, with pgvector embeddings.

The table lives in the same database as the knowledge base (embedded via pgserver by default), so the app, the
CLI and the HTTP server see one memory. Recall ranks by cosine similarity of the question to earlier questions
and answers, with interactions that mention the question's entities first among equals.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from typing import Any

import numpy as np
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from components.database import connection_pool
from components.memory.store import Interaction, MemoryStore, RecalledInteraction, RecallQuery

DEFAULT_TABLE = "memory_interactions"
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# Ties between near-equal similarities go to interactions naming the question's entities.
_ENTITY_BONUS = 0.05


def validate_table_name(table: str) -> str:
    """`table` if it is a plain lower-case SQL identifier; ValueError otherwise."""
    if not isinstance(table, str) or not _IDENTIFIER.match(table):
        raise ValueError(f"memory table {table!r} must be a lower-case SQL identifier (letters, digits, underscore).")
    return table


class EmbeddedMemoryStore(MemoryStore):
    """Interactions in PostgreSQL (`database_url` or the embedded server), one row each, with a 384-d embedding."""

    backend = "embedded"

    def __init__(self, table: str = DEFAULT_TABLE, dimension: int = 384, settings: Any = None) -> None:
        self.table = validate_table_name(table)
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self.dimension = dimension
        self._settings = settings
        self._pool: Any = None
        self._lock = threading.Lock()

    def _connection_pool(self) -> Any:
        with self._lock:
            if self._pool is None:
                pool = connection_pool(self._settings)
                self._create_schema(pool)
                self._pool = pool
            return self._pool

    def _create_schema(self, pool: Any) -> None:
        t = self.table
        with pool.connection() as conn:
            # Two processes creating the table at once race on the catalog; an advisory lock serialises them.
            conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (f"memory:{t}",))
            try:
                conn.execute(
                    f"""
                    CREATE TABLE IF NOT EXISTS {t} (
                        interaction_id text PRIMARY KEY,
                        session_id text NOT NULL,
                        user_id text,
                        query text NOT NULL,
                        response text NOT NULL,
                        response_summary text NOT NULL,
                        entities text[] NOT NULL DEFAULT '{{}}',
                        entity_keys text[] NOT NULL DEFAULT '{{}}',
                        cited_sources jsonb NOT NULL DEFAULT '[]'::jsonb,
                        created_at timestamptz NOT NULL,
                        embedding vector({self.dimension})
                    )"""
                )
                conn.execute(f"CREATE INDEX IF NOT EXISTS {t}_session_idx ON {t} (session_id, created_at)")
                conn.execute(f"CREATE INDEX IF NOT EXISTS {t}_user_idx ON {t} (user_id, created_at)")
                conn.execute(f"CREATE INDEX IF NOT EXISTS {t}_entity_idx ON {t} USING gin (entity_keys)")
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (f"memory:{t}",))

    def add(self, interaction: Interaction, embedding: list[float] | None) -> None:
        vector = None
        if embedding is not None and len(embedding):
            if len(embedding) != self.dimension:
                raise ValueError(
                    f"the embedding has {len(embedding)} dimensions; the memory table holds {self.dimension}."
                )
            vector = np.asarray(embedding, dtype=np.float32)
        with self._connection_pool().connection() as conn:
            conn.execute(
                f"""
                INSERT INTO {self.table} (interaction_id, session_id, user_id, query, response, response_summary,
                                          entities, entity_keys, cited_sources, created_at, embedding)
                VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                ON CONFLICT (interaction_id) DO UPDATE SET
                    response = EXCLUDED.response, response_summary = EXCLUDED.response_summary,
                    entities = EXCLUDED.entities, entity_keys = EXCLUDED.entity_keys,
                    cited_sources = EXCLUDED.cited_sources, embedding = EXCLUDED.embedding""",
                (
                    interaction.interaction_id,
                    interaction.session_id,
                    interaction.user_id,
                    interaction.query,
                    interaction.response,
                    interaction.response_summary,
                    list(interaction.entities),
                    [entity.lower() for entity in interaction.entities],
                    Jsonb(interaction.cited_sources),
                    interaction.created_at,
                    vector,
                ),
            )

    def search(self, query: RecallQuery) -> list[RecalledInteraction]:
        conditions = [
            ("session_id = %s", query.session_id or None),
            ("user_id = %s", query.user_id or None),
            ("created_at >= %s", query.since),
            ("created_at < %s", query.before),
        ]
        where = [condition for condition, value in conditions if value is not None]
        params: list[Any] = [value for _, value in conditions if value is not None]
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        keys = [entity.lower() for entity in query.entities]
        columns = ", ".join(field.name for field in dataclasses.fields(Interaction))
        if query.embedding:
            vector = np.asarray(query.embedding, dtype=np.float32)
            sql = (
                f"SELECT {columns}, 1 - (embedding <=> %s) AS cosine FROM {self.table} {clause} "
                f"ORDER BY (embedding <=> %s) - CASE WHEN entity_keys && %s::text[] THEN {_ENTITY_BONUS} ELSE 0 END, "
                "created_at DESC LIMIT %s"
            )
            values = [vector, *params, vector, keys, query.limit]
        else:
            sql = (
                f"SELECT {columns}, NULL::float8 AS cosine FROM {self.table} {clause} ORDER BY created_at DESC LIMIT %s"
            )
            values = [*params, query.limit]
        with self._connection_pool().connection() as conn:
            rows = conn.cursor(row_factory=dict_row).execute(sql, values).fetchall()
        found = []
        for row in rows:
            cosine = row.pop("cosine")
            cosine = None if cosine is None else float(cosine)
            found.append(RecalledInteraction(interaction=Interaction(**row), cosine=cosine, raw_score=cosine))
        return found

    def count(self, session_id: str | None = None) -> int:
        """How many interactions are remembered (in one session, or in all)."""
        with self._connection_pool().connection() as conn:
            where, params = (" WHERE session_id = %s", (session_id,)) if session_id else ("", None)
            row = conn.execute(f"SELECT count(*) FROM {self.table}{where}", params).fetchone()
        return int(row[0])
