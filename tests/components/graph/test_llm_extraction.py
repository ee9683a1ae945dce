"""The LLM extractor through the real OpenAI client (via Haystack) against an OpenAI-compatible contract server on
127.0.0.1 that answers in the documented `chat.completion` shape, and its failure modes."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from components.graph.llm_extraction import LLMGraphExtractor
from tests.components.graph.conftest import NORDVIK_2020, make_document


class ExtractionChatServer:
    """Answers `POST /v1/chat/completions`: the JSON a test queued, or an HTTP error; records each request."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.answers: list[tuple[int, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # noqa: ANN002 - silence the default stderr logging
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                status, content = server.answers.pop(0) if server.answers else (200, "{}")
                if self.path != "/v1/chat/completions" or "messages" not in body or "model" not in body:
                    status, content = 400, ""
                if status == 200:
                    payload = {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 1700000000,
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                    }
                else:
                    payload = {
                        "error": {"message": "server error", "type": "server_error", "param": None, "code": None}
                    }
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def chat(monkeypatch):
    monkeypatch.setenv("GRAPH_TEST_CHAT_KEY", "sk-test-key")
    server = ExtractionChatServer()
    yield server
    server.close()


def numbered(request: dict) -> dict[int, str]:
    user = next(m for m in request["body"]["messages"] if m["role"] == "user")["content"]
    return {int(n): text for n, text in re.findall(r"^(\d+): (.*)$", user, re.M)}


class TestLLMGraphExtractor:
    def test_init_and_serialisation(self):
        with pytest.raises(ValueError, match="model"):
            LLMGraphExtractor(model="")
        with pytest.raises(ValueError, match="batch_sentences"):
            LLMGraphExtractor(model="m", batch_sentences=0)
        with pytest.raises(ValueError, match="kind_confidence"):
            LLMGraphExtractor(model="m", kind_confidence=1.5)
        data = LLMGraphExtractor(model="m", api_base_url="http://127.0.0.1:1/v1").to_dict()
        assert data["kind_confidence"] == 0.7
        assert data["type"] == "llm" and data["api_key_env"] == "OPENAI_API_KEY" and "sk-" not in json.dumps(data)

    def test_extracts_through_the_chat_api(self, chat):
        document, chunks = make_document("nordvik-2020", NORDVIK_2020, dt.date(2020, 1, 28))
        chat.answers.append(
            (
                200,
                "Here you go:\n"
                + json.dumps(
                    {
                        "entities": [
                            {"name": "Nordvik SE", "kind": "organization", "aliases": ["Nordvik Group"]},
                            {"name": "Johan Lindqvist", "kind": "person", "aliases": ["Lindqvist"]},
                            {"name": "Henrik Dahl", "kind": "person", "aliases": ["Dahl"]},
                        ],
                        "facts": [
                            {
                                "sentence": 1,
                                "entities": ["Johan Lindqvist", "Nordvik SE"],
                                "valid_at": "2019-04",
                                "invalid_at": None,
                            },
                            {
                                "sentence": 3,
                                "entities": ["Dahl", "Nordvik Group"],
                                "valid_at": "2012",
                                "invalid_at": "2019",
                            },
                            {"sentence": 4, "entities": ["Nordvik"], "valid_at": None, "invalid_at": None},
                            {"sentence": 99, "entities": ["Nordvik"], "valid_at": "2020"},
                            {"sentence": 0, "entities": [], "valid_at": "2020"},
                        ],
                    }
                ),
            )
        )
        extractor = LLMGraphExtractor(model="extractor-1", api_base_url=chat.url, api_key_env="GRAPH_TEST_CHAT_KEY")
        graph = extractor.extract(document, chunks)
        request = chat.requests[0]
        assert request["auth"] == "Bearer sk-test-key" and request["body"]["model"] == "extractor-1"
        assert "2020-01-28" in request["body"]["messages"][0]["content"]
        assert numbered(request)[3] == "Dahl led the company from 2012 until 2019."
        by_sentence = {fact.sentence_index: fact for fact in graph.facts}
        assert sorted(by_sentence) == [1, 3, 4]  # out-of-range and entity-less facts are dropped
        assert by_sentence[3].entity_keys == ["henrik dahl", "nordvik"]  # aliases resolved, suffixes normalised
        assert (by_sentence[3].valid_at.iso(), by_sentence[3].invalid_at.iso()) == ("2012", "2019")
        assert by_sentence[1].date_method == "llm"
        assert by_sentence[4].valid_at.iso() == "2021" and by_sentence[4].date_method == "relative"  # rules' date
        assert by_sentence[1].chunk_id == chunks[0].chunk_id
        assert {m.key for m in graph.entities} == {"nordvik", "johan lindqvist", "henrik dahl"}
        # A kind the chat model names carries the stated confidence, so it can replace a weaker offline kind.
        dahl = next(m for m in graph.entities if m.key == "henrik dahl")
        assert dahl.kind == "person" and dahl.confidence == 0.7 and "chat model" in dahl.evidence

    def test_a_server_without_a_key_is_sent_a_placeholder_and_the_environment_stays_as_it_was(
        self, chat, monkeypatch: pytest.MonkeyPatch
    ):
        monkeypatch.delenv("GRAPH_TEST_UNSET_KEY", raising=False)
        document, chunks = make_document("d", NORDVIK_2020, dt.date(2020, 1, 28))
        chat.answers.append((200, json.dumps({"entities": [], "facts": []})))
        extractor = LLMGraphExtractor(model="m", api_base_url=chat.url, api_key_env="GRAPH_TEST_UNSET_KEY")
        extractor.extract(document, chunks)
        assert chat.requests[0]["auth"] == "Bearer not-needed"
        assert "GRAPH_TEST_UNSET_KEY" not in os.environ

    def test_malformed_answer_and_server_errors(self, chat):
        document, chunks = make_document("d", NORDVIK_2020, dt.date(2020, 1, 28))
        extractor = LLMGraphExtractor(model="m", api_base_url=chat.url, api_key_env="GRAPH_TEST_CHAT_KEY", timeout_s=5)
        chat.answers.append((200, "I cannot help with that."))
        with pytest.raises(ValueError, match="did not answer with JSON"):
            extractor.extract(document, chunks)
        chat.answers.extend([(500, ""), (500, "")])
        with pytest.raises(Exception) as excinfo:  # noqa: B017 - the OpenAI client's own error type
            extractor.extract(document, chunks)
        assert "500" in str(excinfo.value) or "server" in str(excinfo.value).lower()
        assert len(chat.requests) == 3  # one retry after the first 500
