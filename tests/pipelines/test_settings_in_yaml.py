"""A serialised pipeline says how it behaves: with every behaviour-changing setting set to a value that is not its
default, the catalog's dump carries each value in the component that uses it, round-trips through Haystack's YAML
(`Pipeline.dumps` / `Pipeline.loads`), builds the same components on a machine whose environment says otherwise,
and holds no secret's value (only the names of the environment variables that hold them)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from haystack import Pipeline

from components.settings import Settings, reload_settings
from pipelines.catalog import CatalogError, PipelineCatalog, build_pipeline
from tests.pipelines.knowledge import REPO_CATALOG

# The components of the research pipeline that run under the resilience guard (a breaker and a result cache).
GUARDED = ("kb_dense", "kb_keyword", "graph", "web", "arxiv", "memory", "memory_writer", "hops")


def GUARDED_ELSEWHERE(parameter: str) -> dict[str, dict[str, str]]:  # noqa: N802 - read as a table's constant
    """The guarded components of the other pipelines, each with `parameter`."""
    return {
        "documents": {"list_documents": parameter},
        "document": {"get_document": parameter},
        "entity_timeline": {"timeline": parameter},
        "entity_relationships": {"relationships": parameter},
        "entity_search": {"search": parameter},
    }


# setting (environment variable) -> (value set, the YAML's value) and where that value must show up:
# pipeline -> component -> init parameter (component `metadata`: the pipeline's metadata; `a.b`: key or attribute b
# of the init parameter a).
SETTINGS: dict[str, tuple[str, Any, dict[str, dict[str, str]]]] = {
    "TOOL_TIMEOUT_S": (
        "4.5",
        4.5,
        {
            "research": {
                "kb_dense": "timeout_s",
                "kb_keyword": "timeout_s",
                "graph": "timeout_s",
                "web": "timeout_s",
                "arxiv": "timeout_s",
                "memory": "timeout_s",
                "memory_writer": "timeout_s",
                "hops": "timeout_s",
            },
            **GUARDED_ELSEWHERE("timeout_s"),
        },
    ),
    "TOOL_RETRIES": (
        "1",
        1,
        {
            "research": {"web": "retries", "arxiv": "retries", "memory": "retries"},
            "research_agent": {"agent": "retries"},
        },
    ),
    "UPSTREAM_MAX_BYTES": (
        "1234567",
        1234567,
        {
            "research": {"web": "max_response_bytes", "arxiv": "max_response_bytes", "generator": "max_response_bytes"},
            "research_agent": {"agent": "max_response_bytes"},
        },
    ),
    "CHUNK_TOKENS": ("150", 150, {"research": {"web": "chunk_tokens", "arxiv": "chunk_tokens"}}),
    "WEB_PAGE_TIMEOUT_S": ("3.5", 3.5, {"research": {"web": "page_timeout_s"}}),
    "WEB_EXCLUDE_PATTERNS": ("blocked.example", ["blocked.example"], {"research": {"web": "exclude_patterns"}}),
    "ALLOW_PRIVATE_ADDRESSES": (
        "true",
        True,
        {"research": {"web": "allow_private_addresses", "arxiv": "allow_private_addresses"}},
    ),
    "FIRECRAWL_API_URL": ("http://127.0.0.1:9/fc", "http://127.0.0.1:9/fc", {"research": {"web": "api_url"}}),
    "ARXIV_API_URL": ("http://127.0.0.1:9/alt", "http://127.0.0.1:9/alt", {"research": {"arxiv": "api_url"}}),
    "ARXIV_MIN_INTERVAL_S": ("1.5", 1.5, {"research": {"arxiv": "min_interval_s"}}),
    "MEMORY_BACKEND": ("zep", "zep", {"research": {"memory": "backend", "memory_writer": "backend"}}),
    "ZEP_API_URL": (
        "http://127.0.0.1:9/zep",
        "http://127.0.0.1:9/zep",
        {
            "research": {"memory": "zep_api_url", "memory_writer": "zep_api_url"},
        },
    ),
    "GENERATOR": ("openai", "openai", {"research": {"generator": "generator"}}),
    "OPENAI_MODEL": (
        "model-of-the-test",
        "model-of-the-test",
        {
            "research": {"generator": "model"},
            "research_agent": {"agent": "model"},
        },
    ),
    "OPENAI_BASE_URL": (
        "http://127.0.0.1:9/v1",
        "http://127.0.0.1:9/v1",
        {
            "research": {"generator": "api_base_url"},
            "research_agent": {"agent": "api_base_url"},
        },
    ),
    "TOOL_PROFILE": ("reader", "reader", {"research_agent": {"agent": "profile"}}),
    # The research pipeline's whole-question budget is the pipeline's own: in its `metadata`.
    "QUESTION_BUDGET_S": ("12.5", 12.5, {"research": {"metadata": "question_budget_s"}}),
    "BREAKER_FAILURES": (
        "3",
        3,
        {
            "research": {**dict.fromkeys(GUARDED, "breaker.failures"), "generator": "breaker.failures"},
            **GUARDED_ELSEWHERE("breaker.failures"),
        },
    ),
    "BREAKER_COOLDOWN_S": (
        "12.5",
        12.5,
        {
            "research": {**dict.fromkeys(GUARDED, "breaker.cooldown_s"), "generator": "breaker.cooldown_s"},
            **GUARDED_ELSEWHERE("breaker.cooldown_s"),
        },
    ),
    # Only the knowledge-base searches cache their results.
    "CACHE_TTL_S": ("60", 60.0, {"research": {"kb_dense": "cache_ttl_s", "kb_keyword": "cache_ttl_s"}}),
    "KEYWORD_INDEX_MAX_POSTINGS": (
        "5000000",
        5_000_000,
        {
            "research": {"kb_dense": "keyword_index_max_postings", "kb_keyword": "keyword_index_max_postings"},
        },
    ),
    # Another name of the bundled model: a value that is not the default, and loads.
    "EMBEDDING_MODEL": (
        "all-MiniLM-L6-v2",
        "all-MiniLM-L6-v2",
        {
            "research": {
                "kb_dense": "embedding_model",
                "kb_keyword": "embedding_model",
                "graph": "embedding_model",
                "web": "model",
                "arxiv": "model",
                "memory": "embedding_model",
                "memory_writer": "embedding_model",
                "ranker": "model",
                "hops": "embedding_model",
                "generator": "embedding_model",
            },
            "documents": {"list_documents": "embedding_model"},
            "document": {"get_document": "embedding_model"},
        },
    ),
    "SPACY_MODEL": (
        "en_core_web_sm",
        "en_core_web_sm",
        {
            "research": dict.fromkeys(
                (
                    "kb_dense",
                    "kb_keyword",
                    "graph",
                    "web",
                    "arxiv",
                    "memory",
                    "memory_writer",
                    "ranker",
                    "hops",
                    "question_analyzer",
                    "generator",
                    "citation_check",
                    "conflicts",
                ),
                "spacy_model",
            ),
        },
    ),
    "KB_DOCUMENT_FIELD": (
        "source_ref",
        "source_ref",
        {
            "research": dict.fromkeys(("kb_dense", "kb_keyword", "graph", "ranker", "hops"), "document_field"),
            "documents": {"list_documents": "document_field"},
            "document": {"get_document": "document_field"},
        },
    ),
}
SECRETS = ("FIRECRAWL_API_KEY", "OPENAI_API_KEY", "ZEP_API_KEY", "NEO4J_PASSWORD", "API_TOKEN")


def _secret(name: str) -> str:
    return f"secret-value-of-{name.lower()}"


@pytest.fixture()
def dumped(monkeypatch: pytest.MonkeyPatch, settings: Any) -> dict[str, Any]:
    """The repository's catalog built under the non-default settings and secrets, dumped and parsed."""
    for name, (value, *_) in SETTINGS.items():
        monkeypatch.setenv(name, value)
    for name in SECRETS:
        monkeypatch.setenv(name, _secret(name))
    reload_settings()
    text = PipelineCatalog(REPO_CATALOG).dumps()
    monkeypatch.undo()
    reload_settings()
    for name in SECRETS:
        assert _secret(name) not in text, f"the value of {name} is in the YAML"
    return yaml.safe_load(text)


