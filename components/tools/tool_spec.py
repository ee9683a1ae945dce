"""`ToolSpec`: what the registry knows of one tool (name, description, schemas, how to build and call it)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from haystack import Pipeline
from pydantic import TypeAdapter


@dataclass(frozen=True)
class ToolSpec:
    """One registered tool.

    Every tool's arguments are declared one way, by a typed signature whose JSON schema Haystack derives (see
    `input_schema`): `adapter(component, **arguments) -> ToolRun`, a tool contract's mapping onto the component,
    declares them with `Annotated[type, "description"]` parameters after the component; without an adapter they are
    the component's `run` inputs (described by its docstring) and its outputs the result. `result_schema` declares
    the contract's result (else it comes from the component's output sockets); `source` is the research source the
    tool reads (kb, graph, web, arxiv, memory), for the manager.
    """

    name: str
    description: str
    factory: Callable[[], Any]
    network: bool = False
    side_effects: bool = False
    result_schema: dict[str, Any] | None = None
    adapter: Callable[[Any, dict[str, Any]], Any] | None = None
    source: str | None = None

    @functools.cached_property
    def input_schema(self) -> dict[str, Any]:
        """JSON schema of the tool's arguments, derived by Haystack from the adapter's typed signature (as
        `create_tool_from_function` does) or the component's input sockets (as `ComponentTool` does); no other
        properties allowed."""
        from haystack.tools import ComponentTool, create_tool_from_function

        if self.adapter is not None:
            tool = create_tool_from_function(_contract_arguments(self.adapter), self.name, "")
            schema = _absent_is_none(dict(tool.parameters))
        else:
            tool = ComponentTool(component=self.factory(), name=self.name, description=self.description)
            schema = dict(tool.parameters)
        schema.setdefault("type", "object")
        schema.setdefault("required", [])
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
            return self.adapter(component, **arguments)
        return ToolRun(output=dict(component.run(**arguments)))


def _contract_arguments(adapter: Callable[..., Any]) -> Callable[..., Any]:
    """A stand-in for `adapter` whose signature is the adapter's without its first parameter (the component): the
    tool's arguments."""
    signature = inspect.signature(adapter, eval_str=True)

    def arguments(**_: Any) -> None:
        """The tool's arguments."""

    arguments.__name__ = adapter.__name__.strip("_") or "arguments"
    arguments.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:]
    )
    return arguments


def _absent_is_none(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each optional argument declared `X | None = None` described as plain X: leaving it out is how
    a caller says None."""
    for name, prop in schema.get("properties", {}).items():
        arms = prop.get("anyOf") or []
        present = [arm for arm in arms if arm != {"type": "null"}]
        if len(present) == 1 < len(arms) and "default" in prop and prop["default"] is None:
            described = {key: value for key, value in prop.items() if key not in ("anyOf", "default")}
            schema["properties"][name] = {**present[0], **described}
    return schema


@dataclass
class ToolRun:
    """What one call of a tool's component gave: the contract's JSON result, the evidence chunks behind it (each
    fully attributed, for citations), and the component's own status (None for tools without one)."""

    output: dict[str, Any]
    chunks: list[Any] = field(default_factory=list)
    status: Any = None
