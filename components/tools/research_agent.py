"""`ResearchAgent`: a Haystack `Agent` over the tools the manager chooses for a question, whose answer cites the
chunks its tool calls returned as [n] and goes through the research pipeline's citation check."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from haystack import Document, component, logging
from haystack.components.agents import Agent
from haystack.components.agents.state.state_utils import replace_values
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool

from components.contracts import ContextChunk, SourceStatus, StatusKind, chunk_to_document
from components.generation.citation_checker import CitationChecker
from components.generation.cited_answer_builder import cited_numbers
from components.graph.factory import graph_store_from_settings
from components.graph.tools import GraphTools
from components.redaction import cut
from components.resilience.errors import first_line
from components.resilience.transport import capped_client_kwargs
from components.serialization import InitParameterSerialization
from components.settings import Settings, get_settings, setting_or
from components.tools.executor import ToolExecutor
from components.tools.profiles import ToolProfiles, load_profiles
from components.tools.registry import get_tool, tool_names
from components.tools.tool_selection import ToolSelection, select_tools
from components.validation import positive_int, within

logger = logging.getLogger(__name__)

SOURCE = "research_agent"
MAX_TEXT_CHARS = 4000

NO_CHAT_MODEL = (
    "No tool-calling chat model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a local server; any key "
    "works there)."
)

SYSTEM_PROMPT = (
    "You are a research assistant for an analyst. Answer from evidence the tools return, never from memory. "
    "Every evidence item in a tool result carries a `cite` mark such as [3]: after every sentence of your answer, "
    "cite the items that support it with their marks, for example [1] or [2][5], and cite no other numbers. "
    "If a tool reports an error, a refusal or a timeout, say so plainly instead of guessing its result; if its "
    "arguments were invalid, fix them and call it again. If the evidence does not answer the question, say so "
    "in one sentence. Be concise."
)


def chat_generator_from_settings(timeout_s: float | None = None) -> Any:
    """The OpenAI-compatible chat generator the settings describe, each of its calls given `timeout_s` (None:
    QUESTION_BUDGET_S); ValueError (one sentence) when not configured."""
    settings = get_settings()
    if settings.openai_api_key is None:
        raise ValueError(NO_CHAT_MODEL)
    return chat_generator_for(
        model=settings.openai_model,
        api_base_url=settings.openai_base_url,
        timeout_s=timeout_s if timeout_s is not None else settings.question_budget_s,
        retries=settings.tool_retries,
        max_response_bytes=settings.upstream_max_bytes,
    )


def chat_generator_for(
    model: str, api_base_url: str | None, timeout_s: float, retries: int, max_response_bytes: int
) -> Any:
    """The OpenAI-compatible chat generator at `api_base_url` (None: OpenAI's) answering with `model`, its key the
    OPENAI_API_KEY environment variable's (read by the generator, never written anywhere)."""
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.utils import Secret

    return OpenAIChatGenerator(
        api_key=Secret.from_env_var("OPENAI_API_KEY"),
        model=model,
        api_base_url=api_base_url,
        timeout=timeout_s,
        max_retries=retries,
        http_client_kwargs=capped_client_kwargs(max_response_bytes, "the chat model"),
    )


class _OpenGraph:
    """`choose_tools`' default lookup: the settings' graph, opened for the call."""


OPEN_GRAPH = _OpenGraph()


def choose_tools(
    question: str,
    profile: str | None = None,
    conversation: Iterable[Any] | None = None,
    profiles: ToolProfiles | None = None,
    known_entities: Callable[[str], list[str]] | _OpenGraph | None = OPEN_GRAPH,
) -> ToolSelection:
    """The manager's choice for `question`: among the tools `profile` (default: TOOL_PROFILE) is granted, those
    the question and the conversation call for, with reasons. The graph's entities are looked up with
    `known_entities` (an agent passes the lookup it made when built; None: no graph, the choice is made from
    words), by default over the settings' graph when it opens (`research tools choose`)."""
    profiles = profiles or load_profiles()
    profile = profiles.require_profile(profile or None)
    granted = [name for name in tool_names() if profiles.granted(profile, name)]
    if isinstance(known_entities, _OpenGraph):
        lookup = _entity_lookup()
        if lookup is None:
            logger.warning("The graph cannot name entities for the tool choice: {reason}", reason=_no_graph())
    else:
        lookup = known_entities
    return select_tools(question, conversation=conversation, available=granted, known_entities=lookup)


def _no_graph(settings: Settings | None = None) -> str:
    """Why `settings` (None: those in force) name no graph to look entities up in, in one sentence; "" when they
    name one."""
    try:
        graph_store_from_settings(settings=settings)
    except Exception as exc:  # noqa: BLE001 - any reason the store cannot be made is said, never raised
        return cut(first_line(exc), 200)
    return ""


def _entity_lookup(settings: Settings | None = None) -> Callable[[str], list[str]] | None:
    """A `known_entities` function over the knowledge graph `settings` (None: those in force) choose: the entities
    a text names (exact, alias, within or mention matches only, so a loose fuzzy match does not send every question
    to the graph); None when they name no usable graph (the choice is then made from words; `_no_graph` says why).
    The store is made now and opened when first asked."""
    try:
        return _EntityLookup(GraphTools(graph_store_from_settings(settings=settings)))
    except Exception:  # noqa: BLE001 - no graph: the choice is made from the words alone
        return None


class _EntityLookup:
    """The entities a text names in one graph (`tools.store`)."""

    def __init__(self, tools: GraphTools) -> None:
        self.tools = tools

    def __call__(self, text: str) -> list[str]:
        matches = self.tools.entity_matches(text[:1000], limit=5)
        return [match.entity.name for match in matches if match.match in ("exact", "alias", "within", "mention")]


def _annotate(value: Any, numbers: dict[str, int]) -> Any:
    """`value` with a `cite` mark on every evidence item whose id (or fact uuid, or chunk id) was numbered, long
    texts shortened, and the query embedding and a document's full text (when its chunks are there) left out:
    what the model reads of a tool result."""
    if isinstance(value, dict):
        out = {key: _annotate(item, numbers) for key, item in value.items() if key != "query_embedding_used"}
        if isinstance(out.get("document"), dict) and out.get("chunks"):
            out["document"] = {key: item for key, item in out["document"].items() if key != "text"}
        for key in ("id", "uuid", "chunk_id"):
            number = numbers.get(str(value.get(key))) if value.get(key) is not None else None
            if number is not None:
                out["cite"] = f"[{number}]"
                break
        return out
    if isinstance(value, list):
        return [_annotate(item, numbers) for item in value]
    return value[:MAX_TEXT_CHARS] + " …" if isinstance(value, str) and len(value) > MAX_TEXT_CHARS else value


class _AgentRun:
    """One question's tool calls: each through the executor, its evidence numbered in order of first appearance,
    invalid arguments counted per tool (a tool called `max_invalid` times with invalid arguments is not run again)."""

    def __init__(self, executor: ToolExecutor, max_invalid: int) -> None:
        self.executor = executor
        self.max_invalid = max_invalid
        self.evidence: list[ContextChunk] = []
        self.numbers: dict[str, int] = {}
        self.calls: list[dict[str, Any]] = []
        self.invalid: dict[str, int] = {}

    def call(self, name: str, arguments: Any) -> str:
        started = time.monotonic()
        arguments = arguments if isinstance(arguments, dict) else {}
        if self.invalid.get(name, 0) >= self.max_invalid:
            message = (
                f"{name} was called with invalid arguments {self.invalid[name]} times; it is not run again for "
                "this question."
            )
            status = SourceStatus(source=name, status=StatusKind.ERROR, execution_time_ms=0.0, message=message)
            self._record(name, arguments, status, started, 0)
            return json.dumps({"status": "error", "message": message})
        _, fault, _ = self.executor.check(name, arguments)
        outcome = self.executor.run(name, arguments)
        for chunk in outcome.chunks:
            if chunk.id not in self.numbers:
                self.evidence.append(chunk)
                self.numbers[chunk.id] = len(self.evidence)
        payload = {"status": outcome.status.status.value, "message": outcome.status.message}
        if fault == "invalid_input":
            self.invalid[name] = self.invalid.get(name, 0) + 1
            left = self.max_invalid - self.invalid[name]
            payload["retry"] = (
                f"fix the arguments to match the tool's schema and call it again ({left} attempt(s) left)"
                if left > 0
                else "no attempts left: answer without this tool"
            )
        if outcome.output is not None:
            payload["result"] = _annotate(outcome.output, self.numbers)
        self._record(name, arguments, outcome.status, started, len(outcome.chunks))
        return json.dumps(payload, default=str)

    def _record(self, name: str, arguments: dict, status: SourceStatus, started: float, found: int) -> None:
        self.calls.append(
            {
                "tool": name,
                "arguments": arguments,
                "status": status.status.value,
                "message": status.message,
                "ms": round((time.monotonic() - started) * 1000.0, 1),
                "from_cache": status.from_cache,
                "chunks": found,
            }
        )

    def tool(self, name: str) -> Tool:
        spec = get_tool(name)

        def invoke(**arguments: Any) -> str:
            return self.call(name, arguments)

        return Tool(name=name, description=spec.description, parameters=spec.input_schema, function=invoke)


class _StrayToolCalls:
    """A `before_tool` hook: a call of a tool the model was not offered goes through the executor too, so a tool
    the profile does not grant is refused with its authorisation error (an unknown one with the known names)."""

    allowed_hook_points = ("before_tool",)

    def __init__(self, run: _AgentRun) -> None:
        self._run = run

    def run(self, state: Any) -> None:
        messages = state.data.get("messages") or []
        if not messages or not messages[-1].tool_calls:
            return
        offered = {tool.name for tool in state.data.get("tools") or []}
        last = messages[-1]
        stray = [call for call in last.tool_calls if call.tool_name not in offered]
        if not stray:
            return
        kept = [call for call in last.tool_calls if call.tool_name in offered]
        rewritten = [*messages[:-1], ChatMessage.from_assistant(text=last.text, tool_calls=stray)]
        for call in stray:
            result = self._run.call(call.tool_name, call.arguments)
            rewritten.append(ChatMessage.from_tool(tool_result=result, origin=call, error=True))
        if kept:
            rewritten.append(ChatMessage.from_assistant(tool_calls=kept))
        state.set("messages", rewritten, handler_override=replace_values)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "components.tools.research_agent._StrayToolCalls", "init_parameters": {}}


