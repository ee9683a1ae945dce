"""Over HTTP, MCP and the chat endpoint, a follow-up in a session is answered about the earlier subject, and
disagreeing documents come back as `conflicts`."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator

import pytest

from tests.pipelines.serving.conftest import RunningServer

DOCUMENTS = [
    {
        "title": "Brevik Labs profile",
        "source": "test:brevik",
        "date": "2024-02-01",
        "text": "Brevik Labs is a drone maker founded in 2019 in Kestrel Bay. Orla Venn leads Brevik Labs as its "
        "chief executive.",
    },
    {
        "title": "Zorvan Systems profile",
        "source": "test:zorvan",
        "date": "2024-03-01",
        "text": "Zorvan Systems is a sensor maker founded in 2016 in Corvane. Tomas Hale leads Zorvan Systems.",
    },
    {
        "title": "Zorvan Systems filing",
        "source": "test:zorvan-filing",
        "date": "2019-06-01",
        "text": "According to an old filing, Zorvan Systems was founded in 2015 by a group of engineers.",
    },
]


@pytest.fixture(scope="module")
def invented(server: RunningServer) -> Iterator[RunningServer]:
    """The server with the invented documents ingested, deleted again after the module."""
    ids = []
    with server.client() as client:
        for document in DOCUMENTS:
            response = client.post("/ingestion/run", json=document)
            assert response.status_code == 200, response.text
            ids.append(response.json()["result"]["document_id"])
    yield server
    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import Settings

    knowledge_base = open_knowledge_base(Settings(kb_collection=server.collection))
    for document_id in ids:
        knowledge_base.delete_document(document_id)


def ask(server: RunningServer, **body: object) -> dict:
    with server.client() as client:
        response = client.post("/research/run", json={"sources": ["kb"], **body})
    assert response.status_code == 200, response.text
    return response.json()["result"]


class TestFollowUpsOverHttp:
    def test_a_follow_up_in_a_session_is_answered_about_the_earlier_subject(self, invented: RunningServer) -> None:
        session = uuid.uuid4().hex
        first = ask(invented, question="When was Brevik Labs founded?", session_id=session)
        assert first["answered_as"] == "" and "2019" in first["answer"]
        follow_up = ask(invented, question="Who leads it?", session_id=session)
        assert follow_up["asked"] == "Who leads it?"
        assert follow_up["answered_as"] == "Who leads Brevik Labs?"
        assert "Orla Venn" in follow_up["answer"]
        typed = ask(invented, question="Who leads it?", session_id=session, as_typed=True)
        assert typed["answered_as"] == "" and typed["question"] == "Who leads it?"
        # Another session has no earlier subject: the question stands as typed.
        assert ask(invented, question="Who leads it?", session_id=uuid.uuid4().hex)["answered_as"] == ""

    def test_disagreeing_documents_are_a_conflict(self, invented: RunningServer) -> None:
        result = ask(invented, question="When was Zorvan Systems founded?")
        [conflict] = result["conflicts"]
        values = {side["value"]: side for side in conflict["values"]}
        assert set(values) == {"2016", "2015"}
        assert "Sources disagree:" in result["answer"]
        filing = next(n for n, chunk in enumerate(result["chunks"], 1) if chunk["source_title"].endswith("filing"))
        assert values["2015"]["citations"] == [filing] and values["2015"]["document_dates"] == ["2019-06-01"]


class TestFollowUpsOverChatAndMcp:
    def test_the_chat_endpoints_earlier_messages_are_the_context(self, invented: RunningServer) -> None:
        body = {
            "model": "research",
            "messages": [
                {"role": "user", "content": "When was Zorvan Systems founded?"},
                {"role": "assistant", "content": "Zorvan Systems is a sensor maker founded in 2016 [1]."},
                {"role": "user", "content": "Who leads it?"},
            ],
        }
        with invented.client() as client:
            response = client.post("/v1/chat/completions", json=body)
        assert response.status_code == 200, response.text
        content = response.json()["choices"][0]["message"]["content"]
        assert content.startswith("(Answered as: Who leads Zorvan Systems?)")
        assert "Tomas Hale" in content

    def test_the_mcp_tool_takes_a_session(self, invented: RunningServer) -> None:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamablehttp_client

        session_id = uuid.uuid4().hex

        async def calls() -> dict:
            async with streamablehttp_client(f"{invented.base_url}/mcp/", headers=invented.headers) as (read, write, _):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    arguments = {"sources": ["kb"], "session_id": session_id}
                    await session.call_tool("research", {"question": "When was Brevik Labs founded?", **arguments})
                    answer = await session.call_tool("research", {"question": "Who leads it?", **arguments})
                    return json.loads(answer.content[0].text)

        result = asyncio.run(calls())
        assert result["answered_as"] == "Who leads Brevik Labs?" and "Orla Venn" in result["answer"]


def streamed_chat(server: RunningServer, messages: list[dict]) -> list[str]:
    """The pieces of a streamed chat reply, in order."""
    pieces: list[str] = []
    body = {"model": "research", "stream": True, "messages": messages}
    with server.client() as client, client.stream("POST", "/v1/chat/completions", json=body) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            payload = line.removeprefix("data: ")
            if not line.startswith("data: ") or payload.strip() == "[DONE]":
                continue
            pieces.append((json.loads(payload)["choices"][0].get("delta") or {}).get("content") or "")
    return [piece for piece in pieces if piece]


class TestStreamedChat:
    def test_a_streamed_follow_up_opens_with_the_question_answered(self, invented: RunningServer) -> None:
        messages = [
            {"role": "user", "content": "When was Brevik Labs founded?"},
            {"role": "assistant", "content": "Brevik Labs is a drone maker founded in 2019 [1]."},
            {"role": "user", "content": "Who leads it?"},
        ]
        pieces = streamed_chat(invented, messages)
        assert pieces[0] == "(Answered as: Who leads Brevik Labs?)\n\n"
        reply = "".join(pieces)
        assert "Orla Venn" in reply and reply.count("(Answered as:") == 1
        # The next request reads the question that was answered from the streamed reply.
        from pipelines.serving.models import earlier_turns

        turns = earlier_turns([*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": "x"}])
        assert turns[-1]["question"] == "Who leads Brevik Labs?"

    def test_a_streamed_reply_says_the_sources_disagree(self, invented: RunningServer) -> None:
        reply = "".join(streamed_chat(invented, [{"role": "user", "content": "When was Zorvan Systems founded?"}]))
        answer = reply.split("\n\nSources:", 1)[0]
        assert "Sources disagree: " in answer and "2015 [" in answer and "2016 [" in answer
        assert not reply.startswith("(Answered as:")
