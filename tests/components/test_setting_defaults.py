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

from components.ingestion.limits import IngestLimits
from components.resilience.guard import ResiliencePolicy
from components.settings import Settings, default_setting

# setting -> every (component class or function, parameter) whose default must be the setting's.
PAIRS: dict[str, list[tuple[Callable[..., Any], str]]] = {
    "ingest_max_file_bytes": [(IngestLimits, "max_bytes")],
    "ingest_max_chars": [(IngestLimits, "max_chars")],
    "ingest_max_chunks": [(IngestLimits, "max_chunks")],
    "ingest_max_elements": [(IngestLimits, "max_elements")],
    "ingest_max_parse_s": [(IngestLimits, "max_parse_s")],
    "tool_timeout_s": [(ResiliencePolicy, "timeout_s")],
    "tool_retries": [(ResiliencePolicy, "retries")],
    "breaker_failures": [(ResiliencePolicy, "breaker_failures")],
    "breaker_cooldown_s": [(ResiliencePolicy, "breaker_cooldown_s")],
    "cache_ttl_s": [(ResiliencePolicy, "cache_ttl_s")],
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
    ("setting", "target", "parameter"), CASES, ids=[f"{s}-{t.__name__}.{p}" for s, t, p in CASES]
)
def test_component_default_is_the_settings_default(setting: str, target: Callable[..., Any], parameter: str) -> None:
    assert setting in Settings.model_fields
    default = parameter_default(target, parameter)
    assert default == default_setting(setting)
    assert type(default) is type(default_setting(setting))


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
