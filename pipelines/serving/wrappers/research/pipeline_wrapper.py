"""Hayhooks wrapper of the `research` pipeline: `POST /research/run`, the OpenAI-compatible chat endpoint
(model `research`, with streaming) and the MCP tool `research`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from haystack import logging
from haystack.dataclasses import StreamingChunk
from pydantic import StrictInt  # a JSON true is not the number 1

from components.contracts.selection import DEFAULT_SOURCES
from pipelines.catalog import check_research_request
from pipelines.research_result import ResearchResult
from pipelines.serving.catalog_wrapper import (
    CONFIGURATION_ERRORS,
    CatalogPipelineWrapper,
    InvalidRequest,
    ServerMisconfigured,
    as_payload,
    user_error_message,
)
from pipelines.serving.models import (
    ResearchFilters,
    answered_as_line,
    earlier_turns,
    format_chat_answer,
    last_user_message,
)

logger = logging.getLogger(__name__)


class PipelineWrapper(CatalogPipelineWrapper):
    """The research pipeline over HTTP, chat and MCP."""

    pipeline_name = "research"

    def _validate(self, question: str, sources: list[str] | None, as_of: str | None, top_k: int | None) -> dict:
        """The request checked as the catalog checks it, before anything is streamed; bad input is a 422."""
        try:
            return check_research_request(question, list(DEFAULT_SOURCES) if sources is None else sources, as_of, top_k)
        except ValueError as exc:
            raise InvalidRequest(str(exc)) from exc

    async def _research(self, request: dict[str, Any], streaming_callback: Any = None) -> ResearchResult:
        kwargs = {key: value for key, value in request.items() if value is not None}
        if streaming_callback is not None:
            kwargs["streaming_callback"] = streaming_callback
        try:
            return await self.catalog.research_async(**kwargs)
        except CONFIGURATION_ERRORS as exc:
            raise ServerMisconfigured(user_error_message(exc)) from exc
        except (ValueError, TypeError) as exc:
            raise InvalidRequest(user_error_message(exc)) from exc

    async def run_api_async(
        self,
        question: str,
        sources: list[str] | None = None,
        as_of: str | None = None,
        filters: ResearchFilters | None = None,
        top_k: StrictInt | None = None,
        session_id: str | None = None,
        as_typed: bool = False,
    ) -> ResearchResult:
        """Answer an analyst's question with cited evidence from the knowledge base, graph, web, arXiv and memory.

        :param question: The question, in plain language.
        :param sources: Sources to ask: kb, graph, web, arxiv, memory, auto (picked from the question) or all;
            omitted: auto.
        :param as_of: Only use what was known on this date (YYYY-MM-DD); omitted: today.
        :param filters: Restrict knowledge-base documents by type, date range or id.
        :param top_k: How many ranked chunks to keep as evidence (1-50).
        :param session_id: Conversation id; the memory source recalls earlier questions of the same session, and a
            follow-up ("Who leads it?") is rewritten against them (the result's `answered_as`).
        :param as_typed: Ask the question as typed, never rewritten as a follow-up.
        :returns: The answer, its citations, the numbered chunks, every source's status and the citation check.
        """
        request = self._validate(question, sources, as_of, top_k)
        # Hayhooks hands over the request model dumped to plain values: filters arrive as a dict.
        request["filters"] = ResearchFilters.model_validate(filters).to_catalog() if filters is not None else None
        request["session_id"] = session_id.strip() if session_id and session_id.strip() else None
        request["as_typed"] = bool(as_typed)
        return as_payload(await self._research(request))

    async def run_chat_completion_async(self, model: str, messages: list[dict], body: dict) -> str | AsyncGenerator:
        """Answer the last user message of an OpenAI-style chat with a cited answer and its sources."""
        question = last_user_message(messages)
        if not question:
            raise InvalidRequest("the chat has no user message to answer")
        request = self._validate(question, None, None, None)
        request["session_id"] = str(body.get("user") or "") or None
        # The chat's earlier messages are the conversation a follow-up is rewritten against.
        request["history"] = earlier_turns(messages)
        request["as_typed"] = bool(body.get("as_typed"))
        if not body.get("stream"):
            return format_chat_answer(await self._research(request))
        return self._stream(request)

    async def _follow_up(self, request: dict[str, Any]) -> str:
        """The request's question rewritten against its earlier turns, "" when it stands alone."""
        try:
            return await asyncio.to_thread(
                self.catalog.follow_up, request["question"], request.get("history"), request.get("session_id")
            )
        except CONFIGURATION_ERRORS as exc:
            raise ServerMisconfigured(user_error_message(exc)) from exc
        except (ValueError, TypeError) as exc:
            raise InvalidRequest(user_error_message(exc)) from exc

    async def _stream(self, request: dict[str, Any]) -> AsyncGenerator[StreamingChunk, None]:
        """Tokens as the generator produces them when it streams; else the answer in pieces once it is ready."""
        queue: asyncio.Queue[str] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def on_chunk(chunk: StreamingChunk) -> None:
            if chunk.content:
                loop.call_soon_threadsafe(queue.put_nowait, chunk.content)

        # The rewrite of a follow-up is known before any token: it opens the reply, and a later request's
        # `earlier_turns` reads the question that was answered from it.
        answered_as = "" if request.get("as_typed") else await self._follow_up(request)
        if answered_as:
            yield StreamingChunk(content=answered_as_line(answered_as))
        request = {**request, "question": answered_as or request["question"], "as_typed": True}  # rewritten once
        task = asyncio.create_task(self._research(request, streaming_callback=on_chunk))
        streamed = False
        while True:
            getter = asyncio.create_task(queue.get())
            done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                streamed = True
                yield StreamingChunk(content=getter.result())
                continue
            getter.cancel()
            break
        while not queue.empty():
            streamed = True
            yield StreamingChunk(content=queue.get_nowait())
        result = task.result()
        text = format_chat_answer(result, include_answer=not streamed)
        for piece in _pieces(text):
            yield StreamingChunk(content=piece)


def _pieces(text: str, size: int = 48) -> list[str]:
    """The text cut at word boundaries into pieces of about `size` characters (a readable stream)."""
    pieces: list[str] = []
    current = ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if len(candidate) > size and current:
            pieces.append(current + " ")
            current = word
        else:
            current = candidate
    if current:
        pieces.append(current)
    return pieces
