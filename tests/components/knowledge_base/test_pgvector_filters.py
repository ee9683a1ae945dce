"""`where_clause`: the product's Haystack-filter-to-SQL conversion for the pgvector table selects exactly the rows the
integration's own `PgvectorDocumentStore.filter_documents` selects, for every operator the product's filters use
(`search_filters_to_haystack`, and the attached-chunk OR on ids) and the others it accepts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from haystack import Document
from haystack.errors import FilterError
from haystack.utils import Secret
from psycopg import sql

from components.knowledge_base.pgvector_adapter import where_clause

DOCUMENTS = [
    Document(id="a1", content="alpha", meta={"doc_type": "pdf", "document_id": "d1", "date_ordinal": 738000}),
    Document(id="a2", content="beta", meta={"doc_type": "web", "document_id": "d1", "date_ordinal": 738500}),
    Document(id="a3", content="gamma", meta={"doc_type": "web", "document_id": "d2", "date_ordinal": 0}),
    Document(
        id="a4",
        content="delta",
        meta={"doc_type": "txt", "document_id": "d3", "date_ordinal": 739100, "score": 0.5, "draft": True},
    ),
    Document(id="a5", content="epsilon", meta={"document_id": "d4", "score": 1.5, "draft": False}),
    Document(id="a6", content="zeta", meta={}),
]
AND = "AND"

FILTERS: list[dict[str, Any]] = [
    {"field": "meta.doc_type", "operator": "in", "value": ["web", "txt"]},
    {"field": "meta.doc_type", "operator": "not in", "value": ["web"]},
    {"field": "meta.doc_type", "operator": "==", "value": "pdf"},
    {"field": "meta.doc_type", "operator": "!=", "value": "pdf"},
    {"field": "meta.doc_type", "operator": "==", "value": None},
    {"field": "meta.date_ordinal", "operator": ">=", "value": 738500},
    {"field": "meta.date_ordinal", "operator": "<", "value": 738500},
    {"field": "meta.score", "operator": "<=", "value": 1.0},
    {"field": "meta.draft", "operator": "==", "value": True},
    {"field": "id", "operator": "in", "value": ["a2", "a5", "nowhere"]},
    {
        "operator": AND,
        "conditions": [
            {"field": "meta.doc_type", "operator": "in", "value": ["web", "pdf"]},
            {"field": "meta.document_id", "operator": "in", "value": ["d1", "d2"]},
            {"field": "meta.date_ordinal", "operator": ">=", "value": 737000},
            {"field": "meta.date_ordinal", "operator": "<=", "value": 738600},
            {"field": "meta.date_ordinal", "operator": ">", "value": 0},
        ],
    },
    {
        "operator": "OR",
        "conditions": [
            {"operator": AND, "conditions": [{"field": "meta.date_ordinal", "operator": ">", "value": 738600}]},
            {"field": "id", "operator": "in", "value": ["a3"]},
        ],
    },
]


@pytest.fixture(scope="module")
def document_store(database_url: str):  # noqa: ANN201 - the integration's class
    import os
    import uuid

    from haystack_integrations.document_stores.pgvector import PgvectorDocumentStore

    os.environ["PG_FILTER_CONFORMANCE_URL"] = database_url
    store = PgvectorDocumentStore(
        connection_string=Secret.from_env_var("PG_FILTER_CONFORMANCE_URL"),
        table_name=f"t_{uuid.uuid4().hex[:10]}",
        embedding_dimension=4,
    )
    store.write_documents(DOCUMENTS)
    yield store
    store.delete_table()
    os.environ.pop("PG_FILTER_CONFORMANCE_URL", None)


def _ids_by_sql(database_url: str, table: str, filters: dict[str, Any]) -> list[str]:
    import psycopg

    where, params = where_clause(filters)
    query = sql.SQL("SELECT id FROM {}{} ORDER BY id").format(sql.Identifier(table), where)
    with psycopg.connect(database_url) as conn:
        return [row[0] for row in conn.execute(query, params).fetchall()]


@pytest.mark.integration
@pytest.mark.parametrize("filters", FILTERS, ids=[str(index) for index in range(len(FILTERS))])
def test_selects_what_the_integrations_filter_documents_selects(document_store, database_url, filters) -> None:
    theirs = sorted(document.id for document in document_store.filter_documents(filters))
    assert _ids_by_sql(database_url, document_store.table_name, filters) == theirs


def test_and_continues_a_where_and_no_filter_is_no_condition() -> None:
    where, params = where_clause({"field": "meta.doc_type", "operator": "in", "value": ["web"]}, "AND")
    assert where.as_string(None).startswith(" AND ") and params == ("doc_type", ["web"])
    nothing, none = where_clause(None)
    assert nothing.as_string(None) == "" and none == ()


@pytest.mark.parametrize(
    ("filters", "words"),
    [
        ({"operator": "XOR", "conditions": [{"field": "id", "operator": "==", "value": "a"}]}, "logical operator"),
        ({"operator": "AND", "conditions": []}, "non-empty list"),
        ({"field": "meta.a", "operator": "in", "value": "web"}, "needs a list"),
        ({"field": "meta.a", "operator": ">", "value": "soon"}, "only ISO dates"),
        ({"field": "meta.a", "operator": "~", "value": 1}, "Unknown comparison operator"),
        ({"field": "meta.a", "operator": "=="}, "has no value"),
    ],
)
def test_a_filter_it_cannot_read_is_one_sentence(filters: dict[str, Any], words: str) -> None:
    with pytest.raises(FilterError, match=words):
        where_clause(filters)


def test_a_field_name_is_a_parameter_not_sql() -> None:
    where, params = where_clause({"field": "meta.x') OR 1=1 --", "operator": "==", "value": "v"})
    assert "OR 1=1" not in where.as_string(None) and params == ("x') OR 1=1 --", "v")


@pytest.mark.integration
@pytest.mark.parametrize("operator", ["==", "!=", "in", "not in"])
def test_a_meta_key_with_quotes_and_percent_signs_selects_its_rows(database_url, operator) -> None:
    """A `%` in a meta key is no placeholder, a quote no end of a string: the key selects the rows that have it."""
    import psycopg

    key = "rate %s of 100% 'net'"
    value: Any = ["high"] if operator in ("in", "not in") else "high"
    filters = {
        "operator": AND,
        "conditions": [
            {"field": f"meta.{key}", "operator": operator, "value": value},
            {"field": "meta.%(name)s", "operator": "!=", "value": "x"},
        ],
    }
    where, params = where_clause(filters)
    with psycopg.connect(database_url) as conn:
        conn.execute("CREATE TEMP TABLE odd_keys (id text, meta jsonb)")
        conn.execute(
            "INSERT INTO odd_keys VALUES ('b1', %s), ('b2', %s), ('b3', '{}')",
            (json.dumps({key: "high"}), json.dumps({key: "low"})),
        )
        ids = [
            row[0]
            for row in conn.execute(sql.SQL("SELECT id FROM odd_keys{} ORDER BY id").format(where), params).fetchall()
        ]
    assert ids == (["b1"] if operator in ("==", "in") else ["b2", "b3"])