def _messages(conversation: Iterable[Any] | None, question: str) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    for turn in conversation or []:
        if isinstance(turn, ChatMessage):
            messages.append(turn)
        elif isinstance(turn, dict) and isinstance(turn.get("content"), str):
            if turn.get("role") == "assistant":
                messages.append(ChatMessage.from_assistant(turn["content"]))
            elif turn.get("role") == "user":
                messages.append(ChatMessage.from_user(turn["content"]))
    messages.append(ChatMessage.from_user(question))
    return messages


def _outputs(
    selection: ToolSelection,
    run: _AgentRun | None,
    started: float,
    message: str,
    kind: StatusKind = StatusKind.ERROR,
    answer: str = "",
    documents: list[Document] | None = None,
    sentences: list[dict] | None = None,
) -> dict[str, Any]:
    """`ResearchAgent.run`'s outputs, its status timed from `started` (a failed run: no answer, no evidence);
    cited numbers no chunk has are set apart as invalid."""
    documents = documents or []
    status = SourceStatus(
        source=SOURCE,
        status=kind,
        execution_time_ms=(time.monotonic() - started) * 1000.0,
        total_found=len(documents),
        message=message,
    )
    cited = sorted(set(cited_numbers(answer)))
    return {
        "answer": answer,
        "chunks": documents,
        "citations": [n for n in cited if 1 <= n <= len(documents)],
        "invalid_citations": [n for n in cited if not 1 <= n <= len(documents)],
        "sentences": sentences or [],
        "tool_calls": run.calls if run else [],
        "selection": selection.to_dict(),
        "status": status,
    }


