"""The research agent against the chat contract server scripted to call tools: a Haystack `Agent` over the tools
the manager chooses, every call through the executor, the answer's [n] citations checked against the chunks."""

from __future__ import annotations

import json
import threading

import pytest

from components.contracts import StatusKind
from components.tools.research_agent import ResearchAgent, agent_result_json, chat_generator_from_settings
from tests.components.knowledge_base.kb_corpus import corpus


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


@pytest.fixture()
def kb(collection_name, embedding_model, database_url, monkeypatch):  # noqa: ANN001, ANN201
    """The small test corpus in a fresh collection that the tools (which read the settings) search."""
    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import reload_settings

    monkeypatch.setenv("KB_COLLECTION", collection_name)
    store = open_knowledge_base(reload_settings(), collection_name)
    for document, chunks in corpus(embedding_model):
        store.upsert_document(document, chunks)
    yield collection_name
    monkeypatch.delenv("KB_COLLECTION")
    reload_settings()


def _tool_messages(server) -> list[dict]:  # noqa: ANN001
    """The tool results the model was sent, in order (each request repeats the earlier ones: take the last)."""
    requests = server.chat_requests()
    return [m for m in requests[-1]["messages"] if m["role"] == "tool"] if requests else []


class TestResearchAgent:
    def test_init_and_serialisation(self) -> None:
        agent = ResearchAgent(profile="reader", max_agent_steps=4)
        data = agent.to_dict()
        assert data["init_parameters"]["profile"] == "reader" and data["init_parameters"]["chat_generator"] is None
        assert ResearchAgent.from_dict(data).to_dict() == data
        with pytest.raises(ValueError, match="unknown tool profile"):
            ResearchAgent(profile="ghost")
        with pytest.raises(ValueError, match="max_agent_steps"):
            ResearchAgent(max_agent_steps=0)

    def test_the_chat_model_is_taken_when_built_and_serialised(self, monkeypatch) -> None:  # noqa: ANN001
        from components.settings import reload_settings

        monkeypatch.setenv("OPENAI_API_KEY", "key-of-the-test")
        monkeypatch.setenv("OPENAI_MODEL", "model-when-built")
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        monkeypatch.setenv("TOOL_RETRIES", "1")
        monkeypatch.setenv("UPSTREAM_MAX_BYTES", "54321")
        reload_settings()
        agent = ResearchAgent(profile="reader")
        data = agent.to_dict()
        params = data["init_parameters"]
        assert (params["model"], params["api_base_url"], params["retries"], params["max_response_bytes"]) == (
            "model-when-built",
            "http://127.0.0.1:9/v1",
            1,
            54321,
        )
        assert "key-of-the-test" not in json.dumps(data)
        monkeypatch.setenv("OPENAI_MODEL", "model-changed-later")
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
        reload_settings()
        assert agent._generator.model == "model-when-built"  # noqa: SLF001 - the chat model built with the agent
        loaded = ResearchAgent.from_dict(data)
        assert loaded.to_dict() == data
        assert (loaded._generator.model, loaded._generator.api_base_url) == (  # noqa: SLF001
            "model-when-built",
            "http://127.0.0.1:9/v1",
        )
        monkeypatch.undo()
        reload_settings()

    def test_the_graph_lookup_is_made_when_built_and_never_opened_by_a_question(self, monkeypatch) -> None:  # noqa: ANN001
        from components.tools import research_agent

        opened: list[int] = []

        def lookup(settings=None) -> None:  # noqa: ANN001
            opened.append(1)
            return None  # the settings name no usable graph: the choice is made from words

        monkeypatch.setattr(research_agent, "_entity_lookup", lookup)
        agent = ResearchAgent(profile="reader")
        assert opened == [1]
        selection = research_agent.choose_tools(
            "Who founded Nordvik?",
            profile="reader",
            profiles=agent._profiles,
            known_entities=None,  # noqa: SLF001
        )
        assert opened == [1] and "rag_search" in selection.tools
        research_agent.choose_tools("Who founded Nordvik?", profile="reader")  # the command's default opens it
        assert opened == [1, 1]

    def test_no_usable_graph_is_said_in_the_status_not_warned_when_built(self, chat_env, caplog) -> None:  # noqa: ANN001
        import logging

        from components.settings import get_settings, settings_in_force

        no_uri = get_settings().model_copy(update={"graph_backend": "neo4j", "neo4j_uri": None})
        with caplog.at_level(logging.WARNING), settings_in_force(no_uri):
            agent = ResearchAgent(profile="reader")  # what export and validate do
        assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
        result = agent.run(question="What is 12 * (3 + 4)?")
        assert result["status"].ok and "84.0" in result["answer"]
        assert result["status"].message == (
            "1 tool call(s); the tool choice named no graph entities (GRAPH_BACKEND is neo4j but NEO4J_URI is not set.)"
        )
        assert get_settings().graph_backend != "neo4j" or get_settings().neo4j_uri

    def test_no_chat_model_configured_is_one_sentence(self, monkeypatch) -> None:  # noqa: ANN001
        from components.settings import reload_settings

        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        reload_settings()
        with pytest.raises(ValueError, match="No tool-calling chat model is configured"):
            chat_generator_from_settings()
        agent = ResearchAgent()
        agent.warm_up()  # builds without a model, so a server can still deploy it
        result = agent.run(question="What is 2 + 2?")
        assert result["status"].status is StatusKind.ERROR and result["answer"] == ""
        assert result["status"].message.startswith("No tool-calling chat model is configured")

    def test_calls_the_calculator_the_manager_chose(self, chat_env) -> None:  # noqa: ANN001
        result = ResearchAgent(profile="reader").run(question="What is 12 * (3 + 4)?")
        assert result["status"].ok and "84.0" in result["answer"]
        assert "calculator" in result["selection"]["tools"]
        first = chat_env.chat_requests()[0]
        assert first["model"] == "contract-model"
        offered = {tool["function"]["name"]: tool["function"] for tool in first["tools"]}
        assert set(offered) == set(result["selection"]["tools"])
        assert offered["calculator"]["parameters"]["required"] == ["expression"]
        assert [(call["tool"], call["status"]) for call in result["tool_calls"]] == [("calculator", "success")]

    def test_two_steps_list_documents_then_get_document_and_cited_answer(self, chat_env, kb) -> None:  # noqa: ANN001
        chat_env.plan_tool_call("list_documents", {"search": "bread"})
        chat_env.plan_tool_call("get_document", {"document_id": "doc-bread"})
        chat_env.plan_answer(
            "A sourdough starter is flour and water fermented by wild yeast [1]. "
            "Bake the loaf in a hot Dutch oven for a crisp crust [2]."
        )
        result = ResearchAgent(profile="reader").run(question="Which documents do we have? Read the bread one.")
        assert result["status"].ok
        assert {"list_documents", "get_document"} <= set(result["selection"]["tools"])
        assert [(c["tool"], c["status"]) for c in result["tool_calls"]] == [
            ("list_documents", "success"),
            ("get_document", "success"),
        ]
        assert [document.id for document in result["chunks"]] == ["doc-bread:0", "doc-bread:1"]
        assert all(document.meta["source_title"] == "Baking sourdough bread" for document in result["chunks"])
        assert result["citations"] == [1, 2] and result["invalid_citations"] == []
        assert [sentence["supported"] for sentence in result["sentences"]] == [True, True]
        listed, read = (json.loads(m["content"]) for m in _tool_messages(chat_env))
        assert [d["document_id"] for d in listed["result"]["documents"]] == ["doc-bread"]
        assert [c["cite"] for c in read["result"]["chunks"]] == ["[1]", "[2]"]
        payload = agent_result_json(result)
        assert payload["chunks"][0]["n"] == 1 and payload["chunks"][0]["source_id"] == "doc-bread"
        json.dumps(payload)

    def test_the_check_reads_the_question_an_abstention_names_a_part_of(self, chat_env, kb) -> None:  # noqa: ANN001
        chat_env.plan_tool_call("get_document", {"document_id": "doc-bread"})
        chat_env.plan_answer(
            "A sourdough starter is flour and water fermented by wild yeast [1]. "
            "The sources do not answer this: how long the dough rests. "
            "Not sure of the short answer, but Zorg Tallow bakes the loaf at dawn."
        )
        result = ResearchAgent(profile="reader").run(question="Read the document doc-bread. How long does dough rest?")
        assert result["status"].ok
        checked = [(sentence["supported"], sentence["abstains"]) for sentence in result["sentences"]]
        assert checked == [(True, False), (True, True), (False, False)]

    def test_a_tool_that_times_out_is_reported_to_the_model(self, chat_env, kb, work_dir, monkeypatch) -> None:  # noqa: ANN001
        from components.knowledge_base.get_document import GetDocument
        from components.settings import reload_settings

        profiles = work_dir / "tools.yaml"
        profiles.write_text("policy:\n  get_document: {timeout_s: 1}\n")
        monkeypatch.setenv("TOOL_PROFILES_FILE", str(profiles))
        reload_settings()
        slow_run = GetDocument.run
        release = threading.Event()

        def slow(self, document_id):  # noqa: ANN001, ANN202
            release.wait(60)  # released once the agent has answered
            return slow_run(self, document_id=document_id)

        monkeypatch.setattr(GetDocument, "run", slow)
        chat_env.plan_tool_call("get_document", {"document_id": "doc-bread"})
        try:
            result = ResearchAgent(profile="reader").run(question="Read the document doc-bread.")
        finally:
            release.set()
        call = result["tool_calls"][0]
        # The tool would take 60 s: a call of a few seconds proves its 1 s timeout ended it (room for a loaded
        # machine); at least 0.9 s proves it waited for the timeout.
        assert call["tool"] == "get_document" and call["status"] == "timeout" and 900 <= call["ms"] < 1000 + 3000
        assert "get_document did not answer within 1 s" in result["answer"]
        assert result["chunks"] == [] and result["status"].ok
        monkeypatch.delenv("TOOL_PROFILES_FILE")
        reload_settings()

    def test_a_tool_the_profile_does_not_grant_is_refused(self, chat_env, workspace) -> None:  # noqa: ANN001
        chat_env.plan_tool_call("write_file", {"path": "note.txt", "content": "x"}, offered_only=False)
        result = ResearchAgent(profile="reader").run(question="Save a note for me.")
        assert "write_file" not in {t["function"]["name"] for t in chat_env.chat_requests()[0].get("tools", [])}
        assert [(c["tool"], c["status"]) for c in result["tool_calls"]] == [("write_file", "error")]
        assert "profile 'reader' is not granted the tool 'write_file'." in result["answer"]
        assert not (workspace / "note.txt").exists()

    def test_malformed_arguments_go_back_to_the_model_three_times(self, chat_env, kb) -> None:  # noqa: ANN001
        for _ in range(4):
            chat_env.plan_tool_call("get_document", {"document_id": 42})
        chat_env.plan_answer("I could not read the document.")
        result = ResearchAgent(profile="reader").run(question="Read the document doc-bread.")
        assert result["answer"] == "I could not read the document."
        assert [c["status"] for c in result["tool_calls"]] == ["error"] * 4
        replies = [json.loads(m["content"]) for m in _tool_messages(chat_env)]
        assert len(replies) == 4
        for reply, left in zip(
            replies[:3], ("2 attempt(s) left", "1 attempt(s) left", "no attempts left"), strict=True
        ):
            assert "invalid input for get_document: document_id: 42 is not of type 'string'" in reply["message"]
            assert left in reply["retry"]
        assert "not run again" in replies[3]["message"]
        assert len(chat_env.chat_requests()) == 5


class TestToolAgentCommand:
    def test_research_tools_agent_answers(self, chat_env, capsys) -> None:  # noqa: ANN001
        from pipelines.cli import main

        assert main(["tools", "agent", "What is 2 + 2 * 10?"]) == 0
        captured = capsys.readouterr()
        assert "22.0" in captured.out and "calculator" in captured.err

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
