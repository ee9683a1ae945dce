"""Settings enter a pipeline when it is built, never while it runs: every pipeline of the catalog is built and
warmed with the settings in force, then the settings are made unreadable, and every pipeline still answers."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

from components.contracts import StatusKind
from pipelines.catalog import PipelineCatalog
from tests.contract_servers.arxiv import arxiv_server, arxiv_server_session  # noqa: F401 - fixtures
from tests.contract_servers.chat import chat_server, chat_server_session  # noqa: F401 - fixtures
from tests.contract_servers.firecrawl import firecrawl_server, firecrawl_server_session  # noqa: F401 - fixtures
from tests.pipelines.knowledge import catalog_yaml_for, fill_collection, fresh_collection_name

# One request per pipeline of the catalog; a pipeline added to the catalog without one fails the test.
REQUESTS: dict[str, dict[str, Any]] = {
    "research": {
        "question": "Which team won Super Bowl 50?",
        "sources": ["kb", "graph", "web", "arxiv", "memory"],
        "session_id": "settings-at-build",
    },
    "documents": {"limit": 5},
    "document": {"document_id": "warsaw"},
    "entity_timeline": {"entity_name": "Warsaw"},
    "entity_relationships": {"entity_name": "Warsaw"},
    "entity_search": {"query": "Warsaw"},
    "research_agent": {"question": "What is 12 * (3 + 4)?"},  # the chat model calls the calculator tool
}


class SettingsReadAtRunTime(AssertionError):
    pass


READS: list[str] = []  # every refused read, also those a component's own error handling swallowed


def _refuse(*_args: Any, **_kwargs: Any) -> Any:
    caller = " < ".join(f"{frame.filename}:{frame.lineno}" for frame in traceback.extract_stack()[-4:-1])
    READS.append(caller)
    raise SettingsReadAtRunTime(f"a component read the global settings while the pipeline ran ({caller})")


@pytest.fixture()
def built_catalog(
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    embedding_model: Any,
    firecrawl_server: Any,  # noqa: F811
    arxiv_server: Any,  # noqa: F811
    chat_server: Any,  # noqa: F811
) -> Iterator[PipelineCatalog]:
    """The repository's catalog over a small filled collection, its hosted sources at the contract servers, every
    pipeline built and warmed."""
    from components.settings import reload_settings

    monkeypatch.setenv("FIRECRAWL_API_URL", firecrawl_server.url)
    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    monkeypatch.setenv("ARXIV_API_URL", arxiv_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url_v1)
    collection = fresh_collection_name()
    fill_collection(collection, reload_settings(), embedding_model)
    catalog = PipelineCatalog.loads(catalog_yaml_for(collection))
    for name in catalog.names():
        catalog.get(name)
    yield catalog
    monkeypatch.undo()
    reload_settings()


def test_every_pipeline_answers_with_the_settings_unreadable(built_catalog: PipelineCatalog, monkeypatch) -> None:
    assert set(built_catalog.names()) <= set(REQUESTS), "give the new pipeline a request in REQUESTS"
    READS.clear()
    # Every module of the product, not only the components: a module that imports `get_settings` by name at its
    # top holds its own reference, which only a patch of that module reaches.
    product = ("components", "pipelines", "ingest")
    for module in [module for name, module in sys.modules.items() if name.split(".")[0] in product]:
        for attribute in ("get_settings", "setting_or", "reload_settings"):
            if callable(getattr(module, attribute, None)):
                monkeypatch.setattr(module, attribute, _refuse)

    research = built_catalog.research(**REQUESTS["research"])
    assert "Broncos" in research.answer
    statuses = {status.source: status for status in research.statuses}
    assert {"kb_dense", "kb_keyword", "graph", "web", "arxiv", "memory"} <= set(statuses)
    for status in statuses.values():  # every source answered: nothing failed for want of its settings
        assert status.status in (StatusKind.SUCCESS, StatusKind.PARTIAL), status

    for name in built_catalog.names():
        if name == "research":
            continue
        outputs = built_catalog.run(name, REQUESTS[name])
        status = outputs["status"]
        assert status.status in (StatusKind.SUCCESS, StatusKind.PARTIAL), (name, status)
        if name == "research_agent":
            tools = [call["tool"] for call in outputs["tool_calls"]]
            assert tools == ["calculator"], (outputs["selection"], outputs["answer"])
            assert "84" in outputs["answer"]
    assert not READS, READS
