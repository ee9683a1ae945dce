"""The exported research pipeline as a stock Hayhooks loads it (the server test deploys only the light pipeline)."""

from __future__ import annotations

import inspect

import yaml
from haystack.components.joiners import DocumentJoiner

from components.ranking.joiner import LoopDocumentJoiner
from pipelines.catalog import PipelineCatalog
from pipelines.serving.export import export_hayhooks_yaml
from tests.pipelines.knowledge import REPO_CATALOG

ALLOWLIST = "components,pipelines,ingest,haystack_integrations"  # what the exported file's header asks for


def _stock_load(text: str):  # noqa: ANN202 - Hayhooks' wrapper
    from hayhooks.server.utils.deploy_utils import YAMLPipelineWrapper

    wrapper = YAMLPipelineWrapper.from_yaml(text, description="research")
    wrapper.setup()
    return wrapper.pipeline


def test_stock_hayhooks_loads_the_research_export_with_its_joiner_and_an_older_one(monkeypatch):
    monkeypatch.setenv("HAYSTACK_DESERIALIZATION_ALLOWLIST", ALLOWLIST)
    text = export_hayhooks_yaml("research", PipelineCatalog(REPO_CATALOG))
    joiner = _stock_load(text).get_component("joiner")
    assert type(joiner) is LoopDocumentJoiner and inspect.iscoroutinefunction(joiner.run_async)
    assert joiner.to_dict()["init_parameters"]["join_mode"] == "reciprocal_rank_fusion"
    # A file exported before the joiner had its own class names Haystack's: it still loads, as Haystack's joiner.
    older = yaml.safe_load(text)
    older["components"]["joiner"]["type"] = "haystack.components.joiners.document_joiner.DocumentJoiner"
    older["components"]["joiner"]["init_parameters"].pop("absent_lists")  # not a parameter such a file had
    older["components"]["joiner"]["init_parameters"].pop("fused_view")  # nor this: its joiner sent a plain list
    for connection in older["connections"]:
        if connection["sender"] == "joiner.fused":
            connection["sender"] = "joiner.documents"
    assert type(_stock_load(yaml.safe_dump(older, sort_keys=False)).get_component("joiner")) is DocumentJoiner
