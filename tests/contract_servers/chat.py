"""An OpenAI-compatible chat contract server: `POST /v1/chat/completions` with tool calls, on 127.0.0.1.

It checks what the `openai` client sends (Bearer key, `model`, `messages`, `tools` as `{"type": "function",
"function": {"name", "description", "parameters"}}`) and answers in the documented `chat.completion` shape, with
`tool_calls` (`id`, `type: function`, `function.name`, `function.arguments` as a JSON string) and
`finish_reason` `tool_calls` or `stop`. Errors use OpenAI's `{"error": {"message", "type", "param", "code"}}`.

Which tool it calls is decided, deterministically: first from the steps a test scripted (`plan_tool_call`, also
of a tool it was not offered with `offered_only=False`, or with raw argument text; `plan_answer` for a text
turn), taken in order, one per turn, even after a tool result, so a test can script a multi-step run; else from
the question (an arithmetic expression and a `calculator` tool -> a calculator call). With nothing scripted, once a
tool result is in the conversation it answers with text quoting that result; a plain question gets `answer`.
`stream: true` answers as server-sent `chat.completion.chunk` events, a word at a time, ending in `[DONE]`.
Faults come from the shared machinery.
Fixture `chat_server`; manual run: `python -m tests.contract_servers.chat`.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

from tests.contract_servers import ContractServer, Reply, contract_fixtures

_ARITHMETIC = re.compile(r"[\d(][\d\s+\-*/().%^]*[\d)]")


DEFAULT_ANSWER = "I have no tool to help with that."


def _stream(model: str, text: str) -> bytes:
    """The answer as OpenAI's server-sent `chat.completion.chunk` events, a word at a time, then `[DONE]`."""

    def event(delta: dict[str, Any], finish: str | None) -> bytes:
        chunk = {
            "id": "chatcmpl-contract-stream",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(chunk)}\n\n".encode()

    words = text.split(" ")
    parts = [event({"role": "assistant", "content": ""}, None)]
    parts += [event({"content": word + (" " if i < len(words) - 1 else "")}, None) for i, word in enumerate(words)]
    parts.append(event({}, "stop"))
    return b"".join(parts) + b"data: [DONE]\n\n"


def _error(status: int, message: str, kind: str = "invalid_request_error", code: str | None = None) -> Reply:
    return Reply(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})


class ChatContractServer(ContractServer):
    """A deterministic tool-calling chat model behind the OpenAI chat completions API."""

    name = "chat"

    def __init__(self, port: int = 0, api_key: str | None = "test-chat-key") -> None:
        super().__init__(port, api_key)
        self._planned: list[tuple[str, Any, bool]] = []
        self.answer = DEFAULT_ANSWER

    def reset(self) -> None:
        super().reset()
        self.answer = DEFAULT_ANSWER
        with self.data_lock:
            self._planned.clear()

    def chat_requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat requests received, in order."""
        return [json.loads(r["body"]) for r in list(self.requests) if r["path"].rstrip("/") == "/v1/chat/completions"]

    def plan_tool_call(self, name: str, arguments: dict[str, Any] | str, offered_only: bool = True) -> None:
        """Make the next scripted turn call `name` with `arguments` (a dict, or raw argument text); with
        `offered_only` the call waits until a request offers the tool, else it is made regardless (a model asking
        for a tool it was not given)."""
        with self.data_lock:
            self._planned.append((name, arguments, offered_only))

    def plan_answer(self, text: str) -> None:
        """Make the next scripted turn answer with `text`."""
        with self.data_lock:
            self._planned.append(("", text, False))

    def rate_limited_reply(self, headers: dict[str, str]) -> Reply:
        reply = _error(429, "Rate limit reached for requests", "requests", "rate_limit_exceeded")
        reply.headers = headers
        return reply

    def server_error_reply(self) -> Reply:
        return _error(500, "The server had an error while processing your request.", "server_error")

    def settings_lines(self) -> list[str]:
        key = f"OPENAI_API_KEY={self.api_key}" if self.api_key else "no key"
        return [f"Chat contract server: OPENAI_BASE_URL={self.base_url_v1} ({key}; Ctrl-C stops)"]

    @property
    def base_url_v1(self) -> str:
        """The `api_base_url` for OpenAI clients."""
        return f"{self.base_url}/v1"

    def handle(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Reply:
        if path.rstrip("/") != "/v1/chat/completions" or method != "POST":
            return _error(404, f"Unknown request URL: {method} {path}.", code="unknown_url")
        if not self.authorized(headers):
            return _error(401, "Incorrect API key provided.", code="invalid_api_key")
        try:
            request = json.loads(body or b"{}")
        except json.JSONDecodeError:
            return _error(400, "We could not parse the JSON body of your request.")
        problem = self._validate(request)
        if problem:
            return _error(400, problem)
        message, finish = self._respond(request)
        if request.get("stream"):
            if message.get("tool_calls"):
                return _error(400, "This contract server streams text answers only.", code="unsupported")
            return Reply(200, _stream(request["model"], message["content"] or ""), "text/event-stream")
        return Reply(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request["model"],
                "system_fingerprint": "fp_contract",
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    @staticmethod
    def _validate(request: dict[str, Any]) -> str | None:
        if not request.get("model"):
            return "you must provide a model parameter"
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            return "'messages' must be a non-empty array"
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in (
                "system",
                "developer",
                "user",
                "assistant",
                "tool",
            ):
                return "each message needs a valid role"
            if message["role"] == "tool" and not message.get("tool_call_id"):
                return "messages with role 'tool' must have a 'tool_call_id'"
        for tool in request.get("tools") or []:
            function = tool.get("function") if isinstance(tool, dict) else None
            if tool.get("type") != "function" or not isinstance(function, dict) or not function.get("name"):
                return "each tool must be {'type': 'function', 'function': {'name': ...}}"
            if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", function["name"]):
                return f"invalid tool name {function['name']!r}"
            if "parameters" in function and not isinstance(function["parameters"], dict):
                return "tool parameters must be a JSON schema object"
        return None

    def _respond(self, request: dict[str, Any]) -> tuple[dict[str, Any], str]:
        messages = request["messages"]
        offered = {tool["function"]["name"] for tool in request.get("tools") or []}
        last = messages[-1]
        call = None
        with self.data_lock:
            if self._planned and (self._planned[0][0] in offered or not self._planned[0][2]):
                name, arguments, _ = self._planned.pop(0)
                if not name:
                    return {"role": "assistant", "content": arguments}, "stop"
                call = (name, arguments)
        if call is None and last["role"] == "tool":
            return {"role": "assistant", "content": f"The tool answered: {last.get('content', '')}"}, "stop"
        if call is None and "calculator" in offered and last["role"] == "user":
            match = _ARITHMETIC.search(str(last.get("content") or ""))
            if match and re.search(r"[+\-*/^%]", match.group(0)):
                call = ("calculator", {"expression": match.group(0).strip()})
        if call is None:
            return {"role": "assistant", "content": self.answer}, "stop"
        tool_call = {
            "id": f"call_{uuid.uuid4().hex[:12]}",
            "type": "function",
            "function": {"name": call[0], "arguments": call[1] if isinstance(call[1], str) else json.dumps(call[1])},
        }
        return {"role": "assistant", "content": None, "tool_calls": [tool_call]}, "tool_calls"


chat_server_session, chat_server = contract_fixtures(ChatContractServer, "chat")


if __name__ == "__main__":
    ChatContractServer.serve_by_hand("Serve the chat contract server on 127.0.0.1.", 8001, "test-chat-key")
