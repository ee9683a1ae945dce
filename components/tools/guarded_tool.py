"""`GuardedTool`: one registered tool as a component whose every run goes through the `ToolExecutor`.

Its input sockets copy the wrapped tool's, so Haystack's `ComponentTool` offers a chat model exactly the tool's
schema, while authorisation, validation, retries, breaker, cache and telemetry still apply to every call.
"""

from __future__ import annotations

from typing import Any

from haystack import component, default_from_dict, default_to_dict
from haystack.core.component.types import _empty

from components.tools.executor import ToolExecutor
from components.tools.registry import get_tool


@component
class GuardedTool:
    """Runs the registered tool `tool` for `profile` through the executor; never raises.

    Usage:
    ```python
    from haystack.tools import ComponentTool
    calculator = GuardedTool(tool="calculator", profile="analyst")
    ComponentTool(component=calculator, name="calculator", parameters=get_tool("calculator").input_schema)
    ```
    """

    def __init__(self, tool: str, profile: str | None = None) -> None:
        spec = get_tool(tool)
        self.tool = tool
        self.profile = profile
        self._executor: ToolExecutor | None = None
        sockets = spec.create().__haystack_input__._sockets_dict
        for name, socket in sockets.items():
            if socket.default_value is _empty:
                component.set_input_type(self, name, socket.type)
            else:
                component.set_input_type(self, name, socket.type, socket.default_value)

    def warm_up(self) -> None:
        """Read the profiles and check the profile exists (once)."""
        if self._executor is None:
            self._executor = ToolExecutor(profile=self.profile)

    @component.output_types(output=dict[str, Any], status=dict[str, Any])
    def run(self, **kwargs: Any) -> dict[str, Any]:
        """Run the tool with the given arguments.

        :returns: `output`: the tool's validated result ({} on failure); `status`: the run's status as a dict.
        """
        self.warm_up()
        assert self._executor is not None
        outcome = self._executor.run(self.tool, dict(kwargs))
        return {"output": outcome.output or {}, "status": outcome.status.to_dict()}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, tool=self.tool, profile=self.profile)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GuardedTool:
        return default_from_dict(cls, data)
