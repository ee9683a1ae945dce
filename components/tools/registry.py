"""The registry of every tool: name, description, JSON schemas of input and output, and how to build it.

The built-ins' schemas are derived from their components' typed sockets (inputs the way Haystack's `ComponentTool`
derives them for chat models; outputs through pydantic). The research tools (`components.tools.research_tools`)
declare their contract's schemas and an adapter from the contract's arguments to the component the pipelines run.
Either way the registry, the executor's validation, the CLI, MCP and the Agent all see the same contract.
`tool_status()` is what `research status` shows.
"""

from __future__ import annotations

from typing import Any

from components.resilience import telemetry
from components.settings import Settings, get_settings
from components.tools.calculator import Calculator
from components.tools.call_log import call_log_path, summarise_calls
from components.tools.fetch_page import FetchPage
from components.tools.list_directory import ListDirectory
from components.tools.profiles import load_profiles
from components.tools.read_file import ReadFile
from components.tools.research_tools import RESEARCH_TOOLS
from components.tools.tool_spec import ToolSpec
from components.tools.wikipedia import WikipediaSummary
from components.tools.write_file import WriteFile

_TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec("calculator", "Evaluate an arithmetic expression exactly (no code is run).", Calculator),
        # Built without a folder, the file tools read WORKSPACE_DIR (else the data folder's workspace) when they run.
        ToolSpec("read_file", "Read a UTF-8 text file from the analyst's workspace folder.", ReadFile),
        ToolSpec(
            "write_file", "Write a UTF-8 text file into the analyst's workspace folder.", WriteFile, side_effects=True
        ),
        ToolSpec("list_directory", "List the files and folders of a folder in the analyst's workspace.", ListDirectory),
        ToolSpec(
            "fetch_page",
            "Fetch one public web page over HTTP(S) and return its title and text.",
            FetchPage,
            network=True,
        ),
        ToolSpec(
            "wikipedia_summary",
            "Return the introduction of a Wikipedia article, looked up by its title.",
            WikipediaSummary,
            network=True,
        ),
        *RESEARCH_TOOLS,
    )
}


def tool_names() -> list[str]:
    """Every registered tool's name, in registration order."""
    return list(_TOOLS)


def get_tool(name: str) -> ToolSpec:
    """The spec of `name`; ValueError naming the known tools otherwise."""
    spec = _TOOLS.get(name)
    if spec is None:
        raise ValueError(f"unknown tool {name!r}; known tools: {', '.join(_TOOLS)}.")
    return spec


def list_tools(profile: str | None = None, settings: Settings | None = None) -> list[dict[str, Any]]:
    """Every tool described, with `enabled` for `profile` (default: TOOL_PROFILE) under the profiles `settings`
    (None: the process's) declare."""
    profiles = load_profiles(settings)
    profile = profiles.require_profile(profile or None)
    return [
        {
            **spec.describe(),
            "enabled": profiles.granted(profile, spec.name),
            "policy": profiles.policy_for(spec.name).to_dict(),
        }
        for spec in _TOOLS.values()
    ]


def _configured(spec: ToolSpec, settings: Settings) -> tuple[bool, str]:
    if spec.name in ("read_file", "write_file", "list_directory"):
        return True, "workspace: WORKSPACE_DIR" if settings.workspace_dir else "workspace: the data folder's workspace"
    if spec.name == "wikipedia_summary":
        return bool(settings.wikipedia_api_url), "MediaWiki API configured"
    if spec.name == "fetch_page":
        return True, "private addresses allowed" if settings.allow_private_addresses else "public addresses only"
    if spec.name == "firecrawl_search":
        configured = settings.firecrawl_api_key is not None
        return configured, "Firecrawl key set" if configured else "needs FIRECRAWL_API_KEY"
    if spec.name == "retrieve_book_content":
        return True, "knowledge base: qdrant"
    if spec.source == "kb":
        return True, f"knowledge base: {settings.kb_backend}"
    if spec.source == "graph":
        return True, f"graph: {settings.graph_backend}"
    return True, "local"


def tool_status(profile: str | None = None, settings: Settings | None = None) -> list[dict[str, Any]]:
    """For `research status`: each tool's name, whether the profile enables it, whether it is configured, telemetry.

    Each row: `name`, `enabled`, `configured`, `detail`, `telemetry` (calls, successes, failures by kind, p50/p95
    latency, cache hits): this process's counters, or the data folder's call log when this process made no call;
    None before any call. Never raises on a bad profile file: the row says so. `settings`: those the report is of
    (the profiles, the data folder's call log, what is configured; None: the process's).
    """
    settings = settings or get_settings()
    profile = profile or settings.tool_profile
    error = ""
    try:
        profiles = load_profiles(settings)
        profiles.require_profile(profile)
    except ValueError as exc:
        profiles, error = None, str(exc)
    snapshot, history = telemetry.snapshot(), summarise_calls(call_log_path(settings))
    rows = []
    for spec in _TOOLS.values():
        configured, detail = _configured(spec, settings)
        rows.append(
            {
                "name": spec.name,
                "profile": profile,
                "enabled": bool(profiles and profiles.granted(profile, spec.name)),
                "configured": configured,
                "detail": error or detail,
                "telemetry": snapshot.get(spec.name) or history.get(spec.name),
            }
        )
    return rows
