"""`ToolSpec`: what the registry knows of one tool (name, description, schemas, how to build and call it)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from haystack import Pipeline
from pydantic import TypeAdapter


@dataclass(frozen=True)
class ToolSpec:
    """One registered tool.

    `arguments_schema`/`result_schema` declare the contract's schemas (else they come from the component's
    sockets); `adapter(component, arguments) -> ToolRun` maps a contract call onto the component (else the
    arguments are the component's inputs and its outputs the result); `source` is the research source the tool
    reads (kb, graph, web, arxiv, memory), for the manager.
    """

    name: str
    description: str
    factory: Callable[[], Any]
    network: bool = False
    side_effects: bool = False
    arguments_schema: dict[str, Any] | None = None
    result_schema: dict[str, Any] | None = None
    adapter: Callable[[Any, dict[str, Any]], Any] | None = None
    source: str | None = None

    @functools.cached_property
    def input_schema(self) -> dict[str, Any]:
        """JSON schema of the tool's arguments: the declared one, or the component's input sockets'."""
        if self.arguments_schema is not None:
            return self.arguments_schema
        from haystack.tools import ComponentTool

        schema = dict(ComponentTool(component=self.factory(), name=self.name, description=self.description).parameters)
        schema.setdefault("type", "object")
        schema["additionalProperties"] = False
        return schema

    @functools.cached_property
    def output_schema(self) -> dict[str, Any]:
        """JSON schema of the tool's result: the declared one, or the component's output sockets'."""
        if self.result_schema is not None:
            return self.result_schema
        probe = Pipeline()  # a pipeline describes its components' sockets (a fresh instance, so never shared)
        probe.add_component("tool", self.factory())
        sockets = probe.outputs(include_components_with_connected_outputs=True).get("tool", {})
        properties = {name: TypeAdapter(socket["type"]).json_schema() for name, socket in sockets.items()}
        return {"type": "object", "properties": properties, "required": sorted(properties)}

    def describe(self) -> dict[str, Any]:
        """Name, description and both schemas, JSON-ready."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
        }

    def run(self, component: Any, arguments: dict[str, Any]) -> ToolRun:
        """Call `component` with the contract's `arguments`: through the adapter, or as the component's inputs."""
        if self.adapter is not None:
            return self.adapter(component, arguments)
        return ToolRun(output=dict(component.run(**arguments)))


@dataclass
class ToolRun:
    """What one call of a tool's component gave: the contract's JSON result, the evidence chunks behind it (each
    fully attributed, for citations), and the component's own status (None for tools without one)."""

    output: dict[str, Any]
    chunks: list[Any] = field(default_factory=list)
    status: Any = None
