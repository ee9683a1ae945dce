"""`MemoryWriter`: remembers each answered question, with the entities it mentions, for later recall."""

from __future__ import annotations

import time
from typing import Any

from haystack import Document, component, logging
from haystack.dataclasses import GeneratedAnswer

from components.contracts import RankedDocuments, SourceStatus, documents_of
from components.memory.backends import MemoryComponent
from components.memory.store import (
    MAX_QUERY_CHARS,
    Interaction,
    memory_chunk_text,
    summarise_answer,
)
from components.resilience import SourceResult
from components.resilience.scheduling import async_twin
from components.serialization import with_base_parameters
from components.text.phrases import capitalised_phrases

logger = logging.getLogger(__name__)

SOURCE = "memory_write"
DEFAULT_SESSION = "default"
MAX_ANSWER_CHARS = 20000


def _entities_of(query: str, documents: list[Document], explicit: list[str] | None) -> list[str]:
    """Entities named explicitly, by cited graph facts, or as proper-noun phrases in the question; in that order."""
    seen: dict[str, str] = {}
    candidates: list[str] = list(explicit or [])
    for document in documents:
        candidates.extend(str(entity) for entity in (document.meta or {}).get("entities") or [])
        candidates.extend(str(entity) for entity in (document.meta or {}).get("entity_references") or [])
    candidates.extend(capitalised_phrases(query))
    for entity in candidates:
        cleaned = " ".join(entity.split())
        if cleaned and cleaned.lower() not in seen and len(cleaned) <= 200:
            seen[cleaned.lower()] = cleaned
    return list(seen.values())[:50]


_CITED_FIELDS = ("source_type", "source_id", "source_title", "source_url")


def _cited(documents: list[Document]) -> list[dict[str, Any]]:
    """The attribution of each cited document (at most 50), as remembered with the interaction."""
    return [{"id": doc.id, **{key: (doc.meta or {}).get(key) for key in _CITED_FIELDS}} for doc in documents[:50]]


@component
class MemoryWriter(MemoryComponent):
    """Writes one interaction (question, answer, summary, entities, cited sources) to conversation memory.

    Same backends, configuration and `memory_store` as `MemoryRecall`.
    Blank answers are not remembered (status `skipped`); faults become the status,
    never an exception.

    Usage:
    ```python
    writer = MemoryWriter()
    writer.run(query="Who acquired Acme?", answer="Globex acquired Acme in 2021 [1].", session_id="s1")["status"]
    ```
    """

    SOURCE = SOURCE

    @with_base_parameters(MemoryComponent.__init__)
    def __init__(self, require_session: bool = False, **shared: Any) -> None:
        """`require_session`: remember only interactions that name a session (in a shared pipeline, so evaluation
        runs are not remembered); the others as in `MemoryComponent`."""
        self.require_session = bool(require_session)
        MemoryComponent.__init__(self, **shared)

    def _write(self, interaction: Interaction) -> SourceResult:
        store = self._store()
        embedding = None
        if store.backend == "embedded":
            self.warm_up()
            assert self._model is not None
            embedding = self._model.embed_one(memory_chunk_text(interaction)).tolist()
        store.add(interaction, embedding)
        return SourceResult(total_found=1)

    def idle_for(self, inputs: dict[str, Any]) -> bool:
        """Whether a run given `inputs` (the values of the sockets a pipeline's named inputs feed; a socket fed by
        another component is not among them) only says it remembers nothing: a writer that requires a session, given
        none. A catalog leaves such a writer out of a selection's run (`idle_stages`)."""
        return self.require_session and "session_id" in inputs and not str(inputs["session_id"] or "").strip()

    @component.output_types(status=SourceStatus, interaction_id=str)
    def run(
        self,
        query: str,
        answer: str | None = None,
        answers: list[GeneratedAnswer] | None = None,
        documents: list[Document] | RankedDocuments | None = None,
        entities: list[str] | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> dict[str, Any]:
        """Remember `query` with its answer (`answer` text, or the first of `answers`).

        :param documents: the cited documents (default: the answer's documents), as a list or a `RankedDocuments`;
            their entities are remembered.
            An empty list (an answer citing nothing) is not remembered.
        :param entities: entities the caller knows the interaction mentions.
        :returns: `status`: the write's `SourceStatus`; `interaction_id`: the id of the stored interaction ("" if none).
        """
        started = time.monotonic()
        text = answer
        documents = None if documents is None else documents_of(documents)
        cited = list(documents or [])
        if not text and answers:
            text = answers[0].data or ""
            if not cited:
                cited = list(answers[0].documents or [])
        question = (query or "").strip()
        text = (text or "").strip()
        skip = ""
        if not question or not text:
            skip = "nothing to remember: the question or the answer is empty"
        elif documents is not None and not documents and not answers:
            # An answer that cites nothing is a non-answer; remembering it would echo it back as evidence.
            skip = "not remembered: the answer cites no evidence"
        elif cited and all((document.meta or {}).get("source_type") == "memory" for document in cited):
            # Remembering an answer built only from memory would make memory cite itself in a loop.
            skip = "not remembered: the answer only repeats earlier conversation"
        elif self.require_session and not (session_id or "").strip():
            skip = "not remembered: no session_id was given"
        if skip:
            return {"status": SourceStatus.skipped(SOURCE, skip), "interaction_id": ""}
        if len(question) > MAX_QUERY_CHARS or len(text) > MAX_ANSWER_CHARS:
            message = f"The question (max {MAX_QUERY_CHARS}) or answer (max {MAX_ANSWER_CHARS}) is too long."
            return {"status": SourceStatus.refused(SOURCE, message, started), "interaction_id": ""}
        interaction = Interaction(
            session_id=(session_id or "").strip() or DEFAULT_SESSION,
            user_id=(user_id or "").strip() or None,
            query=question,
            response=text,
            response_summary=summarise_answer(text),
            entities=_entities_of(question, cited, entities),
            cited_sources=_cited(cited),
        )
        _, status = self._guard.call(lambda: self._write(interaction))
        if status.ok:
            logger.info("Remembered interaction {interaction_id}", interaction_id=interaction.interaction_id)
        return {"status": status, "interaction_id": interaction.interaction_id if status.ok else ""}

    # Without a session the writer that requires one only says so: on the event loop, not through a worker thread.
    run_async = async_twin(
        run, inline=lambda self, arguments: self.require_session and not (arguments.get("session_id") or "").strip()
    )
