"""Every tool of the registry as an MCP tool of the server, beside the served pipelines.

`with_registry_tools(server)` extends an MCP server's tool list with each tool the profile (TOOL_PROFILE) grants,
with its JSON input and output schemas, and answers their calls through the `ToolExecutor` (grants, validation,
timeout, retries, breaker, cache, telemetry): the result is the tool's JSON (also as structured content); a failed
call is an MCP error result whose text holds the status (and the contract's error answer, when it has one).

Usage:
```python
server = with_registry_tools(create_mcp_server("research-assistant"))
```
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from haystack import logging

from components.settings import Settings, get_settings
from components.tools.executor import ToolExecutor
from components.tools.registry import get_tool, tool_names

logger = logging.getLogger(__name__)


class RegistryTools:
    """The registry's tools for one profile, listed and called for MCP. The profiles, the profile, the call log and
    every granted tool are taken from `settings` (None: the process's) as the server is made, never while it
    answers: a tool's component reads the server's settings when it is built, here, not the first call's."""

    def __init__(self, profile: str | None = None, settings: Settings | None = None) -> None:
        self.profile = profile
        self._executor = ToolExecutor(profile=profile, settings=settings or get_settings())
        self._executor.prepare()

    def executor(self) -> ToolExecutor:
        return self._executor

    def names(self) -> list[str]:
        """The tools the profile grants, in registration order."""
        executor = self.executor()
        return [name for name in tool_names() if executor.profiles.granted(executor.profile, name)]

    def listed(self) -> list[Any]:
        """The granted tools as MCP `Tool`s with their schemas."""
        from mcp import types

        tools = []
        for name in self.names():
            spec = get_tool(name)
            tools.append(
                types.Tool(
                    name=name,
                    description=spec.description,
                    inputSchema=spec.input_schema,
                    outputSchema=spec.output_schema,
                )
            )
        return tools

    async def call(self, name: str, arguments: dict[str, Any] | None) -> Any:
        """Run tool `name` in a worker thread; its JSON as the MCP result (an error result when it failed)."""
        from mcp import types

        outcome = await asyncio.to_thread(self.executor().run, name, dict(arguments or {}))
        if outcome.status.ok and outcome.output is not None:
            text = json.dumps(outcome.output, default=str)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], structuredContent=outcome.output
            )
        body = {"status": outcome.status.to_dict(), "output": outcome.output}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(body, default=str))], isError=True
        )


def with_registry_tools(server: Any, profile: str | None = None, settings: Settings | None = None) -> Any:
    """`server` (an MCP low-level server) also listing and calling every tool `profile` is granted under the
    profiles `settings` (None: the process's) declare; names the server already serves (its pipelines) keep their
    own handler."""
    from mcp import types

    registry = RegistryTools(profile, settings)
    list_tools = server.request_handlers[types.ListToolsRequest]
    call_tool = server.request_handlers[types.CallToolRequest]

    async def list_with_registry(request: Any) -> Any:
        result = await list_tools(request)
        served = {tool.name for tool in result.root.tools}
        result.root.tools.extend(tool for tool in registry.listed() if tool.name not in served)
        return result

    async def call_with_registry(request: Any) -> Any:
        name = request.params.name
        if name in registry.names():
            return types.ServerResult(await registry.call(name, request.params.arguments))
        return await call_tool(request)

    server.request_handlers[types.ListToolsRequest] = list_with_registry
    server.request_handlers[types.CallToolRequest] = call_with_registry
    return server
