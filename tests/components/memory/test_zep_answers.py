"""Every request the Zep memory store makes reads Zep's answer the same way: a malformed answer is one sentence
naming the request, and the statuses the request expects (a session that is gone, a user that exists) are no error."""

from __future__ import annotations

import datetime as dt

import pytest

from components.memory.store import Interaction
from components.memory.zep import ABSENT, ZepMemoryStore
from components.resilience import SourceError

TURN = Interaction(
    session_id="s-quill",
    user_id="u-odile",
    query="Who runs Quill Barges?",
    response="Odile Marr runs Quill Barges [1].",
    response_summary="Odile Marr runs Quill Barges.",
    created_at=dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC),
)


@pytest.mark.parametrize(
    ("path", "action", "ask"),
    [
        ("/api/v2/users", "adding a user", lambda store: store.add(TURN, None)),
        ("/api/v2/sessions", "adding a session", lambda store: store.add(TURN, None)),
        ("/api/v2/sessions/s-quill/memory", "storing an interaction", lambda store: store.add(TURN, None)),
        ("/api/v2/sessions/s-quill/memory", "reading the session", lambda store: store.latest("s-quill", 2)),
        ("/api/v2/sessions-ordered", "listing sessions", lambda store: store.count_sessions()),
    ],
)
def test_a_malformed_answer_names_the_request(zep_env, path, action, ask) -> None:  # noqa: ANN001
    store = ZepMemoryStore(zep_env.base_url, zep_env.api_key, timeout_s=5.0)
    if action == "reading the session":
        store.add(TURN, None)
    zep_env.fail("malformed", path=path, times=1)
    with pytest.raises(SourceError, match=f"^Zep's answer to {action} is malformed: "):
        ask(store)


def test_the_statuses_a_request_expects_are_no_error(zep_env) -> None:  # noqa: ANN001
    store = ZepMemoryStore(zep_env.base_url, zep_env.api_key, timeout_s=5.0)
    assert store.latest("s-nobody", 2) == []  # a session Zep does not know (404) has no turns
    store.add(TURN, None)
    # Another process of the product made the same user and session: Zep's 400 counts as added.
    again = ZepMemoryStore(zep_env.base_url, zep_env.api_key, timeout_s=5.0)
    again.add(TURN, None)
    # The session deleted on the server since it was seen (404 on storing): made again, once, and the turn stored.
    with zep_env.data_lock:
        del zep_env.sessions["s-quill"]
    again.add(TURN, None)
    assert [turn.query for turn in again.latest("s-quill", 2)] == [TURN.query]


def test_one_request_path_reads_every_answer(zep_env) -> None:  # noqa: ANN001
    store = ZepMemoryStore(zep_env.base_url, zep_env.api_key, timeout_s=5.0)
    assert store.request("reading the session", lambda zep: zep.memory.get("s-nobody"), expected=(404,)) is ABSENT
    with pytest.raises(Exception, match="not found"):  # a status the request does not expect stays an error
        store.request("reading the session", lambda zep: zep.memory.get("s-nobody"))
    zep_env.fail("malformed", path="/api/v2/sessions-ordered", times=1)
    with pytest.raises(SourceError, match="^Zep's answer to counting is malformed"):
        store.request("counting", lambda zep: zep.memory.list_sessions(page_number=1, page_size=1))
