"""What the pgvector knowledge base needs of pgvector-haystack and of Haystack's secrets beyond reading and writing
rows, through their public surface only (pinned by `tests/components/knowledge_base/test_integration_contracts.py`).

- `env_var_names(secret)`: an env-var `Secret`'s variables and strictness, read from its public serialisation
  (`Secret.to_dict()`), so a secret that stands in for it can serialise exactly as it did.
- `adopt_existing_table(store, conn)`: a `PgvectorDocumentStore` over a table it did not create (an attached one) is
  pointed, through its public constructor attributes, at the indexes that table already has, so the integration's
  lazy set-up on its first call finds everything in place and changes nothing: no keyword index of a second name, no
  rebuilt HNSW index, no recreated table. Everything else the product keeps beside the integration's table (its
  keyword statistics, sentence vectors, lookups by id) is plain SQL on psycopg, in `pgvector_index`.
"""

from __future__ import annotations

from typing import Any

from haystack.utils import Secret
from haystack.utils.auth import SecretType


def env_var_names(secret: Secret) -> tuple[tuple[str, ...], bool]:
    """The variables an env-var secret reads, in order, and whether it is strict (by `Secret.to_dict()`)."""
    if secret.type is not SecretType.ENV_VAR:
        raise ValueError("Only an environment-variable secret names environment variables.")
    data = secret.to_dict()
    return tuple(data["env_vars"]), bool(data.get("strict", True))


def adopt_existing_table(document_store: Any, conn: Any) -> None:
    """Point `document_store` at the keyword and HNSW indexes its existing table already has, and turn off its
    recreate options, so that its set-up (run lazily by its first call) adds, rebuilds and drops nothing.

    `conn` is a psycopg connection to the store's database. A table with no keyword index of the integration's shape
    keeps the store's keyword index name (its set-up would then add one, as it does for any table of its own)."""
    rows = conn.execute(
        """SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = %s ORDER BY indexname""",
        (document_store.schema_name, document_store.table_name),
    ).fetchall()
    for name, definition in rows:
        text = str(definition).lower()
        if "using gin" in text and "to_tsvector" in text and "content" in text:
            document_store.keyword_index_name = name
            break
    hnsw = [name for name, definition in rows if "using hnsw" in str(definition).lower()]
    if hnsw:
        document_store.hnsw_index_name = hnsw[0]
    elif document_store.search_strategy == "hnsw":
        document_store.search_strategy = "exact_nearest_neighbor"  # never build an index on a table not ours
    document_store.hnsw_recreate_index_if_exists = False
    document_store.recreate_table = False
