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
from pipelines.catalog import PipelineCatalog, build_pipeline
from tests.pipelines.knowledge import REPO_CATALOG

# setting (environment variable) -> (value set, the YAML's value) and where that value must show up:
# pipeline -> component -> init parameter.
SETTINGS: dict[str, tuple[str, Any, dict[str, dict[str, str]]]] = {
    "TOOL_TIMEOUT_S": ("4.5", 4.5, {
        "research": {"kb_dense": "timeout_s", "kb_keyword": "timeout_s", "graph": "timeout_s", "web": "timeout_s",
                     "arxiv": "timeout_s", "memory": "timeout_s", "memory_writer": "timeout_s"},
        "documents": {"list_documents": "timeout_s"},
        "document": {"get_document": "timeout_s"},
    }),
    "TOOL_RETRIES": ("1", 1, {"research": {"web": "retries", "arxiv": "retries", "memory": "retries"}}),
    "UPSTREAM_MAX_BYTES": ("1234567", 1234567, {
        "research": {"web": "max_response_bytes", "arxiv": "max_response_bytes", "generator": "max_response_bytes"},
    }),
    "CHUNK_TOKENS": ("150", 150, {"research": {"web": "chunk_tokens", "arxiv": "chunk_tokens"}}),
    "WEB_PAGE_TIMEOUT_S": ("3.5", 3.5, {"research": {"web": "page_timeout_s"}}),
    "WEB_EXCLUDE_PATTERNS": ("blocked.example", ["blocked.example"], {"research": {"web": "exclude_patterns"}}),
    "ALLOW_PRIVATE_ADDRESSES": ("true", True, {"research": {"web": "allow_private_addresses",
                                                            "arxiv": "allow_private_addresses"}}),
    "FIRECRAWL_API_URL": ("http://127.0.0.1:9/fc", "http://127.0.0.1:9/fc", {"research": {"web": "api_url"}}),
    "ARXIV_API_URL": ("http://127.0.0.1:9/alt", "http://127.0.0.1:9/alt", {"research": {"arxiv": "api_url"}}),
    "ARXIV_MIN_INTERVAL_S": ("1.5", 1.5, {"research": {"arxiv": "min_interval_s"}}),
    "MEMORY_BACKEND": ("zep", "zep", {"research": {"memory": "backend", "memory_writer": "backend"}}),
    "ZEP_API_URL": ("http://127.0.0.1:9/zep", "http://127.0.0.1:9/zep", {
        "research": {"memory": "zep_api_url", "memory_writer": "zep_api_url"},
    }),
    "GENERATOR": ("openai", "openai", {"research": {"generator": "generator"}}),
    "OPENAI_MODEL": ("model-of-the-test", "model-of-the-test", {"research": {"generator": "model"}}),
    "OPENAI_BASE_URL": ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1", {"research": {"generator": "api_base_url"}}),
    "TOOL_PROFILE": ("reader", "reader", {"research_agent": {"agent": "profile"}}),
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


def test_the_settings_checked_are_not_their_defaults() -> None:
    for name, (_, value, _) in SETTINGS.items():
        field = Settings.model_fields[name.lower()]
        assert field.get_default(call_default_factory=True) != value, name


def test_every_behaviour_changing_setting_is_in_the_yaml_and_no_secret(dumped: dict[str, Any]) -> None:
    for name, (_, value, places) in SETTINGS.items():
        for pipeline, components in places.items():
            for component, parameter in components.items():
                written = dumped["pipelines"][pipeline]["pipeline"]["components"][component]["init_parameters"]
                assert written[parameter] == value, (name, pipeline, component, parameter, written[parameter])
    research = dumped["pipelines"]["research"]["pipeline"]["components"]
    assert research["web"]["init_parameters"]["api_key"] == {
        "type": "env_var", "env_vars": ["FIRECRAWL_API_KEY"], "strict": False,
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
                assert getattr(built.get_component(component), parameter) == value, (name, component, parameter)


def test_the_configuration_page_lists_the_same_places() -> None:
    page = (REPO_CATALOG.parent / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = {}
    for line in page.splitlines():
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