def _place(pipeline: dict[str, Any], component: str) -> dict[str, Any]:
    """Where a pipeline's dump holds a component's init parameters (or, for `metadata`, the pipeline's own)."""
    return pipeline["metadata"] if component == "metadata" else pipeline["components"][component]["init_parameters"]


def _value(holder: Any, parameter: str) -> Any:
    """`holder`'s (a dumped mapping's or a built component's) `parameter`, dotted names reading into nested values."""
    for name in parameter.split("."):
        holder = holder[name] if isinstance(holder, dict) else getattr(holder, name)
    return holder


def test_the_settings_checked_are_not_their_defaults() -> None:
    for name, (_, value, _) in SETTINGS.items():
        field = Settings.model_fields[name.lower()]
        assert field.get_default(call_default_factory=True) != value, name


def test_every_behaviour_changing_setting_is_in_the_yaml_and_no_secret(dumped: dict[str, Any]) -> None:
    for name, (_, value, places) in SETTINGS.items():
        for pipeline, components in places.items():
            for component, parameter in components.items():
                written = _place(dumped["pipelines"][pipeline]["pipeline"], component)
                assert _value(written, parameter) == value, (name, pipeline, component, parameter, written)
    research = dumped["pipelines"]["research"]["pipeline"]["components"]
    assert research["web"]["init_parameters"]["api_key"] == {
        "type": "env_var",
        "env_vars": ["FIRECRAWL_API_KEY"],
        "strict": False,
    }


