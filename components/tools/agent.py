"""A Haystack `Agent` over every tool the profile enables, each a `ComponentTool` around a `GuardedTool`."""

from __future__ import annotations

from typing import Any

from haystack.components.agents import Agent
from haystack.tools import ComponentTool
from haystack.utils import Secret

from components.tools.guarded_tool import GuardedTool
from components.tools.profiles import ToolProfiles, load_profiles
from components.tools.registry import get_tool, tool_names

DEFAULT_SYSTEM_PROMPT = (
    "You are a research assistant for an analyst. Use the tools when they help: compute with the calculator rather "
    "than guessing, read the workspace files you are pointed to, and look facts up rather than inventing them. "
    "If a tool reports an error status, say so plainly instead of making up its result."
)


def agent_tools(profile: str | None = None, profiles: ToolProfiles | None = None) -> list[ComponentTool]:
    """A `ComponentTool` for every tool `profile` (default: TOOL_PROFILE) enables, all run through the executor."""
    from components.settings import get_settings

    profiles = profiles or load_profiles()
    profile = profile or get_settings().tool_profile
    profiles.require_profile(profile)
    tools = []
    for name in tool_names():
        if not profiles.granted(profile, name):
            continue
        spec = get_tool(name)
        tools.append(
            ComponentTool(
                component=GuardedTool(tool=name, profile=profile),
                name=name,
                description=spec.description,
                parameters=spec.input_schema,
            )
        )
    return tools


def chat_generator_from_settings(timeout_s: float | None = None) -> Any:
    """The OpenAI-compatible chat generator the settings describe; ValueError (one sentence) when not configured."""
    from haystack.components.generators.chat import OpenAIChatGenerator

    from components.settings import get_settings

    settings = get_settings()
    if settings.openai_api_key is None:
        raise ValueError(
            "No tool-calling chat model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a "
            "local server; any key works there)."
        )
    return OpenAIChatGenerator(
        api_key=Secret.from_env_var("OPENAI_API_KEY"),
        model=settings.openai_model,
        api_base_url=settings.openai_base_url,
        timeout=timeout_s or settings.question_budget_s,
        max_retries=settings.tool_retries,
    )


def build_tool_agent(
    profile: str | None = None,
    chat_generator: Any = None,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    max_agent_steps: int = 8,
) -> Agent:
    """An `Agent` that may call every tool `profile` enables; `chat_generator` defaults to the settings' model.

    Usage:
    ```python
    agent = build_tool_agent(profile="analyst")
    agent.warm_up()
    reply = agent.run(messages=[ChatMessage.from_user("What is 17% of 2,340?")])["last_message"].text
    ```
    """
    if max_agent_steps < 1:
        raise ValueError("max_agent_steps must be at least 1")
    return Agent(
        chat_generator=chat_generator or chat_generator_from_settings(),
        tools=agent_tools(profile),
        system_prompt=system_prompt,
        max_agent_steps=max_agent_steps,
    )
