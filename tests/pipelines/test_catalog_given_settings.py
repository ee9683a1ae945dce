"""A catalog given settings other than the process's builds its components with them: the research agent's graph
lookup, call log and profiles, and the Neo4j password of a graph store loaded from the catalog file."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from components.graph.neo4j_store import Neo4jGraphStore
from components.settings import get_settings
from pipelines.catalog import PipelineCatalog, build_pipeline

REPO_CATALOG = Path(__file__).resolve().parents[2] / "pipelines.yaml"


def _chosen(settings, work_dir):  # noqa: ANN001, ANN202
    return settings.model_copy(
        update={
            "graph_backend": "neo4j",
            "neo4j_uri": "neo4j://127.0.0.1:9",
            "neo4j_password": SecretStr("only-the-catalogs-password"),
            "research_data_dir": work_dir,
            "tool_profile": "reader",
            "breaker_failures": settings.breaker_failures + 5,
        }
    )


def test_the_research_agent_takes_the_catalogs_settings(settings, work_dir) -> None:  # noqa: ANN001
    chosen = _chosen(settings, work_dir)
    catalog = PipelineCatalog(REPO_CATALOG, settings=chosen)
    agent = build_pipeline(catalog.spec("research_agent"), catalog.agent_timeout_s(), chosen).get_component("agent")
    store = agent._entity_lookup.tools.store  # noqa: SLF001
    assert isinstance(store, Neo4jGraphStore) and store.uri == "neo4j://127.0.0.1:9"
    assert store.fallback_password.resolve_value() == "only-the-catalogs-password"
    executor = agent._executor  # noqa: SLF001
    assert executor.profile == "reader" and executor._call_log == work_dir / "telemetry" / "tool_calls.jsonl"  # noqa: SLF001
    assert executor.profiles.policy_for("calculator").breaker_failures == chosen.breaker_failures
    process = get_settings()
    assert process.graph_backend == settings.graph_backend and process.data_dir == settings.data_dir
    assert process.breaker_failures == settings.breaker_failures


def test_a_graph_store_loaded_from_the_catalog_file_takes_the_catalogs_neo4j_password(settings, work_dir) -> None:  # noqa: ANN001
    chosen = _chosen(settings, work_dir)
    catalog = PipelineCatalog(REPO_CATALOG, settings=chosen)
    search = build_pipeline(catalog.spec("entity_search"), settings=chosen).get_component("search")
    store = search.graph_store
    assert isinstance(store, Neo4jGraphStore)
    assert store.fallback_password.resolve_value() == "only-the-catalogs-password"
    process = get_settings().neo4j_password
    assert process is None or process.get_secret_value() != "only-the-catalogs-password"
