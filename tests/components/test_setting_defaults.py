"""A component's default for a value a setting also gives is that setting's default.

The catalog, the CLI and the ingestion service build components from the settings in force; a component built
without them (a test, a script, a YAML that leaves the parameter out) falls back to its own default. The two must be
the same value, or a component behaves differently depending on who built it. Each default below is declared once,
in `components/settings.py`, and read by the component (`default_setting`); this test fails when one of them is
written out again and drifts.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from components.arxiv.access import ArxivAccess
from components.embedding.model import EmbeddingModel
from components.embedding.query_embedder import QueryEmbedder
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from components.generation.follow_up import FollowUpRewriter
from components.graph.neo4j_store import Neo4jGraphStore
from components.graph.postgres_store import PostgresGraphStore
from components.ingestion.limits import IngestLimits
from components.ingestion.splitter import TokenSplitter
from components.knowledge_base.milvus_index import open_milvus_document_store
from components.memory.zep import ZepMemoryStore
from components.resilience.guard import ResiliencePolicy
from components.settings import Settings, default_setting
from components.text.language import DEFAULT_SPACY_MODEL
from components.tools.fetch_page import FetchPage
from components.tools.wikipedia import WikipediaSummary

# setting -> every (component class or function, parameter) whose default must be the setting's.
PAIRS: dict[str, list[tuple[Callable[..., Any], str]]] = {
    "ingest_max_file_bytes": [(IngestLimits, "max_bytes")],
    "ingest_max_chars": [(IngestLimits, "max_chars")],
    "ingest_max_chunks": [(IngestLimits, "max_chunks")],
    "ingest_max_elements": [(IngestLimits, "max_elements")],
    "ingest_max_parse_s": [(IngestLimits, "max_parse_s")],
    "tool_timeout_s": [
        (ResiliencePolicy, "timeout_s"), (ZepMemoryStore, "timeout_s"), (FetchPage, "timeout_s"),
        (WikipediaSummary, "timeout_s"),
    ],
    "tool_retries": [(ResiliencePolicy, "retries")],
    "breaker_failures": [(ResiliencePolicy, "breaker_failures")],
    "breaker_cooldown_s": [(ResiliencePolicy, "breaker_cooldown_s")],
    "cache_ttl_s": [(ResiliencePolicy, "cache_ttl_s")],
    "chunk_tokens": [(TokenSplitter, "chunk_tokens")],
    "chunk_overlap_tokens": [(TokenSplitter, "overlap_tokens")],
    "embedding_threads": [(EmbeddingModel, "threads")],
    "embedding_batch_size": [
        (EmbeddingModel.embed, "batch_size"), (EmbeddingModel.embed_with_sentence_spans, "batch_size"),
    ],
    "embedding_model": [
        (TokenSplitter, "model"), (QueryEmbedder, "model"), (ExtractiveAnswerGenerator, "embedding_model"),
    ],
    "generator": [(FollowUpRewriter, "generator")],
    "openai_model": [(FollowUpRewriter, "model")],
    "kb_collection": [(Neo4jGraphStore, "collection"), (PostgresGraphStore, "collection")],
    "neo4j_username": [(Neo4jGraphStore, "username")],
    "neo4j_database": [(Neo4jGraphStore, "database")],
    "milvus_metric": [(open_milvus_document_store, "metric")],
    "arxiv_min_interval_s": [(ArxivAccess, "page_interval_s")],
}

# setting -> a component's constant that stands for its default.
CONSTANTS: dict[str, list[tuple[str, Any]]] = {
    "spacy_model": [("components.text.language.DEFAULT_SPACY_MODEL", DEFAULT_SPACY_MODEL)],
}

CASES = [(setting, target, parameter) for setting, targets in PAIRS.items() for target, parameter in targets]


def parameter_default(target: Callable[..., Any], parameter: str) -> Any:
    """The default of `parameter` of `target`: a dataclass's field, a class's `__init__` or a function."""
    if dataclasses.is_dataclass(target):
        field = {field.name: field for field in dataclasses.fields(target)}[parameter]
        assert field.default is not dataclasses.MISSING, f"{target.__name__}.{parameter} has no default"
        return field.default
    signature = inspect.signature(target.__init__ if inspect.isclass(target) else target)
    default = signature.parameters[parameter].default
    assert default is not inspect.Parameter.empty, f"{target.__name__}.{parameter} has no default"
    return default


@pytest.mark.parametrize(
    ("setting", "target", "parameter"), CASES, ids=[f"{s}-{t.__qualname__}.{p}" for s, t, p in CASES]
)
def test_component_default_is_the_settings_default(setting: str, target: Callable[..., Any], parameter: str) -> None:
    assert setting in Settings.model_fields
    default = parameter_default(target, parameter)
    assert default == default_setting(setting)
    assert type(default) is type(default_setting(setting))


@pytest.mark.parametrize(
    ("setting", "name", "value"),
    [(setting, name, value) for setting, constants in CONSTANTS.items() for name, value in constants],
)
def test_component_constant_is_the_settings_default(setting: str, name: str, value: Any) -> None:
    assert value == default_setting(setting), name


def test_a_drift_is_caught() -> None:
    @dataclasses.dataclass(frozen=True)
    class Drifted:
        timeout_s: float = 8.0

    def drifted(retries: int = 3) -> None:
        return None

    assert parameter_default(Drifted, "timeout_s") != default_setting("tool_timeout_s")
    assert parameter_default(drifted, "retries") != default_setting("tool_retries")


def test_the_defaults_hold_without_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The components' defaults are the declared ones, not what this process's environment sets."""
    monkeypatch.setenv("TOOL_TIMEOUT_S", "3.5")
    monkeypatch.setenv("INGEST_MAX_CHUNKS", "12")
    assert ResiliencePolicy().timeout_s == Settings.model_fields["tool_timeout_s"].default != 3.5
    assert IngestLimits().max_chunks == Settings.model_fields["ingest_max_chunks"].default != 12
