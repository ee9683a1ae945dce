"""The session's earlier turns for a follow-up are its newest by time, with Zep as with the embedded store."""

from __future__ import annotations

import datetime as dt

from components.memory.recall import MemoryRecall
from components.memory.store import Interaction
from components.memory.zep import ZepMemoryStore

START = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
TURNS = [
    ("Who leads Pellow Freight?", "Ansel Rook leads Pellow Freight [1].", ["Pellow Freight", "Ansel Rook"]),
    ("When was Quorra Mills founded?", "Quorra Mills was founded in 2004 [1].", ["Quorra Mills"]),
    ("Where is Tindle Yard based?", "Tindle Yard is based in Osmer [2].", ["Tindle Yard", "Osmer"]),
]


def test_zep_gives_the_newest_turns_not_the_most_similar(zep_env) -> None:  # noqa: ANN001
    store = ZepMemoryStore(zep_env.base_url, zep_env.api_key, timeout_s=5.0)
    for minute, (query, response, entities) in enumerate(TURNS):
        store.add(
            Interaction(
                session_id="s-pellow",
                query=query,
                response=response,
                response_summary=response,
                entities=entities,
                created_at=START + dt.timedelta(minutes=minute),
            ),
            None,
        )
    recall = MemoryRecall(memory_store=store)
    turns = recall.session_turns("s-pellow", 2)
    assert [turn.query for turn in turns] == [TURNS[1][0], TURNS[2][0]]  # oldest first, the newest last
    assert [turn.response for turn in turns] == [TURNS[1][1], TURNS[2][1]]
    assert turns[-1].entities == ["Tindle Yard", "Osmer"]
    assert recall.session_turns("s-nobody", 2) == []
