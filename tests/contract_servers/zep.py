"""A Zep contract server: the v2 REST API that zep-python 2.x calls, on 127.0.0.1.

Endpoints (under `/api/v2`, `Authorization: Api-Key <key>` when the server has a key, else 401):
`POST /users` (User; 400 if it exists), `POST /sessions` (Session; 400 if it exists), `GET /sessions/{id}`
(Session or 404), `GET /sessions-ordered?page_number=&page_size=`
(SessionListResponse), `POST /sessions/{id}/memory` (`{"message": "OK"}`; 404 for an unknown session),
`GET /sessions/{id}/memory?lastn=` (Memory: messages, relevant_facts, summary) and `POST /sessions/search?limit=`
(`{"results": [SessionSearchResult]}` with `message`, `fact`, `score`, `session_id`; `search_scope` messages or
facts, filtered by `user_id` and `session_ids`). Errors carry Zep's `{"message": ...}` body.

Search scores are word-overlap similarities in 0-1: a stand-in for Zep's embeddings that keeps the response shape
and the ranking direction. Faults (slow, 429 + Retry-After, 500, malformed, hang, drop) come from the shared
machinery. Fixture `zep_server`; manual run: `python -m tests.contract_servers.zep`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from typing import Any

from tests.contract_servers import ContractServer, Reply, contract_fixtures

PREFIX = "/api/v2"
_WORD = re.compile(r"\w+")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")


def _similarity(query: str, text: str) -> float:
    left, right = set(_WORD.findall(query.lower())), set(_WORD.findall(text.lower()))
    if not left or not right:
        return 0.0
    return len(left & right) / (len(left) * len(right)) ** 0.5


class ZepContractServer(ContractServer):
    """Users, sessions, messages and facts in memory, answered in zep-python 2.x's documented shapes."""

    name = "zep"
    key_scheme = "Api-Key"

    def __init__(self, port: int = 0, api_key: str | None = "test-zep-key") -> None:
        super().__init__(port, api_key)
        self.users: dict[str, dict[str, Any]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self.facts: dict[str, list[dict[str, Any]]] = {}

    def reset(self) -> None:
        super().reset()
        with self.data_lock:
            self.users.clear()
            self.sessions.clear()
            self.messages.clear()
            self.facts.clear()

    def server_error_reply(self) -> Reply:
        return Reply(500, {"message": "internal server error"})

    def rate_limited_reply(self, headers: dict[str, str]) -> Reply:
        return Reply(429, {"message": "rate limit exceeded"}, headers=headers)

    def add_fact(self, session_id: str, fact: str, created_at: str | None = None) -> None:
        """Seed a fact, as Zep Community Edition derives them from messages."""
        with self.data_lock:
            self.facts.setdefault(session_id, []).append(
                {"uuid": uuid.uuid4().hex, "fact": fact, "created_at": created_at or _now(), "rating": None}
            )

    # -- the API ------------------------------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Reply:
        if not self.authorized(headers):
            return Reply(401, {"message": "unauthorized"})
        if not path.startswith(PREFIX + "/"):
            return Reply(404, {"message": "not found"})
        route = path[len(PREFIX) :].rstrip("/")
        try:
            payload = json.loads(body) if body else {}
        except json.JSONDecodeError:
            return Reply(400, {"message": "invalid JSON body"})
        params = self.query_params(query)
        with self.data_lock:
            if method == "POST" and route == "/users":
                return self._add_user(payload)
            if method == "POST" and route == "/sessions":
                return self._add_session(payload)
            if method == "GET" and route == "/sessions-ordered":
                return self._list_sessions(params)
            if method == "POST" and route == "/sessions/search":
                return self._search(payload, params)
            match = re.fullmatch(r"/sessions/([^/]+)(/memory)?", route)
            if match:
                session_id = match.group(1)
                if session_id not in self.sessions:
                    return Reply(404, {"message": f"session {session_id} not found"})
                if match.group(2) and method == "POST":
                    return self._add_memory(session_id, payload)
                if match.group(2) and method == "GET":
                    return self._get_memory(session_id, params)
                if method == "GET":
                    return Reply(200, self.sessions[session_id])
        return Reply(404, {"message": "not found"})

    @staticmethod
    def _refused_id(payload: dict[str, Any], kind: str, existing: dict[str, Any]) -> Reply | None:
        """Zep's 400 for a new user or session whose `KIND_id` is missing or taken, else None."""
        value = payload.get(f"{kind}_id")
        if not value:
            return Reply(400, {"message": f"{kind}_id is required"})
        if value in existing:
            return Reply(400, {"message": f"{kind} {value} already exists"})
        return None

    def _add_user(self, payload: dict[str, Any]) -> Reply:
        if refused := self._refused_id(payload, "user", self.users):
            return refused
        user_id = payload["user_id"]
        user = {"uuid": uuid.uuid4().hex, "user_id": user_id, "created_at": _now(), "metadata": payload.get("metadata")}
        self.users[user_id] = user
        return Reply(201, user)

    def _add_session(self, payload: dict[str, Any]) -> Reply:
        if refused := self._refused_id(payload, "session", self.sessions):
            return refused
        session_id = payload["session_id"]
        user_id = payload.get("user_id")
        if user_id and user_id not in self.users:
            return Reply(404, {"message": f"user {user_id} not found"})
        session = {
            "uuid": uuid.uuid4().hex,
            "session_id": session_id,
            "user_id": user_id,
            "metadata": payload.get("metadata"),
            "created_at": _now(),
            "updated_at": _now(),
        }
        self.sessions[session_id] = session
        self.messages[session_id] = []
        return Reply(201, session)

    def _list_sessions(self, params: dict[str, str]) -> Reply:
        page_size = max(int(params.get("page_size") or 20), 1)
        page_number = max(int(params.get("page_number") or 1), 1)
        ordered = sorted(self.sessions.values(), key=lambda session: session["created_at"])
        page = ordered[(page_number - 1) * page_size : page_number * page_size]
        return Reply(200, {"sessions": page, "total_count": len(ordered), "response_count": len(page)})

    def _add_memory(self, session_id: str, payload: dict[str, Any]) -> Reply:
        messages = payload.get("messages")
        if not isinstance(messages, list) or not messages:
            return Reply(400, {"message": "messages are required"})
        for message in messages:
            if not isinstance(message, dict) or not message.get("content") or not message.get("role_type"):
                return Reply(400, {"message": "each message needs role_type and content"})
            self.messages[session_id].append(
                {
                    "uuid": uuid.uuid4().hex,
                    "created_at": _now(),
                    "updated_at": _now(),
                    "role": message.get("role"),
                    "role_type": message["role_type"],
                    "content": message["content"],
                    "metadata": message.get("metadata") or {},
                    "token_count": len(str(message["content"]).split()),
                }
            )
        return Reply(200, {"message": "OK"})

    def _get_memory(self, session_id: str, params: dict[str, str]) -> Reply:
        messages = self.messages.get(session_id, [])
        lastn = int(params.get("lastn") or 0)
        chosen = messages[-lastn:] if lastn else messages
        facts = self.facts.get(session_id, [])
        return Reply(
            200,
            {
                "messages": chosen,
                "relevant_facts": facts,
                "facts": [f["fact"] for f in facts],
                "summary": None,
                "metadata": {},
            },
        )

    def _search(self, payload: dict[str, Any], params: dict[str, str]) -> Reply:
        text = str(payload.get("text") or "")
        if not text:
            return Reply(400, {"message": "text is required"})
        limit = int(params.get("limit") or 10)
        user_id = payload.get("user_id")
        wanted = set(payload.get("session_ids") or [])
        scope = payload.get("search_scope") or "messages"
        results: list[dict[str, Any]] = []
        for session_id, session in self.sessions.items():
            if wanted and session_id not in wanted:
                continue
            if user_id and session.get("user_id") != user_id:
                continue
            if scope == "facts":
                for fact in self.facts.get(session_id, []):
                    score = _similarity(text, fact["fact"])
                    if score > 0:
                        results.append({"fact": fact, "score": round(score, 6), "session_id": session_id})
                continue
            for message in self.messages.get(session_id, []):
                score = _similarity(text, message["content"])
                if score > 0:
                    results.append({"message": message, "score": round(score, 6), "session_id": session_id})
        results.sort(key=lambda item: item["score"], reverse=True)
        return Reply(200, {"results": results[:limit]})


zep_server_session, zep_server = contract_fixtures(ZepContractServer, "zep")


if __name__ == "__main__":
    ZepContractServer.serve_by_hand("Serve the Zep contract server on 127.0.0.1.", 8000, "test-zep-key")
