"""The research agent's chat model waits as long as the catalog gives a question: the research pipeline's YAML
budget (`metadata.question_budget_s`), not the QUESTION_BUDGET_S setting, when the two differ."""

from __future__ import annotations

from dataclasses import replace

import pytest

from components.settings import reload_settings
from components.tools.research_agent import ResearchAgent
from pipelines.catalog import PipelineCatalog
from tests.pipelines.knowledge import REPO_CATALOG


@pytest.fixture()
def chat_model_set(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """A chat model configured (an invented key; nothing is called) and QUESTION_BUDGET_S at 9 s."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-invented-wobbleton")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("QUESTION_BUDGET_S", "9")
    # Warming the agent builds its tools over the stores: not what this checks.
    monkeypatch.setattr(ResearchAgent, "warm_up", lambda self: None)
    reload_settings()
    yield
    monkeypatch.undo()
    reload_settings()


def _catalog(research_metadata: dict) -> PipelineCatalog:
    repo = PipelineCatalog(REPO_CATALOG)
    research = repo.spec("research")
    specs = {
        "research": replace(research, pipeline={**research.pipeline, "metadata": research_metadata}),
        "research_agent": repo.spec("research_agent"),
    }
    return PipelineCatalog(specs=specs)


def test_the_agents_chat_model_waits_the_research_pipelines_yaml_budget(chat_model_set) -> None:  # noqa: ANN001
    agent = _catalog({"question_budget_s": 42.5}).get("research_agent").get_component("agent")
    assert agent.timeout_s == 42.5 and agent._generator.timeout == 42.5
    assert agent.to_dict()["init_parameters"]["timeout_s"] == 42.5  # the dumped YAML says how long it waits


def test_the_catalogs_dump_and_export_carry_the_agents_timeout(chat_model_set) -> None:  # noqa: ANN001
    """Another machine (or a stock Hayhooks) reading the agent's YAML alone waits as long as this catalog does."""
    import yaml

    from pipelines.serving.export import hayhooks_document

    catalog = _catalog({"question_budget_s": 42.5})
    dumped = yaml.safe_load(catalog.dumps())["pipelines"]["research_agent"]["pipeline"]
    assert dumped["components"]["agent"]["init_parameters"]["timeout_s"] == 42.5
    exported = hayhooks_document("research_agent", catalog)
    assert exported["components"]["agent"]["init_parameters"]["timeout_s"] == 42.5


def test_without_a_yaml_budget_it_waits_the_setting(chat_model_set) -> None:  # noqa: ANN001
    agent = _catalog({}).get("research_agent").get_component("agent")
    assert agent._generator.timeout == 9.0


def test_a_catalog_given_a_budget_gives_it_to_the_agent_too(chat_model_set) -> None:  # noqa: ANN001
    repo = PipelineCatalog(REPO_CATALOG)
    catalog = PipelineCatalog(specs={"research_agent": repo.spec("research_agent")}, question_budget_s=5.0)
    assert catalog.get("research_agent").get_component("agent")._generator.timeout == 5.0


def test_an_agent_timeout_out_of_range_is_refused() -> None:
    for wrong in (0, -1, 900, True):
        with pytest.raises(ValueError, match="timeout_s must be seconds"):
            ResearchAgent(timeout_s=wrong)
