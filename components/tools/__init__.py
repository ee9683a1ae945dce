"""The tool system: a registry of every tool (the built-ins and the research tools) with its JSON schemas, an
executor that applies each profile's grants and each tool's resilience policy, `auto` source selection, the
manager's tool choice and the research agent."""

from components.tools.executor import ToolExecutor, ToolOutcome
from components.tools.registry import get_tool, list_tools, tool_names, tool_status
from components.tools.source_selection import AutoSourceSelector, SourceSelection, select_sources

__all__ = [
    "AutoSourceSelector",
    "SourceSelection",
    "ToolExecutor",
    "ToolOutcome",
    "get_tool",
    "list_tools",
    "select_sources",
    "tool_names",
    "tool_status",
]