@component
class ResearchAgent(InitParameterSerialization):
    """Answers a question with a tool-calling chat model over the research tools the manager chooses for it.

    The manager (`choose_tools`) picks, among the tools the profile grants, those the question and conversation
    call for; a Haystack `Agent` with `chat_generator` (default: the settings' chat model, OPENAI_API_KEY /
    OPENAI_BASE_URL / OPENAI_MODEL) calls them, every call through the `ToolExecutor` (grants, validation,
    timeout, retries, breaker, cache, telemetry). The chunks the calls return are numbered in order; the answer
    cites them as [n] and goes through the `CitationChecker`. Never raises on a failing model or tool: `status`
    says what happened.

    Usage:
    ```python
    agent = ResearchAgent(profile="analyst")
    agent.warm_up()
    result = agent.run(question="When did pgvector add HNSW indexes?")
    result["answer"], result["chunks"], result["tool_calls"], result["sentences"]
    ```
    """

    def __init__(
        self,
        profile: str | None = None,
        chat_generator: Any = None,
        max_agent_steps: int = 8,
        max_invalid_calls: int = 3,
        min_support: float = 0.5,
        system_prompt: str = SYSTEM_PROMPT,
        timeout_s: float | None = None,
        model: str | None = None,
        api_base_url: str | None = None,
        retries: int | None = None,
        max_response_bytes: int | None = None,
    ) -> None:
        """:param timeout_s: how long the settings' chat model may take over a call (the catalog gives the research
            pipeline's whole-question budget); None: QUESTION_BUDGET_S. Unused when `chat_generator` is given.
        :param model: the chat model; None: OPENAI_MODEL. Unused when `chat_generator` is given (as are the next).
        :param api_base_url: the chat server's URL (ending in /v1); None: OPENAI_BASE_URL (or OpenAI's).
        :param retries: the chat model's retries of retryable faults, 0-3; None: TOOL_RETRIES.
        :param max_response_bytes: the largest answer read from the chat server; None: UPSTREAM_MAX_BYTES."""
        if timeout_s is not None and (isinstance(timeout_s, bool) or not 0 < float(timeout_s) <= 600):
            raise ValueError(f"timeout_s must be seconds in (0, 600], or None for QUESTION_BUDGET_S, not {timeout_s!r}")
        # None: the setting in force when the agent is built; `to_dict` writes the values used, so an exported
        # pipeline talks to the same chat model wherever it is loaded (the key stays OPENAI_API_KEY's).
        settings = get_settings()  # those in force: the catalog's or the server's while they build the agent
        self.timeout_s = float(setting_or(timeout_s, "question_budget_s"))
        self.model = model or settings.openai_model
        self.api_base_url = api_base_url or settings.openai_base_url
        self.retries = within("retries", setting_or(retries, "tool_retries"), 0, 3, whole=True)
        self.max_response_bytes = positive_int(
            "max_response_bytes", setting_or(max_response_bytes, "upstream_max_bytes")
        )
        self.max_agent_steps = positive_int("max_agent_steps", max_agent_steps)
        self.max_invalid_calls = positive_int("max_invalid_calls", max_invalid_calls)
        self.min_support = within("min_support", min_support, 0, 1)
        # The profiles (TOOL_PROFILES_FILE) and, for None, TOOL_PROFILE are read now, when the agent is built.
        self._profiles = load_profiles(settings)
        self.profile = self._profiles.require_profile(profile)
        self.system_prompt = system_prompt
        self.chat_generator = chat_generator
        self._checker = CitationChecker(min_support=min_support)
        self._generator: Any = chat_generator
        self._no_generator = ""  # why there is no chat model (OPENAI_API_KEY not set when the agent was built)
        if chat_generator is None:
            if settings.openai_api_key is None:
                self._no_generator = NO_CHAT_MODEL
            else:
                self._generator = chat_generator_for(
                    self.model, self.api_base_url, self.timeout_s, self.retries, self.max_response_bytes
                )
        # The graph's entity lookup for the tool choice, over the store the settings choose now (opened when first
        # asked); None when they name no usable graph (GRAPH_BACKEND neo4j without NEO4J_URI): the choice is then
        # made from words, and each run's status says so (building the agent, to export or validate it, is no fault).
        self._entity_lookup = _entity_lookup(settings)
        self._no_graph = _no_graph(settings) if self._entity_lookup is None else ""
        # The tools and the call log follow the same settings.
        self._executor = ToolExecutor(profile=self.profile, profiles=self._profiles, settings=settings)
        self._warmed = False

    def warm_up(self) -> None:
        """Build every tool the profile grants, with its guard (a question never builds one). Without a chat model
        configured the agent still warms up (a server can deploy it); each run then says so in its status."""
        if not self._warmed:
            self._executor.prepare()  # the granted tools, built now: a question never builds one
            self._warmed = True
        if self._generator is None:
            logger.info("The research agent has no chat model: {reason}", reason=self._no_generator)

    @component.output_types(
        answer=str,
        chunks=list[Document],
        citations=list[int],
        invalid_citations=list[int],
        sentences=list[dict],
        tool_calls=list[dict],
        selection=dict,
        status=SourceStatus,
    )
    def run(self, question: str, conversation: list[dict] | None = None) -> dict[str, Any]:
        """Answer `question`.

        :param question: the analyst's question (1-2,000 characters).
        :param conversation: the chat so far, `[{"role": "user" | "assistant", "content": ...}]`, oldest first.
        :returns: `answer`: the text with [n] citations; `chunks`: the evidence the tool calls returned, as
            Documents, [1] first; `citations`: the numbers the answer cites; `invalid_citations`: cited numbers
            no chunk has; `sentences`: the citation check per sentence; `tool_calls`: each call's tool, arguments,
            status, message and time; `selection`: the manager's choice with its reasons; `status`: the run's.
        """
        started = time.monotonic()
        text = question.strip() if isinstance(question, str) else ""
        if not text or len(text) > 2000:
            reason = "the question is empty" if not text else "the question is longer than 2,000 characters"
            return _outputs(ToolSelection(tools=[]), None, started, reason)
        if self._generator is None:
            return _outputs(ToolSelection(tools=[]), None, started, self._no_generator)
        executor = self._executor
        selection = choose_tools(
            text,
            profile=executor.profile,
            conversation=conversation,
            profiles=executor.profiles,
            known_entities=self._entity_lookup,
        )
        run = _AgentRun(executor, self.max_invalid_calls)
        agent = Agent(
            chat_generator=self._generator,
            tools=[run.tool(name) for name in selection.tools] or None,
            system_prompt=self.system_prompt,
            max_agent_steps=self.max_agent_steps,
            hooks={"before_tool": [_StrayToolCalls(run)]},
        )
        try:
            agent.warm_up()
            result = agent.run(messages=_messages(conversation, text))
        except Exception as exc:  # noqa: BLE001 - the chat server's faults become one sentence
            reason = first_line(exc, 300)
            logger.warning("The research agent's chat model failed: {reason}", reason=reason)
            return _outputs(selection, run, started, f"the chat model failed: {reason}")
        last = result.get("last_message")
        answer = (last.text or "").strip() if last is not None else ""
        documents = [chunk_to_document(chunk) for chunk in run.evidence]
        check = self._checker.run(answer=answer, documents=documents, query=text)
        message = f"{len(run.calls)} tool call(s)"
        if self._no_graph:
            message += f"; the tool choice named no graph entities ({self._no_graph})"
        return _outputs(selection, run, started, message, StatusKind.SUCCESS, answer, documents, check["sentences"])


def agent_result_json(result: dict[str, Any]) -> dict[str, Any]:
    """A `ResearchAgent` result as plain JSON: the answer, the numbered chunks with their attribution, the tool
    calls, the manager's choice, the citation check and the status (for the CLI, the server and the app)."""
    chunks = []
    for number, document in enumerate(result["chunks"], start=1):
        meta = document.meta
        chunks.append(
            {
                "n": number,
                "content": document.content,
                "source_type": meta.get("source_type"),
                "source_id": meta.get("source_id"),
                "source_title": meta.get("source_title"),
                "source_url": meta.get("source_url"),
                "source_date": str(meta["source_date"]) if meta.get("source_date") else None,
                "semantic_relevance": meta.get("semantic_relevance"),
            }
        )
    return {
        "answer": result["answer"],
        "chunks": chunks,
        "citations": list(result["citations"]),
        "invalid_citations": list(result["invalid_citations"]),
        "sentences": list(result["sentences"]),
        "tool_calls": list(result["tool_calls"]),
        "selection": dict(result["selection"]),
        "status": result["status"].to_dict(),
    }
