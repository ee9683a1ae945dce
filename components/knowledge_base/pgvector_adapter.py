"""What the pgvector knowledge base needs of pgvector-haystack and of Haystack's secrets beyond reading and writing
rows, through their public surface only (pinned by `tests/components/knowledge_base/test_integration_contracts.py`).

- `env_var_names(secret)`: an env-var `Secret`'s variables and strictness, read from its public serialisation
  (`Secret.to_dict()`), so a secret that stands in for it can serialise exactly as it did.
- `adopt_existing_table(store, conn)`: a `PgvectorDocumentStore` over a table it did not create (an attached one) is
  pointed, through its public constructor attributes, at the indexes that table already has, so the integration's
  lazy set-up on its first call finds everything in place and changes nothing: no keyword index of a second name, no
  rebuilt HNSW index, no recreated table. Everything else the product keeps beside the integration's table (its
  keyword statistics, sentence vectors, lookups by id) is plain SQL on psycopg, in `pgvector_index`.
- `where_clause(filters, keyword)`: Haystack filters as SQL on the integration's table (`meta` and its columns),
  composed with psycopg's public `sql` module, for the product's own queries beside the integration's; it selects
  the rows the integration's `filter_documents` selects (a conformance test compares them).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from haystack.errors import FilterError
from haystack.utils import Secret
from haystack.utils.auth import SecretType
from psycopg import sql


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


# A meta value is read from the JSONB as text and cast to the filter value's type, as the integration does (the type
# of the value itself: a bool is no int here).
_CASTS = {int: "integer", float: "real", bool: "boolean"}
_ORDER = {">": ">", ">=": ">=", "<": "<", "<=": "<="}
_MISSING = object()  # a comparison with no parameter (`IS NULL`)


def where_clause(filters: dict[str, Any] | None, keyword: str = "WHERE") -> tuple[sql.Composable, tuple[Any, ...]]:
    """The SQL condition of Haystack `filters` on a pgvector-haystack table, as ` WHERE ...` (or ` AND ...` with
    `keyword="AND"`) and its parameters; nothing for no filters.

    Fields are `meta.<key>` (the JSONB's value as text, cast to the type of the compared value) or a column (`id`,
    `content`); logical operators AND and OR nest; comparisons ==, !=, >, >=, <, <=, in, not in (`!=` and
    `not in` also keep rows without the key, as in Haystack's filter semantics). A filter it cannot read is a
    `FilterError` in one sentence."""
    if not filters:
        return sql.SQL(""), ()
    if not isinstance(filters, dict):
        raise FilterError("Filters must be a dictionary.")
    if keyword not in ("WHERE", "AND"):
        raise ValueError("keyword must be WHERE or AND")
    params: list[Any] = []
    condition = _condition(filters, params)
    return sql.SQL(f" {keyword} ") + condition, tuple(params)


def _condition(node: Any, params: list[Any]) -> sql.Composable:
    if not isinstance(node, dict):
        raise FilterError(f"A filter condition must be a dictionary, not {type(node).__name__}.")
    if "field" in node:
        return _comparison(node, params)
    operator, conditions = node.get("operator"), node.get("conditions")
    if operator not in ("AND", "OR"):
        raise FilterError(f"Unknown logical operator {operator!r}: use AND or OR.")
    if not isinstance(conditions, list) or not conditions:
        raise FilterError(f"The {operator} filter needs a non-empty list of conditions.")
    parts = [_condition(child, params) for child in conditions]
    return sql.SQL("(") + sql.SQL(f" {operator} ").join(parts) + sql.SQL(")")


def _column(field: str, value: Any, params: list[Any]) -> sql.Composable:
    """The field's SQL; a meta key is a parameter (appended to `params`), not text in the statement: psycopg would
    read a `%` in it as a placeholder."""
    if not field.startswith("meta."):
        return sql.Identifier(field)
    params.append(field.split(".", 1)[1])
    text = sql.SQL("meta->>(%s::text)")
    sample = value[0] if isinstance(value, list) and value else value
    cast = _CASTS.get(type(sample))
    return sql.SQL("(") + text + sql.SQL(f")::{cast}") if cast else text


def _comparison(node: dict[str, Any], params: list[Any]) -> sql.Composable:
    field, operator = node["field"], node.get("operator")
    if not isinstance(field, str) or not field:
        raise FilterError("A filter's field must be a name like meta.doc_type or id.")
    if "value" not in node:
        raise FilterError(f"The filter on {field} has no value.")
    value = node["value"]
    if operator == "==":
        column = _column(field, value, params)
        if value is None:
            return sql.SQL("{} IS NULL").format(column)
        params.append(value)
        return sql.SQL("{} = %s").format(column)
    if operator == "!=":
        column = _column(field, value, params)
        params.append(value)
        return sql.SQL("{} IS DISTINCT FROM %s").format(column)
    if operator in _ORDER:
        if isinstance(value, list) or value is None:
            raise FilterError(f"The filter on {field} compares with {operator} a value that has no order.")
        if isinstance(value, str):
            try:
                dt.datetime.fromisoformat(value)
            except ValueError:
                raise FilterError(
                    f"The filter on {field} compares a string with {operator}: only ISO dates compare."
                ) from None
        column = _column(field, value, params)
        params.append(value)
        return sql.SQL(f"{{}} {_ORDER[operator]} %s").format(column)
    if operator in ("in", "not in"):
        if not isinstance(value, list):
            raise FilterError(f"The filter on {field} needs a list with {operator!r}.")
        if operator == "in":
            column = _column(field, value, params)
            params.append(value)
            return sql.SQL("{} = ANY(%s)").format(column)
        # The column twice, and so its parameters twice, in order.
        column, again = _column(field, value, params), _column(field, value, params)
        params.append(value)
        return sql.SQL("({} IS NULL OR {} != ALL(%s))").format(column, again)
    raise FilterError(f"Unknown comparison operator {operator!r} in the filter on {field}.")
