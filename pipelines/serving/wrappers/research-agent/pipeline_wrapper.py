"""Hayhooks wrapper of the `research_agent` pipeline: `POST /research-agent/run`, the OpenAI-compatible chat model
`research-agent` and the MCP tool `research-agent`."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException

from components.tools.research_agent import agent_result_json
from pipelines.serving.catalog_wrapper import CatalogPipelineWrapper, InvalidRequest, require_text

_ROLES = ("user", "assistant")


def _conversation(messages: list[dict] | None) -> list[dict]:
    """The user and assistant turns of a chat as plain `{role, content}` (content parts joined)."""
    turns = []
    for message in messages or []:
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        if isinstance(content, str) and content.strip():
            turns.append({"role": message["role"], "content": content.strip()})
    return turns


class PipelineWrapper(CatalogPipelineWrapper):
    """The research agent over HTTP, chat and MCP."""

    pipeline_name = "research_agent"

    def _ask(self, question: str, conversation: list[dict] | None) -> dict[str, Any]:
        text = require_text(question, "question", max_chars=2000)
        outputs = self.run_catalog({"question": text, "conversation": _conversation(conversation) or None})
        status = outputs["status"]
        if not status.ok:
            # No chat model, or the model failed: the server cannot answer, the caller did nothing wrong.
            raise HTTPException(status_code=503, detail=f"research agent: {status.message}")
        return agent_result_json(outputs)

    def run_api(self, question: str, conversation: list[dict] | None = None) -> dict:
        """Answer a question with a tool-calling chat model over the research tools, citing their chunks as [n].

        :param question: The question, in plain language.
        :param conversation: The chat so far, as [{"role": "user" | "assistant", "content": "..."}], oldest first.
        :returns: The answer, the numbered chunks it may cite, every tool call (arguments, status, time), the
            tools the manager chose and why, the citation check per sentence, and the run's status.
        """
        return self._ask(question, conversation)

    def run_chat_completion(self, model: str, messages: list[dict], body: dict) -> str:
        """Answer the last user message of an OpenAI-style chat, the earlier turns as the conversation."""
        turns = _conversation(messages)
        if not turns or turns[-1]["role"] != "user":
            raise InvalidRequest("the chat has no user message to answer")
        result = self._ask(turns[-1]["content"], turns[:-1])
        lines = [result["answer"] or "The tools found nothing that answers this question."]
        cited = set(result["citations"])
        sources = [
            f"[{chunk['n']}] {chunk['source_title'] or chunk['source_id']}"
            + (f" ({chunk['source_url']})" if chunk["source_url"] else "")
            for chunk in result["chunks"]
            if chunk["n"] in cited
        ]
        if sources:
            lines.append("\n\nSources:\n" + "\n".join(sources))
        return "".join(lines)