def test_each_pipeline_round_trips_and_keeps_its_behaviour_on_another_machine(dumped: dict[str, Any]) -> None:
    # The environment is back to the test defaults: what the built components do comes from the YAML alone.
    for name, entry in dumped["pipelines"].items():
        text = yaml.safe_dump(entry["pipeline"], sort_keys=False)
        pipeline = Pipeline.loads(text)
        assert yaml.safe_load(pipeline.dumps()) == yaml.safe_load(text), name
    catalog = PipelineCatalog.loads(yaml.safe_dump(dumped, sort_keys=False))
    for name, (_, value, places) in SETTINGS.items():
        for pipeline, components in places.items():
            built = build_pipeline(catalog.spec(pipeline))
            for component, parameter in components.items():
                if component == "metadata":
                    assert built.metadata[parameter] == value, (name, pipeline, parameter)
                else:
                    assert _value(built.get_component(component), parameter) == value, (name, component, parameter)


def test_the_configuration_page_lists_the_same_places() -> None:
    page = (REPO_CATALOG.parent / "docs" / "configuration.md").read_text(encoding="utf-8")
    section = page.split("## Which component takes which setting", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.fullmatch(r"\| `([A-Z_]+)` \| (.+) \|", line.strip())
        if match:
            rows[match.group(1)] = match.group(2)
    assert set(rows) == set(SETTINGS)
    for name, (_, _, places) in SETTINGS.items():
        written = {
            pipeline.strip(): {item.strip() for item in items.split(",")}
            for pipeline, items in (part.split(":") for part in rows[name].split(";"))
        }
        expected = {
            pipeline: {f"{component}.{parameter}" for component, parameter in components.items()}
            for pipeline, components in places.items()
        }
        assert written == expected, name


GRAPH_COMPONENTS = {
    "research": "graph",
    "entity_timeline": "timeline",
    "entity_relationships": "relationships",
    "entity_search": "search",
}


def test_the_graph_store_the_settings_choose_is_in_the_yaml(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """A graph component whose `graph_store` is null gets the store GRAPH_BACKEND and NEO4J_* choose as it is built,
    written out in full (the password an env-var secret), and rebuilt from the YAML alone."""
    monkeypatch.setenv("GRAPH_BACKEND", "neo4j")
    monkeypatch.setenv("NEO4J_URI", "neo4j://127.0.0.1:9")
    monkeypatch.setenv("NEO4J_USERNAME", "reader-of-the-test")
    monkeypatch.setenv("NEO4J_DATABASE", "graph-of-the-test")
    monkeypatch.setenv("NEO4J_PASSWORD", _secret("NEO4J_PASSWORD"))
    reload_settings()
    text = PipelineCatalog(REPO_CATALOG).dumps()
    monkeypatch.undo()
    reload_settings()
    assert _secret("NEO4J_PASSWORD") not in text
    dumped = yaml.safe_load(text)
    catalog = PipelineCatalog.loads(text)
    for pipeline, component in GRAPH_COMPONENTS.items():
        store = dumped["pipelines"][pipeline]["pipeline"]["components"][component]["init_parameters"]["graph_store"]
        assert store["type"] == "components.graph.neo4j_store.Neo4jGraphStore", pipeline
        params = store["init_parameters"]
        assert (params["uri"], params["username"], params["database"]) == (
            "neo4j://127.0.0.1:9",
            "reader-of-the-test",
            "graph-of-the-test",
        ), pipeline
        assert params["password"] == {"type": "env_var", "env_vars": ["NEO4J_PASSWORD"], "strict": False}
        # Under the default settings (GRAPH_BACKEND postgres) the YAML's store is the one built.
        built = build_pipeline(catalog.spec(pipeline)).get_component(component)
        assert type(built.graph_store).__name__ == "Neo4jGraphStore", pipeline
        assert built.graph_store.to_dict()["init_parameters"]["uri"] == "neo4j://127.0.0.1:9"


def test_a_research_pipeline_without_a_budget_in_its_yaml_gets_the_setting(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """The budget a catalog applies to a question is the one its research pipeline's YAML carries."""
    monkeypatch.setenv("QUESTION_BUDGET_S", "7.5")
    reload_settings()
    catalog = PipelineCatalog(REPO_CATALOG)
    pipeline = build_pipeline(catalog.spec("research"))
    monkeypatch.undo()
    reload_settings()
    assert pipeline.metadata["question_budget_s"] == 7.5
    assert catalog._budget(pipeline) == 7.5
    assert PipelineCatalog(REPO_CATALOG, question_budget_s=3.0)._budget(pipeline) == 3.0
    pipeline.metadata["question_budget_s"] = "soon"
    with pytest.raises(ValueError, match="question_budget_s must be seconds"):
        catalog._budget(pipeline)


@pytest.mark.parametrize("budget", ["soon", 0, 900, True])
def test_a_research_pipeline_whose_yaml_budget_is_out_of_range_is_refused_when_built(budget: Any) -> None:
    """Not at its first question (where the server would answer each question with a 422, as if the caller had
    asked wrongly): the catalog says which metadata is wrong as the pipeline is built."""
    from dataclasses import replace

    spec = PipelineCatalog(REPO_CATALOG).spec("research")
    written = replace(spec, pipeline={**spec.pipeline, "metadata": {"question_budget_s": budget}})
    with pytest.raises(CatalogError, match="question_budget_s must be seconds"):
        build_pipeline(written)


def test_a_blank_document_field_is_written_out_and_stays_blank_on_a_machine_that_sets_one(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """Without KB_DOCUMENT_FIELD the components' YAML says so (a blank field: the known fields), so a machine whose
    KB_DOCUMENT_FIELD names another field builds the same components from it; a YAML without the parameter (written
    before it was one) still takes the setting."""
    from components.graph.graph_search import GraphSearch
    from components.knowledge_base.search import KnowledgeBaseSearch
    from components.ranking.research_ranker import ResearchRanker

    monkeypatch.delenv("KB_DOCUMENT_FIELD", raising=False)
    reload_settings()
    dumped = [kind().to_dict() for kind in (KnowledgeBaseSearch, ResearchRanker, GraphSearch)]
    monkeypatch.setenv("KB_DOCUMENT_FIELD", "source_ref")
    reload_settings()
    for data in dumped:
        kind = {
            "KnowledgeBaseSearch": KnowledgeBaseSearch,
            "ResearchRanker": ResearchRanker,
            "GraphSearch": GraphSearch,
        }[data["type"].rsplit(".", 1)[-1]]
        assert data["init_parameters"]["document_field"] == "", data["type"]
        assert not kind.from_dict(data).document_field, data["type"]
        del data["init_parameters"]["document_field"]
        assert kind.from_dict(data).document_field == "source_ref", data["type"]


def test_a_yaml_with_the_older_flat_breaker_keys_still_loads(dumped: dict[str, Any]) -> None:
    pipeline = dumped["pipelines"]["research"]["pipeline"]
    for entry in pipeline["components"].values():
        breaker = entry["init_parameters"].pop("breaker", None)
        if breaker is not None:
            entry["init_parameters"].update(breaker_failures=breaker["failures"], breaker_cooldown_s=4.0)
    with pytest.warns(DeprecationWarning, match="breaker_failures and breaker_cooldown_s are deprecated"):
        loaded = Pipeline.loads(yaml.safe_dump(pipeline, sort_keys=False))
    for name in (*GUARDED, "generator"):
        breaker = loaded.get_component(name).breaker
        assert (breaker.failures, breaker.cooldown_s) == (3, 4.0), name
