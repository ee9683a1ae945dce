"""`research serve` with the tool registry over MCP and the research agent over REST and chat: a real server
process on 127.0.0.1 over the demo corpus, a real MCP client session (streamable HTTP), the chat contract server
as the agent's model."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from pipelines.bench_cli import stop_server
from tests.contract_servers.chat import ChatContractServer
from tests.pipelines.serving.conftest import RunningServer, free_port, wait_until_up

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def chat_model() -> Iterator[ChatContractServer]:
    server = ChatContractServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def tool_server(session_dir: Path, database_url: str, chat_model: ChatContractServer) -> Iterator[RunningServer]:
    """The demo corpus in a fresh collection, and `python -m pipelines.cli serve` over it with a token."""
    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import reload_settings
    from ingest.demo import ensure_demo_corpus
    from pipelines.serving.server import served_pipeline_names

    collection = f"t_mcp_{uuid.uuid4().hex[:8]}"
    previous = os.environ.get("KB_COLLECTION")
    os.environ["KB_COLLECTION"] = collection
    try:
        assert ensure_demo_corpus(open_knowledge_base(reload_settings(), collection=collection)) is not None
    finally:
        if previous is None:
            os.environ.pop("KB_COLLECTION", None)
        else:
            os.environ["KB_COLLECTION"] = previous
        reload_settings()
    port = free_port()
    token = secrets.token_urlsafe(24)
    log_path = session_dir / f"serve-tools-{port}.log"
    env = dict(
        os.environ,
        API_TOKEN=token,
        KB_COLLECTION=collection,
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(ROOT),
        OPENAI_API_KEY=chat_model.api_key,
        OPENAI_BASE_URL=chat_model.base_url_v1,
        OPENAI_MODEL="contract-model",
    )
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "pipelines.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    running = RunningServer(f"http://127.0.0.1:{port}", token, collection, process, log_path)
    try:
        wait_until_up(running, set(served_pipeline_names()))
        yield running
    finally:
        stop_server(process)


def test_the_mcp_registry_takes_its_profiles_and_call_log_as_the_server_is_made(settings, work_dir) -> None:  # noqa: ANN001
    from pipelines.serving.mcp_tools import RegistryTools

    chosen = settings.model_copy(update={"tool_profile": "reader", "research_data_dir": work_dir})
    registry = RegistryTools(settings=chosen)
    assert registry.executor().profile == "reader"
    assert "calculator" in registry.names() and "write_file" not in registry.names()
    registry.executor().run("calculator", {"expression": "2*3"})
    assert (work_dir / "telemetry" / "tool_calls.jsonl").exists()


def test_the_mcp_registry_builds_its_tools_with_the_servers_settings(settings, work_dir) -> None:  # noqa: ANN001
    from components.settings import get_settings
    from pipelines.serving.mcp_tools import RegistryTools

    profiles_file = work_dir / "profiles.yaml"
    profiles_file.write_text("profiles:\n  small: {tools: [read_file, fetch_page]}\n", encoding="utf-8")
    chosen = settings.model_copy(
        update={
            "tool_profiles_file": profiles_file,
            "tool_profile": "small",
            "workspace_dir": work_dir,
            "page_max_bytes": 12_345,
        }
    )
    registry = RegistryTools(settings=chosen)
    built = registry.executor()._components  # noqa: SLF001 - built before any call
    assert set(built) == {"read_file", "fetch_page"}
    assert built["read_file"].workspace_dir == str(work_dir) and built["fetch_page"].max_bytes == 12_345
    assert get_settings().page_max_bytes == settings.page_max_bytes != 12_345
    assert get_settings().tool_profiles_file != profiles_file


@pytest.mark.integration
class TestRegistryToolsOverMCP:
    def test_lists_the_tools_and_calls_timeline_and_hybrid_search(self, tool_server: RunningServer) -> None:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamablehttp_client

        from components.tools.registry import get_tool, tool_names

        async def session_calls() -> tuple[dict, object, object, object]:
            url = f"{tool_server.base_url}/mcp/"
            async with streamablehttp_client(url, headers=tool_server.headers) as (read, write, _):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                    timeline = await session.call_tool(
                        "get_entity_timeline", {"entity_name": "PostgreSQL", "start_date": "1990"}
                    )
                    hybrid = await session.call_tool("hybrid_search", {"query": "HNSW index builds", "limit": 3})
                    invalid = await session.call_tool("hybrid_search", {"limit": 3})
                    return tools, timeline, hybrid, invalid

        tools, timeline, hybrid, invalid = asyncio.run(session_calls())
        assert set(tool_names()) <= set(tools)  # the analyst profile is granted every tool
        assert {"research", "documents", "entity_timeline"} <= set(tools)  # the pipelines stay
        for name in tool_names():
            assert tools[name].inputSchema == get_tool(name).input_schema
            assert tools[name].outputSchema == get_tool(name).output_schema
        assert not timeline.isError
        entries = timeline.structuredContent["timeline"]
        assert timeline.structuredContent["entities"] == ["PostgreSQL"] and entries
        assert all(entry["document_id"] and entry["uuid"] for entry in entries)
        jsonschema.validate(json.loads(timeline.content[0].text), get_tool("get_entity_timeline").output_schema)
        assert not hybrid.isError and len(hybrid.structuredContent["chunks"]) == 3
        assert all(chunk["source_id"] and chunk["source_title"] for chunk in hybrid.structuredContent["chunks"])
        assert invalid.isError and "'query' is a required property" in invalid.content[0].text


@pytest.mark.integration
class TestResearchAgentServed:
    def test_rest_run_cites_the_chunks_of_its_tool_calls(self, tool_server, chat_model) -> None:  # noqa: ANN001
        chat_model.reset()
        chat_model.plan_tool_call("rag_search", {"query": "When did pgvector add HNSW?", "top_k": 1})
        chat_model.plan_answer("The largest change came in August 2023, when pgvector 0.5.0 added HNSW [1].")
        with tool_server.client(timeout=120) as client:
            response = client.post("/research-agent/run", json={"question": "When did pgvector add HNSW indexes?"})
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        assert result["tool_calls"][0]["tool"] == "rag_search" and result["tool_calls"][0]["status"] == "success"
        assert result["citations"] == [1] and result["sentences"][0]["supported"]
        assert result["chunks"][0]["source_title"].startswith("pgvector")

    def test_openai_chat_model_research_agent(self, tool_server, chat_model) -> None:  # noqa: ANN001
        chat_model.reset()
        chat_model.plan_tool_call(
            "rag_search", {"query": "When did pgvector add HNSW?", "top_k": 1, "min_relevance": 0}
        )
        chat_model.plan_answer("pgvector 0.5.0 added the HNSW index type in August 2023 [1].")
        body = {"model": "research-agent", "messages": [{"role": "user", "content": "When did pgvector add HNSW?"}]}
        with tool_server.client(timeout=120) as client:
            models = client.get("/v1/models").json()
            response = client.post("/v1/chat/completions", json=body)
        assert "research-agent" in {model["id"] for model in models["data"]}
        assert response.status_code == 200, response.text
        text = response.json()["choices"][0]["message"]["content"]
        assert "[1]" in text and "Sources:\n[1] pgvector" in text
