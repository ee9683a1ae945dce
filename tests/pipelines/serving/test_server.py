"""The real server over HTTP: every endpoint, the token, the OpenAI-compatible chat (plain and streamed), MCP,
and `research export-yaml` deployed by a stock Hayhooks."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml

from tests.pipelines.serving.conftest import RunningServer, free_port, research_command

pytestmark = [pytest.mark.integration, pytest.mark.slow]


class TestDeployment:
    def test_every_wrapper_is_served(self, server: RunningServer) -> None:
        from pipelines.serving.server import served_pipeline_names

        with server.client() as client:
            deployed = set(client.get("/status").json()["pipelines"])
        expected = {
            "research",
            "documents",
            "document",
            "ingestion",
            "entity_timeline",
            "entity_relationships",
            "entity_search",
        }
        assert expected <= set(served_pipeline_names())
        assert set(served_pipeline_names()) <= deployed

    def test_wrapper_names_do_not_shadow_importable_modules(self) -> None:
        # Hayhooks registers each wrapper folder as a top-level package of the same name.
        from pipelines.serving.server import served_pipeline_names

        for name in served_pipeline_names():
            # A name with a hyphen ("research-agent", the chat model's name) cannot be imported, so it shadows
            # nothing; every other name must not be a module Python could import.
            assert name.replace("-", "_").isidentifier(), name
            if name.isidentifier():
                assert importlib.util.find_spec(name) is None, name

    def test_openapi_documents_typed_models_and_the_bearer_scheme(self, server: RunningServer) -> None:
        with server.client() as client:
            schema = client.get("/openapi.json").json()
        assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
        paths = schema["paths"]
        assert not {"/deploy_files", "/deploy-yaml", "/undeploy/{pipeline_name}"} & set(paths)
        request_ref = paths["/research/run"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        request = schema["components"]["schemas"][request_ref.rsplit("/", 1)[-1]]
        assert request["required"] == ["question"]
        assert {"sources", "as_of", "filters", "top_k", "session_id"} <= set(request["properties"])
        assert "Only use what was known" in request["properties"]["as_of"]["description"]
        names = set(schema["components"]["schemas"])
        assert {"ResearchResult", "Citation", "ContextChunk", "SourceStatus", "DocumentPage"} <= names
        assert {"answer", "citations", "chunks", "statuses", "sentences"} <= set(
            schema["components"]["schemas"]["ResearchResult"]["properties"]
        )


class TestToken:
    @pytest.mark.parametrize(
        ("method", "path"),
        [
            ("GET", "/status"),
            ("GET", "/docs"),
            ("GET", "/openapi.json"),
            ("POST", "/research/run"),
            ("POST", "/documents/run"),
            ("POST", "/v1/chat/completions"),
            ("POST", "/mcp/"),
        ],
    )
    def test_every_endpoint_needs_the_token(self, server: RunningServer, method: str, path: str) -> None:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": server.token}):
            response = httpx.request(method, server.base_url + path, headers=headers, json={}, timeout=10)
            assert response.status_code == 401, (path, headers, response.text)
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert server.token not in response.text

    def test_browser_origins_are_not_allowed_by_default(self, server: RunningServer) -> None:
        preflight = {"Origin": "http://example.org", "Access-Control-Request-Method": "POST"}
        response = httpx.options(server.base_url + "/research/run", headers=preflight, timeout=10)
        assert "access-control-allow-origin" not in response.headers

    def test_no_remote_bind_without_a_token(self) -> None:
        env = {key: value for key, value in os.environ.items() if key != "API_TOKEN"}
        result = subprocess.run(
            [*research_command(), "serve", "--host", "0.0.0.0", "--port", str(free_port())],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert result.returncode == 1
        assert "without API_TOKEN" in result.stderr and "Traceback" not in result.stderr


class TestResearch:
    def test_answers_with_citations_chunks_and_statuses(self, server: RunningServer) -> None:
        with server.client() as client:
            response = client.post("/research/run", json={"question": "Who won Super Bowl 50?", "sources": ["kb"]})
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        assert "Broncos" in result["answer"]
        assert result["chunks"] and result["chunks"][0]["source_type"] == "kb"
        assert any(chunk["source_title"] == "Super Bowl 50" for chunk in result["chunks"])
        numbers = {citation["number"] for citation in result["citations"]}
        assert numbers and max(numbers) <= len(result["chunks"])
        assert {status["source"] for status in result["statuses"]} >= {"kb_dense", "kb_keyword"}
        assert all(status["status"] in ("success", "partial", "skipped") for status in result["statuses"])
        # The short answer's confidence travels with the result, per part too.
        assert 0.0 <= result["short_answer_confidence"] <= 1.0
        fields = {"question", "short_answer", "short_answer_confidence", "sure"}
        assert result["parts"] and set(result["parts"][0]) == fields

    def test_optional_inputs_restrict_the_evidence(self, server: RunningServer) -> None:
        body = {
            "question": "How does reciprocal rank fusion combine lists?",
            "as_of": "2022-01-01",
            "filters": {"date_from": "2021-01-01"},
            "top_k": 2,
            "session_id": "tests",
        }
        with server.client() as client:
            result = client.post("/research/run", json=body).json()["result"]
        assert 1 <= len(result["chunks"]) <= 2
        # as_of 2022 excludes the 2023 HNSW text; date_from 2021 excludes the 2016 Super Bowl text.
        assert {chunk["source_title"] for chunk in result["chunks"]} == {"Reciprocal rank fusion"}

    @pytest.mark.parametrize(
        ("body", "expected"),
        [
            ({"question": "   "}, "empty"),
            ({"question": "x", "as_of": "last tuesday"}, "as_of"),
            ({"question": "x", "sources": ["kb", "oracle"]}, "oracle"),
            ({"question": "x", "top_k": 0}, "top_k"),
            ({}, "question"),
        ],
    )
    def test_bad_input_gets_a_clear_error(self, server: RunningServer, body: dict, expected: str) -> None:
        with server.client() as client:
            response = client.post("/research/run", json=body)
        assert response.status_code == 422
        assert expected in response.text
        assert "Traceback" not in response.text


class TestDocumentsAndIngestion:
    def test_list_search_and_lookup(self, server: RunningServer) -> None:
        with server.client() as client:
            page = client.post("/documents/run", json={}).json()["result"]
            assert page["total"] == 3 and len(page["documents"]) == 3
            searched = client.post("/documents/run", json={"search": "HNSW", "limit": 5}).json()["result"]
            assert [doc["title"] for doc in searched["documents"]] == ["HNSW indexes"]
            document_id = searched["documents"][0]["document_id"]
            detail = client.post("/document/run", json={"document_id": document_id}).json()["result"]
            assert detail["document"]["title"] == "HNSW indexes"
            assert "ef_search" in " ".join(chunk["text"] for chunk in detail["chunks"])
            missing = client.post("/document/run", json={"document_id": "doc_does_not_exist"})
            assert missing.status_code == 404 and "doc_does_not_exist" in missing.text
            assert client.post("/documents/run", json={"limit": 0}).status_code == 422

    def test_ingest_text_is_idempotent_and_rejects_nothing_to_ingest(self, server: RunningServer) -> None:
        body = {"text": "Milvus Lite keeps its data in one local file.", "title": "Milvus Lite", "source": "test:mil"}
        with server.client() as client:
            first = client.post("/ingestion/run", json=body).json()["result"]
            again = client.post("/ingestion/run", json=body).json()["result"]
            assert first["outcome"] == "added" and first["chunks_written"] >= 1 and first["document_id"]
            assert again["outcome"] == "unchanged" and again["document_id"] == first["document_id"]
            empty = client.post("/ingestion/run", json={"text": "  "})
            assert empty.status_code == 422 and "text or a url" in empty.text
            bad_date = client.post("/ingestion/run", json={"text": "x", "date": "soon"})
            assert bad_date.status_code == 422 and "date" in bad_date.text
            # The test's document must not disturb the other tests' counts.
            deleted = client.post("/documents/run", json={"search": "Milvus Lite"}).json()["result"]
        assert deleted["total"] == 1
        from components.knowledge_base.factory import open_knowledge_base
        from components.settings import Settings

        settings = Settings(kb_collection=server.collection)
        assert open_knowledge_base(settings).delete_document(first["document_id"])


class TestGraph:
    def test_entity_timeline(self, server: RunningServer) -> None:
        with server.client() as client:
            response = client.post("/entity_timeline/run", json={"entity_name": "Super Bowl 50"})
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        assert result["entity"] == "Super Bowl 50" and result["status"]["status"] == "success"
        assert result["timeline"] and all(fact["source_type"] == "graph" for fact in result["facts"])
        assert len(result["facts"]) == len(result["timeline"])
        assert any("Super Bowl 50" in fact["text"] for fact in result["facts"])
        # Every fact carries its event confidence; those below the threshold are listed apart, not lost.
        assert all(0 <= item["confidence"] <= 1 for item in result["timeline"] + result["less_certain"])

    def test_entity_search(self, server: RunningServer) -> None:
        with server.client() as client:
            response = client.post("/entity_search/run", json={"query": "Broncos"})
            free_text = client.post(
                "/entity_search/run", json={"query": "Where did the Denver Broncos play?", "limit": 1, "as_of": "2020"}
            )
            typed = client.post("/entity_search/run", json={"query": "Broncos", "entity_types": ["person"]})
            nothing = client.post("/entity_search/run", json={"query": "zebra xylophone"})
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        assert result["query"] == "Broncos" and result["status"]["status"] == "success"
        first = result["entities"][0]
        assert first["name"] == "Denver Broncos" and first["match"] in ("contains", "alias")
        assert 0.0 < first["score"] < 1.0 and first["fact_count"] >= 1 and first["type"]
        assert result["status"]["total_found"] == len(result["entities"])
        assert result["facts"] and all(fact["source_type"] == "graph" for fact in result["facts"])
        assert any("Broncos" in fact["text"] for fact in result["facts"])
        assert {fact["source_title"] for fact in result["facts"]} == {"Super Bowl 50"}
        assert result["facts"][0]["metadata"]["matched_entity"] == "Denver Broncos"
        mentioned = free_text.json()["result"]
        assert [item["name"] for item in mentioned["entities"]] == ["Denver Broncos"]
        assert mentioned["entities"][0]["match"] == "mention"
        assert typed.json()["result"]["entities"] == [] and typed.json()["result"]["status"]["status"] == "success"
        empty = nothing.json()["result"]
        assert empty["entities"] == [] and empty["facts"] == [] and empty["status"]["status"] == "success"

    def test_entity_search_is_typed_in_openapi(self, server: RunningServer) -> None:
        with server.client() as client:
            schema = client.get("/openapi.json").json()
        post = schema["paths"]["/entity_search/run"]["post"]
        request_ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        request = schema["components"]["schemas"][request_ref.rsplit("/", 1)[-1]]
        assert request["required"] == ["query"]
        assert {"query", "limit", "entity_types", "as_of"} == set(request["properties"])
        models = schema["components"]["schemas"]
        assert {"EntitySearchResponse", "EntityMatchOut"} <= set(models)
        assert set(models["EntityMatchOut"]["properties"]["match"]["enum"]) == {
            "exact",
            "alias",
            "prefix",
            "contains",
            "within",
            "mention",
            "fuzzy",
        }

    def test_entity_relationships(self, server: RunningServer) -> None:
        with server.client() as client:
            response = client.post("/entity_relationships/run", json={"entity_name": "Denver Broncos", "depth": 1})
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        assert result["status"]["status"] in ("success", "partial")
        assert result["relationships"]["depth"] == 1

    @pytest.mark.parametrize(
        ("path", "body", "expected"),
        [
            ("/entity_timeline/run", {"entity_name": " "}, "entity_name"),
            ("/entity_relationships/run", {"entity_name": "Denver Broncos", "depth": 9}, "depth"),
            ("/entity_search/run", {"query": " "}, "query is empty"),
            ("/entity_search/run", {"query": "Broncos", "limit": 0}, "limit must be between 1 and 50"),
            ("/entity_search/run", {"query": "Broncos", "entity_types": ["team"]}, "unknown type 'team'"),
            ("/entity_search/run", {"query": "Broncos", "as_of": "soon"}, "as_of 'soon' is not an ISO date"),
            ("/entity_search/run", {}, "query"),
        ],
    )
    def test_bad_input(self, server: RunningServer, path: str, body: dict, expected: str) -> None:
        with server.client() as client:
            response = client.post(path, json=body)
        assert response.status_code == 422 and expected in response.text


class TestChatCompletions:
    def test_plain_answer_with_sources(self, server: RunningServer) -> None:
        body = {"model": "research", "messages": [{"role": "user", "content": "Where was Super Bowl 50 played?"}]}
        with server.client() as client:
            response = client.post("/v1/chat/completions", json=body)
        assert response.status_code == 200, response.text
        content = response.json()["choices"][0]["message"]["content"]
        assert "Super Bowl 50" in content and "Sources:" in content and "[1]" in content
        assert "Short answer: sure (confidence" in content or "Short answer: not sure (confidence" in content

    def test_streamed_answer(self, server: RunningServer) -> None:
        body = {
            "model": "research",
            "stream": True,
            "messages": [{"role": "user", "content": "What does the ef_search parameter trade?"}],
        }
        pieces: list[str] = []
        done = False
        with server.client() as client, client.stream("POST", "/v1/chat/completions", json=body) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                payload = line.removeprefix("data: ")
                if payload.strip() == "[DONE]":
                    done = True
                    break
                choice = json.loads(payload)["choices"][0]
                pieces.append((choice.get("delta") or {}).get("content") or "")
                done = done or choice.get("finish_reason") == "stop"
        text = "".join(pieces)
        assert done and len([piece for piece in pieces if piece]) > 1
        assert "recall" in text and "Sources:" in text

    def test_chat_without_user_message_is_refused(self, server: RunningServer) -> None:
        body = {"model": "research", "messages": [{"role": "system", "content": "Be brief."}]}
        with server.client() as client:
            response = client.post("/v1/chat/completions", json=body)
        assert response.status_code in (400, 422)
        assert "user message" in response.text


class TestMCP:
    def test_every_pipeline_is_a_tool_and_runs(self, server: RunningServer) -> None:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamablehttp_client

        async def session_calls() -> tuple[set[str], dict, str, dict]:
            async with streamablehttp_client(f"{server.base_url}/mcp/", headers=server.headers) as (read, write, _):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                    listed = await session.call_tool("documents", {"search": "rank fusion"})
                    answer = await session.call_tool("research", {"question": "What does HNSW stand for?"})
                    found = await session.call_tool("entity_search", {"query": "Denver Broncos"})
                    refused = await session.call_tool("deploy_pipeline", {"name": "x", "files": {}})
                    assert refused.isError
                    return (
                        set(tools),
                        json.loads(listed.content[0].text),
                        answer.content[0].text,
                        json.loads(found.content[0].text),
                    )

        names, listed, answer, found = asyncio.run(session_calls())
        from pipelines.serving.server import served_pipeline_names

        assert set(served_pipeline_names()) <= names
        assert not {"deploy_pipeline", "undeploy_pipeline"} & names
        assert [doc["title"] for doc in listed["documents"]] == ["Reciprocal rank fusion"]
        assert "navigable small world" in answer
        assert {"short_answer_confidence", "parts"} <= set(json.loads(answer))  # the confidence reaches MCP clients
        assert found["entities"][0]["name"] == "Denver Broncos" and found["entities"][0]["match"] == "exact"

    def test_stock_hayhooks_mcp_run_serves_the_same_tools(self, server: RunningServer, work_dir: Path) -> None:
        from mcp import ClientSession
        from mcp.client.sse import sse_client

        from pipelines.serving.server import WRAPPERS_DIR, served_pipeline_names

        port = free_port()
        env = dict(os.environ, KB_COLLECTION=server.collection, HAYHOOKS_TRACING_ENABLED="false")
        hayhooks = Path(research_command()[0]).parent / "hayhooks"
        with (work_dir / "mcp.log").open("wb") as log:
            process = subprocess.Popen(
                [
                    str(hayhooks),
                    "mcp",
                    "run",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--pipelines-dir",
                    str(WRAPPERS_DIR),
                ],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=work_dir,
            )

        async def tools_and_answer() -> tuple[set[str], str]:
            async with sse_client(f"http://127.0.0.1:{port}/sse") as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    names = {tool.name for tool in (await session.list_tools()).tools}
                    listed = await session.call_tool("documents", {"search": "Super Bowl"})
                    return names, listed.content[0].text

        try:
            deadline = time.monotonic() + 240
            while True:
                assert process.poll() is None, (work_dir / "mcp.log").read_text()[-2000:]
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/status", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, (work_dir / "mcp.log").read_text()[-2000:]
                time.sleep(0.5)
            names, listed = asyncio.run(tools_and_answer())
        finally:
            process.terminate()
            process.wait(timeout=30)
        assert set(served_pipeline_names()) <= names
        assert [doc["title"] for doc in json.loads(listed)["documents"]] == ["Super Bowl 50"]


class TestExportYaml:
    def test_stock_hayhooks_deploys_the_exported_pipeline(self, server: RunningServer, work_dir: Path) -> None:
        folder = work_dir / "yaml"
        for name in ("documents", "research"):
            result = subprocess.run(
                [*research_command(), "export-yaml", name, "-o", str(folder / f"{name}.yml")],
                capture_output=True,
                text=True,
                timeout=120,
                # The export writes the knowledge base's document store out: the settings' at export time.
                env=dict(os.environ, KB_COLLECTION=server.collection),
            )
            assert result.returncode == 0, result.stderr
            document = yaml.safe_load((folder / f"{name}.yml").read_text())
            assert {"components", "connections", "inputs", "outputs"} <= set(document)
            assert "streaming_callback" not in document["inputs"]
        listing = yaml.safe_load((folder / "documents.yml").read_text())["components"]["list_documents"]
        store = listing["init_parameters"]["document_store"]
        assert store["type"].endswith("PgvectorDocumentStore")
        assert store["init_parameters"]["table_name"] == server.collection
        assert store["init_parameters"]["connection_string"]["type"] == "env_var"
        (folder / "research.yml").unlink()  # the stock server below needs only the light one
        port = free_port()
        env = dict(os.environ)
        env.update(
            HAYSTACK_DESERIALIZATION_ALLOWLIST="components,pipelines,ingest,haystack_integrations",
            KB_COLLECTION=server.collection,
            HAYHOOKS_TRACING_ENABLED="false",
            HAYHOOKS_MONITORING_ENABLED="false",
        )
        hayhooks = Path(research_command()[0]).parent / "hayhooks"
        log = (work_dir / "hayhooks.log").open("wb")
        process = subprocess.Popen(
            [str(hayhooks), "run", "--host", "127.0.0.1", "--port", str(port), "--pipelines-dir", str(folder)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=work_dir,
        )
        try:
            deadline = time.monotonic() + 120
            response = None
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    response = httpx.post(
                        f"http://127.0.0.1:{port}/documents/run",
                        json={"search": "HNSW", "limit": 5, "offset": 0, "filters": None},
                        timeout=30,
                    )
                    break
                except httpx.HTTPError:
                    time.sleep(0.5)
            assert response is not None, (work_dir / "hayhooks.log").read_text()[-2000:]
            assert response.status_code == 200, response.text
            # A stock YAML deployment answers with each component's raw outputs.
            listed = response.json()["result"]["list_documents"]
            assert [doc["title"] for doc in listed["documents"]] == ["HNSW indexes"], listed
            assert listed["total"] == 1
        finally:
            process.terminate()
            process.wait(timeout=30)
            log.close()

    def test_entity_search_exports_with_its_inputs_and_outputs(self, work_dir: Path) -> None:
        target = work_dir / "entity_search.yml"
        result = subprocess.run(
            [*research_command(), "export-yaml", "entity_search", "-o", str(target)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        document = yaml.safe_load(target.read_text())
        assert document["components"]["search"]["type"] == "components.graph.entity_search.EntitySearch"
        assert document["inputs"] == {
            "query": ["search.query"],
            "limit": ["search.limit"],
            "entity_types": ["search.entity_types"],
            "as_of": ["search.as_of"],
        }
        assert document["outputs"] == {
            "entities": "search.entities",
            "documents": "search.documents",
            "status": "search.status",
        }

    def test_unknown_pipeline_is_a_clear_error(self) -> None:
        result = subprocess.run(
            [*research_command(), "export-yaml", "nonesuch"], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 1
        assert "no pipeline 'nonesuch'" in result.stderr and "Traceback" not in result.stderr
