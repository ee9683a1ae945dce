"""`ToolExecutor`: runs any registered tool for a profile: authorisation, input and output validation, and the
one resilience policy (components.resilience) configured per tool. Never raises: every outcome is a status.

A research tool's component reports its own status: when it failed, the executor's status says so (and counts it
toward the tool's breaker), while the tool's contract answer (an empty result, an error code) is still returned.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from haystack import logging

from components.contracts import ContextChunk, SourceStatus, StatusKind
from components.resilience import RetryableError, SourceError, SourceGuard, SourceResult, telemetry
from components.resilience.errors import first_line
from components.resilience.guard import cache_key
from components.settings import Settings, get_settings, settings_in_force
from components.tools import call_log
from components.tools.call_log import record_call
from components.tools.profiles import ToolProfiles, load_profiles
from components.tools.registry import get_tool, tool_names
from components.tools.tool_spec import ToolRun, ToolSpec

logger = logging.getLogger(__name__)


@dataclass
class ToolResult(SourceResult):
    """A tool's output (and its evidence chunks) carried through the guard (and its cache) as a `SourceResult`."""

    output: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolOutcome:
    """What running a tool gave: its validated output (None when there is none), its status, and the evidence
    chunks behind the output (fully attributed `ContextChunk`s, for citations)."""

    tool: str
    output: dict[str, Any] | None
    status: SourceStatus
    chunks: list[ContextChunk] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "output": self.output, "status": self.status.to_dict()}


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _schema_error(schema: dict[str, Any], value: Any) -> str | None:
    """The first way `value` breaks the JSON `schema` ("where: what"), or None."""
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value), key=str)
    if not errors:
        return None
    where = ".".join(str(part) for part in errors[0].absolute_path)
    return f"{where}: {errors[0].message}" if where else errors[0].message


def _failure(run: ToolRun) -> Exception:
    """The exception that tells the guard how the component failed: refused input (never retried, not the
    backend's fault), a timeout, or a backend fault (retried as the tool's policy says)."""
    status = run.status
    if status.status is StatusKind.SKIPPED:  # not configured (no key...): not a backend fault, never retried
        return SourceError(status.message or "the tool was skipped")
    if status.attempts == 0 and status.status is StatusKind.ERROR:
        return SourceError(status.message or "the tool refused its input")
    kind = "timeout" if status.status is StatusKind.TIMEOUT else "unavailable"
    return RetryableError(status.message or f"the tool ended with {status.status.value}", kind=kind)


def _fault_of(status: SourceStatus) -> str:
    """The fault kind of a failed run, as far as its status tells."""
    return {StatusKind.TIMEOUT: "timeout", StatusKind.SKIPPED: "skipped"}.get(status.status, "error")


