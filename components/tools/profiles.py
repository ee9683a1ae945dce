"""Tool profiles: which tools each profile is granted, and each tool's executor policy.

Built-in defaults cover the usual cases; TOOL_PROFILES_FILE (JSON or YAML) replaces or extends them:

```yaml
disabled: [fetch_page]                 # off for every profile
policy:                                # per-tool ResiliencePolicy fields
  wikipedia_summary: {timeout_s: 5, retries: 2, min_interval_s: 0.2, cache_ttl_s: 3600}
profiles:
  analyst: {tools: [calculator, read_file, list_directory, wikipedia_summary, fetch_page]}
  admin: {tools: ["*"]}
```
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from components.resilience import ResiliencePolicy
from components.resilience.errors import first_line
from components.settings import Settings, get_settings
from components.tools.research_tools import RESEARCH_TOOLS

# The research tools that read only what is on this machine (the knowledge base, the graph, memory) and those
# that go out to the network, as their specs say: a new research tool joins the profiles by its spec alone.
LOCAL_RESEARCH_TOOLS = [spec.name for spec in RESEARCH_TOOLS if not spec.network]
NETWORK_RESEARCH_TOOLS = [spec.name for spec in RESEARCH_TOOLS if spec.network]

BUILTIN_PROFILES: dict[str, list[str]] = {
    "analyst": [
        "calculator",
        "read_file",
        "write_file",
        "list_directory",
        "wikipedia_summary",
        "fetch_page",
        *LOCAL_RESEARCH_TOOLS,
        *NETWORK_RESEARCH_TOOLS,
    ],
    "reader": ["calculator", "read_file", "list_directory", "wikipedia_summary", *LOCAL_RESEARCH_TOOLS],
    "offline": ["calculator", "read_file", "write_file", "list_directory", *LOCAL_RESEARCH_TOOLS],
    "admin": ["*"],
}

# Local tools fail fast and are never retried; network tools retry, space their calls and cache answers. The
# research tools' components apply their own source policy (retries included) inside: the executor only bounds
# the whole call (a little above the component's own timeout) and caches answers briefly.
BUILTIN_POLICY: dict[str, dict[str, Any]] = {
    **{name: {"timeout_s": 10.0, "retries": 0, "cache_ttl_s": 30.0} for name in LOCAL_RESEARCH_TOOLS},
    **{name: {"timeout_s": 20.0, "retries": 0, "cache_ttl_s": 300.0} for name in NETWORK_RESEARCH_TOOLS},
    "calculator": {"timeout_s": 2.0, "retries": 0},
    "read_file": {"timeout_s": 5.0, "retries": 0},
    "write_file": {"timeout_s": 5.0, "retries": 0},
    "list_directory": {"timeout_s": 5.0, "retries": 0},
    "fetch_page": {"timeout_s": 7.0, "retries": 2, "min_interval_s": 0.2, "cache_ttl_s": 300.0},
    "wikipedia_summary": {"timeout_s": 7.0, "retries": 2, "min_interval_s": 0.1, "cache_ttl_s": 3600.0},
}


@dataclass
class ToolProfiles:
    """Grants per profile, tools switched off everywhere, and per-tool policy overrides."""

    profiles: dict[str, list[str]] = field(default_factory=lambda: {k: list(v) for k, v in BUILTIN_PROFILES.items()})
    disabled: list[str] = field(default_factory=list)
    policy: dict[str, dict[str, Any]] = field(default_factory=lambda: {k: dict(v) for k, v in BUILTIN_POLICY.items()})
    # The profile a caller naming none gets; None: TOOL_PROFILE, read as the profiles are made.
    default_profile: str | None = None
    # The settings whose policy defaults (TOOL_TIMEOUT_S, TOOL_RETRIES, BREAKER_*, CACHE_TTL_S) and TOOL_PROFILE the
    # profiles take as they are made; None: those in force.
    settings: Settings | None = field(default=None, repr=False, compare=False)

    def granted(self, profile: str, tool: str) -> bool:
        """True when `profile` may call `tool` (and the tool is not disabled everywhere)."""
        tools = self.profiles.get(profile, [])
        return tool not in self.disabled and ("*" in tools or tool in tools)

    def __post_init__(self) -> None:
        # The settings' defaults are read once, when the profiles are made (a pipeline or the CLI being built), so a
        # tool's policy never follows a setting changed while the pipeline runs.
        settings = self.settings or get_settings()
        self._defaults = ResiliencePolicy.from_settings(settings)
        if self.default_profile is None:
            self.default_profile = settings.tool_profile

    def policy_for(self, tool: str) -> ResiliencePolicy:
        """The executor policy of `tool`: the settings' defaults as the profiles were made, then the tool's
        overrides."""
        overrides = {key: value for key, value in self.policy.get(tool, {}).items() if value is not None}
        return replace(self._defaults, **overrides)

    def require_profile(self, profile: str | None = None) -> str:
        """`profile` (None: the default profile, TOOL_PROFILE as the profiles were made), or ValueError naming the
        known profiles when it is not one."""
        if profile is None:
            profile = self.default_profile
        if profile not in self.profiles:
            raise ValueError(f"unknown tool profile {profile!r}; known profiles: {', '.join(sorted(self.profiles))}.")
        return profile

    @classmethod
    def from_mapping(
        cls, data: dict[str, Any], default_profile: str | None = None, settings: Settings | None = None
    ) -> ToolProfiles:
        """Built-ins extended by `data` (the file's content), their policy defaults `settings`' (None: those in
        force); ValueError for a malformed declaration."""
        if not isinstance(data, dict):
            raise ValueError("the tool profiles file must hold a mapping with profiles, policy and disabled.")
        result = cls(default_profile=default_profile, settings=settings)
        for name, spec in (data.get("profiles") or {}).items():
            tools = spec.get("tools") if isinstance(spec, dict) else spec
            if not isinstance(tools, list) or not all(isinstance(tool, str) for tool in tools):
                raise ValueError(f"profile {name!r} must list its tools by name.")
            result.profiles[str(name)] = list(tools)
        disabled = data.get("disabled") or []
        if not isinstance(disabled, list):
            raise ValueError("disabled must be a list of tool names.")
        result.disabled = [str(tool) for tool in disabled]
        for tool, overrides in (data.get("policy") or {}).items():
            if not isinstance(overrides, dict):
                raise ValueError(f"the policy of {tool!r} must be a mapping of ResiliencePolicy fields.")
            merged = {**result.policy.get(str(tool), {}), **overrides}
            try:
                ResiliencePolicy(**merged)
            except TypeError as exc:
                raise ValueError(f"the policy of {tool!r} has an unknown field: {exc}.") from None
            result.policy[str(tool)] = merged
        return result

    @classmethod
    def load(
        cls, path: Path | None, default_profile: str | None = None, settings: Settings | None = None
    ) -> ToolProfiles:
        """The profiles declared in `path` (JSON or YAML), or the built-ins when `path` is None; their policy
        defaults `settings`' (None: those in force)."""
        if path is None:
            return cls(default_profile=default_profile, settings=settings)
        if not path.is_file():
            raise ValueError(f"TOOL_PROFILES_FILE {path} does not exist.")
        text = path.read_text(encoding="utf-8")
        try:
            data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as exc:
            raise ValueError(f"TOOL_PROFILES_FILE {path.name} is not valid JSON/YAML: {first_line(exc)}") from None
        return cls.from_mapping(data or {}, default_profile, settings)


def load_profiles(settings: Settings | None = None) -> ToolProfiles:
    """The profiles `settings` (None: the process's) declare (TOOL_PROFILES_FILE), TOOL_PROFILE their default."""
    settings = settings or get_settings()
    return ToolProfiles.load(settings.tool_profiles_file, settings.tool_profile, settings)
