"""`ResearchGenerator`: the pipeline's one generator slot, extractive offline or any OpenAI-compatible chat server."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from haystack import Document, component, logging
from haystack.dataclasses import ChatMessage, StreamingChunk
from haystack.utils import Secret

from components.contracts import RankedDocuments, SourceStatus, StatusKind, documents_of
from components.generation.answer_wording import ABSTENTION_PREFIX
from components.generation.cited_answer_builder import CITATION_MARK
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from components.generation.question_analysis import QuestionAnalysis
from components.generation.question_analyzer import QuestionAnalyzer
from components.resilience import ResiliencePolicy, SourceGuard, SourceResult
from components.resilience.budget import question_deadline
from components.resilience.guard import BreakerPolicy, GuardedComponent
from components.resilience.scheduling import alone_on_loop, async_twin
from components.resilience.transport import capped_client_kwargs
from components.settings import get_settings
from components.text.language import use_language_pipeline
from components.validation import within

logger = logging.getLogger(__name__)

GENERATORS = ("extractive", "openai")
STATUS_SOURCE = "generator"
# Kept from the question's budget for the extractive fallback and the steps after the generator.
FALLBACK_RESERVE_S = 1.0


@component
class ResearchGenerator(GuardedComponent):
    """Turns the numbered-sources prompt into an answer, with the generator the settings choose.

    `generator="extractive"` (the offline default) composes the answer from the chunks' best sentences;
    `generator="openai"` sends the prompt to an OpenAI-compatible chat server (OpenAI, Ollama, vLLM, llama.cpp)
    through Haystack's `OpenAIChatGenerator`, with the key read from the `OPENAI_API_KEY` environment variable.
    Left empty, `generator`, `model` and `api_base_url` come from the settings (`GENERATOR`, `OPENAI_MODEL`,
    `OPENAI_BASE_URL`) at `warm_up`. The chat call runs under the tool contract (timeout, retries honouring
    Retry-After, circuit breaker) and within the question's budget less a second kept for the fallback; when it
    fails the answer falls back to the extractive one and `status` says why, so a question always gets an answer.
    A `streaming_callback` receives the answer as it is produced.

    Usage:
    ```python
    generator = ResearchGenerator()  # GENERATOR=extractive|openai decides
    generator.warm_up()
    result = generator.run(messages=prompt, documents=ranked, query="Who won?")
    result["replies"][0], result["status"].status
    ```
    """

    def __init__(
        self,
        generator: str | None = None,
        model: str | None = None,
        api_base_url: str | None = None,
        timeout_s: float = 60.0,
        retries: int = 1,
        generation_kwargs: dict[str, Any] | None = None,
        max_sentences: int = 3,
        max_response_bytes: int | None = None,
        confidence_model: str = "",
        confidence_threshold: float | None = None,
        scoring_model: str = "",
        embedding_model: str | None = None,
        spacy_model: str | None = None,
        breaker: BreakerPolicy | dict[str, Any] | None = None,
    ) -> None:
        """
        :param generator: `extractive` or `openai`; empty takes the `GENERATOR` setting.
        :param model: the chat model; empty takes `OPENAI_MODEL`.
        :param api_base_url: the chat server's URL (ending in /v1); empty takes `OPENAI_BASE_URL` (or OpenAI's).
        :param timeout_s: how long one chat call may take (0-600 s).
        :param retries: retries of retryable faults (429, 5xx, timeouts), 0-3.
        :param generation_kwargs: extra chat parameters (temperature, max_tokens, ...).
        :param max_sentences: the extractive answer's length in sentences.
        :param max_response_bytes: the largest answer read from the chat server; empty takes `UPSTREAM_MAX_BYTES`.
        :param confidence_model: the extractive answer's confidence model file (empty: the packaged one).
        :param confidence_threshold: the confidence its short answer needs to lead the answer (None: the model's).
        :param scoring_model: the extractive answer's sentence and span weights file (empty: the packaged one).
        :param embedding_model: the extractive answer's sentence embedding model; None takes `EMBEDDING_MODEL`.
        :param spacy_model: the spaCy pipeline the answer's sentences, entities and parses come from; None takes
            `SPACY_MODEL`.
        :param breaker: the chat model's circuit breaker (`BreakerPolicy.from_settings`: None takes the settings).
            (A chat answer is never cached: `CACHE_TTL_S` does not apply.)
        """
        # Empty or None takes the setting in force as the generator is built (GENERATOR, OPENAI_MODEL,
        # OPENAI_BASE_URL, UPSTREAM_MAX_BYTES, EMBEDDING_MODEL, SPACY_MODEL, BREAKER_*); `to_dict` writes the values
        # used. The key stays an env-var secret.
        settings = get_settings()
        generator = generator or settings.generator
        model = model or settings.openai_model
        api_base_url = api_base_url or settings.openai_base_url
        self.max_response_bytes = max_response_bytes if max_response_bytes is not None else settings.upstream_max_bytes
        if generator is not None and generator not in GENERATORS:
            raise ValueError(f"generator must be one of {', '.join(GENERATORS)}, not {generator!r}")
        if not 0 < timeout_s <= 600:
            raise ValueError("timeout_s must be between 0 and 600 seconds")
        within("retries", retries, 0, 3)
        self.generator = generator
        self.model = model
        self.api_base_url = api_base_url
        self.timeout_s = float(timeout_s)
        self.retries = int(retries)
        self.generation_kwargs = dict(generation_kwargs or {})
        self.max_sentences = max_sentences
        self.confidence_model = confidence_model
        self.confidence_threshold = confidence_threshold
        self.scoring_model = scoring_model
        self.embedding_model = embedding_model or settings.embedding_model
        self.spacy_model = spacy_model or settings.spacy_model
        self.breaker = BreakerPolicy.from_settings(breaker)
        self._extractive = ExtractiveAnswerGenerator(
            embedding_model=self.embedding_model,
            max_sentences=max_sentences,
            confidence_model=confidence_model,
            confidence_threshold=confidence_threshold,
            scoring_model=scoring_model,
        )
        self._chat: Any = None
        self._chat_problem: str | None = None
        self._kind: str | None = None
        self._guard: SourceGuard | None = None

    @property
    def kind(self) -> str:
        """The generator in use (`extractive` or `openai`), known after `warm_up`."""
        self.warm_up()
        assert self._kind is not None
        return self._kind

    def unread_inputs(self) -> frozenset[str]:
        """The inputs this generator's runs never read: the prompt (`messages`) when it answers extractively (no chat
        model chosen), known from the start (no warm-up). A catalog leaves out of the runs of a selection of sources
        what feeds only such inputs (the prompt builder: about 0.7 ms a question of rendering, copies and scheduling;
        `unread_senders`); a run with every source keeps it."""
        return frozenset({"messages"}) - self.needed_inputs()

    def made_inputs(self) -> dict[str, tuple[str, type]]:
        """The optional inputs this generator's runs make themselves when not given, each with the input it is made
        from and the component whose output it then equals: the question's `analysis`, which the extractive answer
        (the chat model's fallback too) makes from `query` as the `QuestionAnalyzer` does (`analyze_question`, cached
        per process). A catalog leaves out of a selection's runs a question analyzer fed the same question whose
        every other reader is left out too (`unread_senders`: the prompt builder of an extractive generator): its
        stage, copies and scheduling pass for a value made the same way."""
        return {"analysis": ("query", QuestionAnalyzer)}

    def needed_inputs(self) -> frozenset[str]:
        """The optional inputs this generator's runs need fed all the same: the prompt (`messages`) of a chat model,
        known from the start. A catalog refuses a pipeline where nothing feeds them (`check_sockets`), as it refuses
        one leaving a mandatory input unfed; run without its prompt, a chat model would fail over to the extractive
        answer on every question."""
        return frozenset({"messages"}) if self.generator == "openai" else frozenset()

    def warm_up(self) -> None:
        """Build the chat client of the chosen generator (no network call); idempotent."""
        if self._kind is not None:
            return
        use_language_pipeline(self.spacy_model)
        kind = self.generator
        if kind == "openai":
            from haystack.components.generators.chat import OpenAIChatGenerator

            api_key = Secret.from_env_var("OPENAI_API_KEY", strict=False)
            if api_key.resolve_value() is None:
                self._chat_problem = "OPENAI_API_KEY is not set, so the chat generator cannot run"
            else:
                # Our guard retries (honouring Retry-After); the client must not retry underneath it.
                self._chat = OpenAIChatGenerator(
                    api_key=api_key,
                    model=self.model,
                    api_base_url=self.api_base_url,
                    generation_kwargs=self.generation_kwargs or None,
                    timeout=self.timeout_s,
                    max_retries=0,
                    http_client_kwargs=capped_client_kwargs(self.max_response_bytes, "the chat model"),
                )
            self._guard = SourceGuard(
                STATUS_SOURCE,
                ResiliencePolicy(
                    timeout_s=self.timeout_s,
                    retries=self.retries,
                    breaker_failures=self.breaker.failures,
                    breaker_cooldown_s=self.breaker.cooldown_s,
                    cache_ttl_s=0.0,
                ),
            )
        self._kind = kind

    @component.output_types(
        replies=list[str], short_answer=str, status=SourceStatus, short_answer_confidence=float | None, parts=list[dict]
    )
    def run(
        self,
        documents: list[Document] | RankedDocuments,
        query: str,
        streaming_callback: Callable[[StreamingChunk], None] | None = None,
        analysis: QuestionAnalysis | dict | None = None,
        messages: list[ChatMessage] | None = None,
    ) -> dict[str, Any]:
        """Answer the question.

        :param messages: the prompt (numbered sources, the question and its analysis) for a chat model; read only
            when the generator is one (`unread_inputs`), and a chat model given none fails over to the extractive
            answer.
        :param documents: the numbered chunks, for the extractive answer and the fallback (a list, or the ranker's
            `RankedDocuments`).
        :param query: the question.
        :param streaming_callback: called with each piece of the answer as it arrives.
        :param analysis: the question's analysis (`QuestionAnalyzer`, or its `to_dict()`); the extractive answer
            makes it when absent.
        :returns: `replies`: the answer text (one string); `short_answer`: the name, date, number or place that
            leads the answer (empty when there is none); `status`: how generation went (source `generator`);
            `short_answer_confidence` and `parts`: the extractive answer's (`ExtractiveAnswerGenerator.run`); a chat
            model's answer has no confidence (None) and no parts.
        """
        self.warm_up()
        started = time.monotonic()
        documents = documents_of(documents)
        if self._kind != "openai":
            return self._fallback(query, documents, analysis, streaming_callback, started)
        if self._chat is None:
            return self._fallback(query, documents, analysis, streaming_callback, started, self._chat_problem or "")
        replies: list[str] = []
        deadline = question_deadline()
        if deadline is not None:
            deadline -= FALLBACK_RESERVE_S

        def work() -> SourceResult:
            # The client's own timeout follows the budget, so an abandoned call does not hold its thread long.
            left = self.timeout_s
            if deadline is not None:
                left = max(0.1, min(left, deadline - time.monotonic()))
            if not messages:
                raise ValueError("no prompt was given for the chat model")
            result = self._chat.run(
                messages=messages, streaming_callback=streaming_callback, generation_kwargs={"timeout": left}
            )
            texts = [message.text for message in result.get("replies", []) if message.text]
            if not texts:
                raise ValueError("the chat server returned no answer text")
            replies[:] = texts
            return SourceResult(total_found=len(texts))

        assert self._guard is not None
        _, status = self._guard.call(work, deadline=deadline)
        if status.ok and replies:
            return {
                "replies": replies[:1],
                "short_answer": leading_short_answer(replies[0]),
                "status": status,
                "short_answer_confidence": None,
                "parts": [],
            }
        return self._fallback(query, documents, analysis, streaming_callback, started, status.message, status.status)

    run_async = async_twin(run, inline=alone_on_loop)  # in a worker thread unless the question has the loop to itself

    def _fallback(
        self,
        query: str,
        documents: list[Document],
        analysis: QuestionAnalysis | dict[str, Any] | None,
        streaming_callback: Callable[[StreamingChunk], None] | None,
        started: float,
        reason: str | None = None,
        kind: StatusKind = StatusKind.ERROR,
    ) -> dict[str, Any]:
        """The extractive answer: the generator chosen (`reason` None), or the fallback when the chat model failed."""
        if reason is None:
            kind, note = StatusKind.SUCCESS, "extractive answer"
        else:
            logger.warning("Chat generation failed, answering extractively: {reason}", reason=reason)
            note = f"the chat model failed ({reason}); this is an extractive answer instead"
        answer = self._extractive.run(query=query, documents=documents, analysis=analysis)
        if streaming_callback is not None:
            # An answer produced at once reaches a streaming callback as one final chunk.
            streaming_callback(StreamingChunk(content=answer["replies"][0], finish_reason="stop"))
        status = SourceStatus(
            source=STATUS_SOURCE,
            status=kind,
            execution_time_ms=round((time.monotonic() - started) * 1000.0, 3),
            total_found=int(reason is None),
            message=note,
        )
        return {
            "replies": answer["replies"],
            "short_answer": answer["short_answer"],
            "status": status,
            "short_answer_confidence": answer["short_answer_confidence"],
            "parts": answer["parts"],
        }


def leading_short_answer(reply: str) -> str:
    """A chat answer's first line when it is a short answer on its own (the prompt asks for one), without its
    citations; empty when the reply opens with a full sentence or abstains."""
    lines = [line.strip() for line in (reply or "").strip().splitlines() if line.strip()]
    if len(lines) < 2:
        return ""
    first = CITATION_MARK.sub(" ", lines[0])
    first = re.sub(r"^(?:\*\*)?(?:short answer|answer)\s*:\s*(?:\*\*)?", "", first.strip(), flags=re.IGNORECASE)
    first = " ".join(first.replace("**", "").split()).strip(" .;")
    if not first or first.startswith(ABSTENTION_PREFIX) or len(first.split()) > 15:
        return ""
    return first
