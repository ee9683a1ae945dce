"""`ZepMemoryStore`: remembered interactions on a Zep server through zep-python 2.x.

Each interaction becomes two messages in the Zep session (the analyst's question, the assistant's answer) whose
metadata carries the interaction id, the answer summary and the entities. Recall uses Zep's session search over
messages (cloud) and also maps the fact results Zep Community Edition returns, so nothing Zep says is lost or
reshaped into something it did not say.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from components.memory.store import Interaction, MemoryStore, MemoryUnavailable, RecalledInteraction, RecallQuery
from components.resilience import SourceError
from components.resilience.errors import raise_for_busy
from components.resilience.transport import CappedTransport
from components.settings import default_setting, setting_or
from components.text.dates import parse_moment

TIMEOUT_S: float = default_setting("tool_timeout_s")  # the TOOL_TIMEOUT_S setting's default
ABSENT = object()  # what `ZepMemoryStore.request` returns when Zep answers one of the statuses the caller expects


@contextlib.contextmanager
def _malformed_answers(action: str) -> Iterator[None]:
    """A Zep answer that is not JSON, or not the JSON zep-python expects, becomes one sentence naming Zep, the
    request and what was wrong (not the parser's bare "Unterminated string starting at: line 1 column 45")."""
    import pydantic
    import pydantic.v1

    try:
        yield
    except json.JSONDecodeError as exc:
        raise SourceError(
            f"Zep's answer to {action} is malformed: it is not valid JSON ({exc.msg} at character {exc.pos})."
        ) from None
    except (pydantic.ValidationError, pydantic.v1.ValidationError) as exc:
        errors = exc.errors()
        where = ".".join(str(part) for part in errors[0].get("loc", ()) if part != "__root__") if errors else ""
        raise SourceError(
            f"Zep's answer to {action} is malformed: it is JSON but not the shape Zep documents"
            + (f" (at {where})." if where else ".")
        ) from None
    except Exception as exc:
        # zep-python wraps an unreadable success body in ApiError with the 2xx status and the raw text.
        status = getattr(exc, "status_code", None)
        if isinstance(status, int) and 200 <= status < 300:
            raise SourceError(
                f"Zep's answer to {action} is malformed: HTTP {status} with a body that is not the JSON Zep documents."
            ) from None
        raise


def _parse_time(value: str | None) -> dt.datetime | None:
    try:
        moment = parse_moment(value)
    except ValueError:
        return None
    if moment is None or isinstance(moment, dt.datetime):
        return moment
    return dt.datetime.combine(moment, dt.time(), tzinfo=dt.UTC)


def _remembered_text(
    item: Any, text: str, fallback_id: str, session_id: str, score: float | None
) -> RecalledInteraction:
    """A Zep fact or summary (`text`, with its uuid and creation time) as a recalled interaction."""
    interaction = Interaction(
        interaction_id=str(item.uuid_ or fallback_id),
        session_id=session_id or "zep",
        query="",
        response=text,
        response_summary=text,
        created_at=_parse_time(item.created_at) or dt.datetime.now(dt.UTC),
    )
    return RecalledInteraction(interaction=interaction, cosine=None, raw_score=score)


def _message_interaction(message: Any, session_id: str, score: float | None) -> RecalledInteraction | None:
    """A Zep message (the analyst's question or the assistant's answer, with the interaction's metadata) as the
    interaction it belongs to; None for an empty message."""
    if message is None or not message.content:
        return None
    meta = dict(message.metadata or {})
    created = (
        _parse_time(meta.get("interaction_timestamp")) or _parse_time(message.created_at) or dt.datetime.now(dt.UTC)
    )
    is_answer = (message.role_type or "") == "assistant"
    query_text = meta.get("prior_query", "") if is_answer else message.content
    response = message.content if is_answer else ""
    interaction = Interaction(
        interaction_id=str(meta.get("interaction_id") or message.uuid_ or f"{session_id}:{created.isoformat()}"),
        session_id=session_id or str(meta.get("session_id") or "zep"),
        user_id=meta.get("user_id"),
        query=str(query_text or ""),
        response=response,
        response_summary=str(meta.get("prior_response_summary") or ""),
        entities=[str(entity) for entity in meta.get("entity_references") or []],
        created_at=created,
    )
    return RecalledInteraction(interaction=interaction, cosine=None, raw_score=score)


class ZepMemoryStore(MemoryStore):
    """Memory on Zep (cloud or Community Edition) at `api_url`, authenticated by `api_key`."""

    backend = "zep"

    def __init__(
        self, api_url: str, api_key: str | None, timeout_s: float = TIMEOUT_S, max_bytes: int | None = None
    ) -> None:
        if not api_url or not api_url.startswith(("http://", "https://")):
            raise ValueError("ZEP_API_URL must be an http(s) URL of the Zep server.")
        self.api_url = api_url.rstrip("/")
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.max_bytes = setting_or(max_bytes, "upstream_max_bytes")
        self._client: Any = None
        self._lock = threading.Lock()
        self._known_sessions: set[str] = set()
        self._known_users: set[str] = set()

    def _zep(self) -> Any:
        with self._lock:
            if self._client is None:
                from zep_python.client import Zep

                if not self._api_key:
                    raise MemoryUnavailable("The zep memory backend needs ZEP_API_KEY.")
                # zep-python's errors drop the headers; Retry-After is read here so the guard's backoff honours it.
                busy = [lambda response: raise_for_busy(response.status_code, response.headers, "Zep")]
                # Every answer is read through the capped transport: an endless body stops at the limit or deadline.
                http = httpx.Client(
                    timeout=self.timeout_s,
                    event_hooks={"response": busy},
                    transport=CappedTransport(self.max_bytes, "Zep"),
                )
                self._client = Zep(base_url=self.api_url, api_key=self._api_key, httpx_client=http)
            return self._client

    def request(self, action: str, call: Callable[[Any], Any], expected: tuple[int, ...] = ()) -> Any:
        """`call(client)`, the one way this store asks Zep anything: a malformed answer becomes one sentence naming
        `action`, and an error status in `expected` (a 404 for a session that is gone, a 400 for a user that
        exists) returns `ABSENT` instead of raising."""
        from zep_python.core.api_error import ApiError

        try:
            with _malformed_answers(action):
                return call(self._zep())
        except ApiError as exc:
            if exc.status_code in expected:
                return ABSENT
            raise

    def _ensure_session(self, session_id: str, user_id: str | None) -> None:
        # Zep answers 400 (or 409) for a user or session that exists already: that counts as added.
        if user_id and user_id not in self._known_users:
            self.request("adding a user", lambda zep: zep.user.add(user_id=user_id), expected=(400, 409))
            self._known_users.add(user_id)
        if session_id not in self._known_sessions:
            self.request(
                "adding a session",
                lambda zep: zep.memory.add_session(session_id=session_id, user_id=user_id),
                expected=(400, 409),
            )
            self._known_sessions.add(session_id)

    def add(self, interaction: Interaction, embedding: list[float] | None) -> None:
        from zep_python.types import Message

        created = interaction.created_at.astimezone(dt.UTC).isoformat()
        shared = {
            "interaction_id": interaction.interaction_id,
            "entity_references": list(interaction.entities),
            "interaction_timestamp": created,
            "user_id": interaction.user_id,
            "prior_response_summary": interaction.response_summary,
        }
        messages = [
            Message(role="analyst", role_type="user", content=interaction.query, metadata=shared),
            Message(
                role="research assistant",
                role_type="assistant",
                content=interaction.response,
                metadata={**shared, "prior_query": interaction.query},
            ),
        ]
        for attempt in range(2):
            self._ensure_session(interaction.session_id, interaction.user_id)
            stored = self.request(
                "storing an interaction",
                lambda zep: zep.memory.add(interaction.session_id, messages=messages),
                expected=() if attempt else (404,),
            )
            if stored is not ABSENT:
                return
            # The session (or its user) was deleted on the server since we saw it: create it again, once.
            self._known_sessions.discard(interaction.session_id)
            self._known_users.discard(interaction.user_id or "")

    def search(self, query: RecallQuery) -> list[RecalledInteraction]:
        kwargs: dict[str, Any] = {"text": query.text, "search_scope": "messages", "limit": query.limit * 3}
        if query.user_id:
            kwargs["user_id"] = query.user_id
        if query.session_id:
            kwargs["session_ids"] = [query.session_id]
        response = self.request("the memory search", lambda zep: zep.memory.search_sessions(**kwargs), expected=(404,))
        if response is ABSENT:
            return []
        found: dict[str, RecalledInteraction] = {}
        for result in response.results or []:
            item = self._to_interaction(result)
            if item is None:
                continue
            moment = item.interaction.created_at
            if (query.since is not None and moment < query.since) or (
                query.before is not None and moment >= query.before
            ):
                continue
            key = item.interaction.interaction_id
            if key not in found or (item.raw_score or 0) > (found[key].raw_score or 0):
                found[key] = item
        return sorted(found.values(), key=lambda item: item.raw_score or 0.0, reverse=True)[: query.limit]

    def latest(self, session_id: str, limit: int) -> list[Interaction]:
        """The session's newest `limit` interactions by time (its last messages, not a search), oldest first."""
        memory = self.request("reading the session", lambda zep: zep.memory.get(session_id, lastn=limit * 2), (404,))
        if memory is ABSENT:
            return []
        found: dict[str, Interaction] = {}
        for message in memory.messages or []:
            item = _message_interaction(message, session_id, None)
            if item is None:
                continue
            turn, key = item.interaction, item.interaction.interaction_id
            earlier = found.get(key)
            if earlier is not None:  # the question and the answer of one interaction: one turn
                turn.query = turn.query or earlier.query
                turn.response = turn.response or earlier.response
            found[key] = turn
        return sorted(found.values(), key=lambda interaction: interaction.created_at)[-limit:]

    @staticmethod
    def _to_interaction(result: Any) -> RecalledInteraction | None:
        score = float(result.score) if result.score is not None else None
        session_id = result.session_id or ""
        item = _message_interaction(result.message, session_id, score)
        if item is not None:
            return item
        fact = result.fact
        if fact is not None and fact.fact:
            return _remembered_text(fact, fact.fact, f"fact:{hash(fact.fact)}", session_id, score)
        summary = result.summary
        if summary is not None and summary.content:
            return _remembered_text(summary, summary.content, f"summary:{session_id}", session_id, score)
        return None

    def count_sessions(self) -> int:
        """How many sessions the Zep project holds (one small request; also proves the server answers)."""
        response = self.request("listing sessions", lambda zep: zep.memory.list_sessions(page_number=1, page_size=1))
        return int(response.total_count or 0)

    def close(self) -> None:
        with self._lock:
            self._client = None