class ToolExecutor:
    """Runs tools by name under their profile's grants and their per-tool policy.

    Usage:
    ```python
    executor = ToolExecutor(profile="analyst")
    outcome = executor.run("calculator", {"expression": "2 * 21"})
    outcome.output["result"], outcome.status.status
    ```
    """

    def __init__(
        self,
        profile: str | None = None,
        profiles: ToolProfiles | None = None,
        call_log_file: Path | None = None,
        settings: Settings | None = None,
    ) -> None:
        """:param profile: the granted profile; None: the profiles' default (TOOL_PROFILE as they were loaded).
        :param profiles: the grants and policies; None: those `settings` declare, loaded now.
        :param call_log_file: where every call is logged; None: `settings`' data folder's, taken now.
        :param settings: those the tools are built with (None: those in force now, the process's unless a catalog
            or a server building this executor named others)."""
        self.settings = settings = settings or get_settings()
        self.profiles = profiles or load_profiles(settings)
        self.profile = self.profiles.require_profile(profile or None)
        self._components: dict[str, Any] = {}
        self._guards: dict[str, SourceGuard] = {}
        self._unbuilt: dict[str, str] = {}  # tool -> why its component could not be built
        self._call_log = call_log_file or call_log.call_log_path(settings)

    def prepare(self) -> None:
        """Build every tool the profile is granted, with its guard, now (an agent's warm-up, a server's start):
        building reads the settings, which a running question never does. Idempotent. A tool that cannot be built
        is logged and left out: its calls are refused with the reason, the other tools still run."""
        for name in tool_names():
            if self.profiles.granted(self.profile, name) and name not in self._unbuilt:
                self._guard(name)
                try:
                    self._component(get_tool(name))
                except Exception as exc:  # noqa: BLE001 - one broken tool must not stop a server or an agent
                    self._unbuilt[name] = first_line(exc, 300)
                    logger.warning("Tool {tool} cannot be built: {reason}", tool=name, reason=self._unbuilt[name])

    def _component(self, spec: ToolSpec) -> Any:
        component = self._components.get(spec.name)
        if component is None:
            with settings_in_force(self.settings):  # the component's __init__ and warm_up read these settings
                component = spec.factory()
                if hasattr(component, "warm_up"):
                    component.warm_up()
            self._components[spec.name] = component
        return component

    def _guard(self, name: str) -> SourceGuard:
        guard = self._guards.get(name)
        if guard is None:
            guard = self._guards[name] = SourceGuard(name, self.profiles.policy_for(name))
        return guard

    def _refuse(self, name: str, started: float, fault: str, message: str) -> ToolOutcome:
        status = SourceStatus.refused(name, message, started)
        if fault != "unknown_tool":  # counters only for real tools, not for every misspelt name
            telemetry.record(name, "error", status.execution_time_ms, fault=fault)
            record_call(name, status, fault, path=self._call_log)
        logger.warning("Tool {tool} refused ({fault}): {reason}", tool=name, fault=fault, reason=message)
        return ToolOutcome(tool=name, output=None, status=status)

    def check(self, name: str, arguments: dict[str, Any] | None) -> tuple[ToolSpec | None, str | None, str]:
        """(spec, fault kind, message) for a call: the fault is None when the call may run."""
        try:
            spec = get_tool(name)
        except ValueError as exc:
            return None, "unknown_tool", str(exc)
        if not self.profiles.granted(self.profile, name):
            return spec, "unauthorized", f"profile {self.profile!r} is not granted the tool {name!r}."
        if not isinstance(arguments, dict):
            return spec, "invalid_input", f"the arguments of {name} must be a JSON object."
        problem = _schema_error(spec.input_schema, arguments)
        if problem:
            return spec, "invalid_input", f"invalid input for {name}: {problem}"
        return spec, None, ""

    def run(self, name: str, arguments: dict[str, Any] | None = None) -> ToolOutcome:
        """Run tool `name` with `arguments` (a JSON object)."""
        started = time.monotonic()
        arguments = {} if arguments is None else arguments
        spec, fault, message = self.check(name, arguments)
        if fault is not None or spec is None:
            return self._refuse(name, started, fault or "unknown_tool", message)
        if name not in self._unbuilt:
            try:
                component = self._component(spec)
            except Exception as exc:  # noqa: BLE001 - said as the call's status, never raised
                self._unbuilt[name] = first_line(exc, 300)
        if name in self._unbuilt:
            return self._refuse(name, started, "unavailable", f"{name} cannot be built: {self._unbuilt[name]}")
        key = cache_key(name, arguments) if not spec.side_effects else None

        failed: dict[str, ToolRun] = {}

        def work() -> ToolResult:
            run = spec.run(component, dict(arguments))
            inner = run.status
            if inner is not None and not inner.ok:
                failed["run"] = run
                raise _failure(run)
            is_partial = inner is not None and inner.status is StatusKind.PARTIAL
            partial = (inner.message or "partial result") if is_partial else None
            found = inner.total_found if inner is not None else 1
            return ToolResult(output=run.output, chunks=list(run.chunks), total_found=found, partial=partial)

        result, status = self._guard(name).call(work, key=key)
        skipped = failed.get("run")
        if skipped is not None and skipped.status.status is StatusKind.SKIPPED:
            # The component's own "skipped" (e.g. no API key) stays a skip, not the guard's error.
            status = status.changed(status=StatusKind.SKIPPED, attempts=0)
        if not status.ok:
            record_call(name, status, _fault_of(status), path=self._call_log)
            # A component that failed still answers with its contract's shape (an empty list, an error code).
            answer = failed.get("run")
            output = _jsonable(answer.output) if answer is not None else None
            if output is not None and _schema_error(spec.output_schema, output):
                output = None
            return ToolOutcome(tool=name, output=output, status=status)
        output = _jsonable(getattr(result, "output", {}))
        problem = _schema_error(spec.output_schema, output)
        if problem:
            return self._refuse(name, started, "invalid_output", f"{name} returned an invalid result: {problem}")
        record_call(name, status, path=self._call_log)
        return ToolOutcome(tool=name, output=output, status=status, chunks=list(getattr(result, "chunks", [])))
