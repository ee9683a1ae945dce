"""The tool-calling Agent: a Haystack `Agent` over every enabled tool, against the chat contract server."""

from __future__ import annotations

import json

import pytest
from haystack.dataclasses import ChatMessage

from components.tools.agent import agent_tools, build_tool_agent, chat_generator_from_settings
from components.tools.guarded_tool import GuardedTool


@pytest.fixture()
def chat_env(chat_server, monkeypatch):  # noqa: ANN001, ANN201
    from components.settings import reload_settings

    monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url_v1)
    monkeypatch.setenv("OPENAI_MODEL", "contract-model")
    reload_settings()
    yield chat_server
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name)
    reload_settings()


class TestGuardedTool:
    def test_copies_the_tool_sockets_and_serialises(self) -> None:
        tool = GuardedTool(tool="write_file", profile="reader")
        sockets = tool.__haystack_input__._sockets_dict
        assert set(sockets) == {"path", "content", "overwrite"} and sockets["overwrite"].default_value is False
        assert GuardedTool.from_dict(tool.to_dict()).to_dict() == tool.to_dict()
        with pytest.raises(ValueError, match="unknown tool"):
            GuardedTool(tool="nope")

    def test_runs_through_the_executor(self) -> None:
        refused = GuardedTool(tool="write_file", profile="reader").run(path="a.txt", content="x")
        assert refused["output"] == {} and refused["status"]["status"] == "error"
        assert "not granted" in refused["status"]["message"]
        ok = GuardedTool(tool="calculator").run(expression="2+3")
        assert ok["output"]["result"] == 5.0 and ok["status"]["status"] == "success"


class TestToolAgent:
    def test_only_enabled_tools_are_offered(self) -> None:
        assert [tool.name for tool in agent_tools("reader")] == [
            "calculator",
            "read_file",
            "list_directory",
            "wikipedia_summary",
        ]

    def test_no_chat_model_configured_is_one_sentence(self, monkeypatch) -> None:  # noqa: ANN001
        from components.settings import reload_settings

        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        reload_settings()
        with pytest.raises(ValueError, match="No tool-calling chat model is configured"):
            chat_generator_from_settings()

    def test_agent_calls_the_calculator(self, chat_env) -> None:  # noqa: ANN001
        agent = build_tool_agent(profile="reader")
        agent.warm_up()
        result = agent.run(messages=[ChatMessage.from_user("What is 12 * (3 + 4)?")])
        assert "84.0" in result["last_message"].text
        first = json.loads(chat_env.requests[0]["body"])
        assert first["model"] == "contract-model"
        assert [t["function"]["name"] for t in first["tools"]] == [
            "calculator",
            "read_file",
            "list_directory",
            "wikipedia_summary",
        ]
        assert first["tools"][0]["function"]["parameters"]["required"] == ["expression"]
        second = json.loads(chat_env.requests[1]["body"])
        tool_message = second["messages"][-1]
        assert tool_message["role"] == "tool" and '"result": 84.0' in tool_message["content"]

    def test_agent_reads_a_workspace_file(self, chat_env, workspace) -> None:  # noqa: ANN001
        (workspace / "brief.md").write_text("Acme revenue rose 12 percent.")
        chat_env.plan_tool_call("read_file", {"path": "brief.md"})
        agent = build_tool_agent(profile="analyst")
        agent.warm_up()
        reply = agent.run(messages=[ChatMessage.from_user("What does my brief say?")])["last_message"].text
        assert "Acme revenue rose 12 percent." in reply

    def test_a_refused_tool_call_reaches_the_model_as_a_status(self, chat_env, workspace) -> None:  # noqa: ANN001
        chat_env.plan_tool_call("read_file", {"path": "../../etc/passwd"})
        agent = build_tool_agent(profile="analyst")
        agent.warm_up()
        reply = agent.run(messages=[ChatMessage.from_user("Read the passwords")])["last_message"].text
        assert "goes above the workspace" in reply and "root:" not in reply


class TestToolAgentCommand:
    def test_research_tools_agent_answers(self, chat_env, capsys) -> None:  # noqa: ANN001
        from pipelines.cli import main

        assert main(["tools", "agent", "What is 2 + 2 * 10?"]) == 0
        assert "22.0" in capsys.readouterr().out

    def test_a_failing_chat_server_is_one_sentence(self, chat_env, capsys, monkeypatch) -> None:  # noqa: ANN001
        from components.settings import reload_settings
        from pipelines.cli import main

        monkeypatch.setenv("TOOL_RETRIES", "0")
        reload_settings()
        chat_env.fail("500")
        assert main(["tools", "agent", "What is 2 + 2?"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("research: the chat model failed:") and "Traceback" not in err

    def test_rate_limited_chat_server_is_retried_by_the_client(self, chat_env, capsys) -> None:  # noqa: ANN001
        from pipelines.cli import main

        chat_env.fail("429", times=1, retry_after=0)
        assert main(["tools", "agent", "What is 3 * 3?"]) == 0
        assert "9.0" in capsys.readouterr().out
        assert len([r for r in chat_env.requests if r["path"] == "/v1/chat/completions"]) == 3
