"""The Ask page's agent mode with the chat contract server as the model: offered only when a chat model is
configured; a question gets a cited answer, the tool calls with their arguments, status and time, and the
evidence."""

from __future__ import annotations

import pytest

# The package, imported before AppTest puts app/pages (which holds an ingest.py page) on the import path.
import ingest.demo  # noqa: F401
from tests.app.conftest import chat_model_with, run_page
from tests.components.knowledge_base.kb_corpus import corpus
from tests.contract_servers.chat import chat_server, chat_server_session  # noqa: F401 - fixtures


@pytest.fixture()
def agent_env(app_env, chat_server, embedding_model, monkeypatch):  # noqa: ANN001, ANN201, F811
    """A fresh collection holding the small test corpus, and the chat contract server as the chat model."""
    with chat_model_with(chat_server, app_env, corpus(embedding_model), monkeypatch) as server:
        yield server


@pytest.mark.integration
class TestAgentMode:
    def test_not_offered_without_a_chat_model(self, app_env, monkeypatch) -> None:  # noqa: ANN001
        from components.settings import reload_settings

        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        reload_settings()
        at = run_page("ask.py")
        assert len(at.toggle) == 0

    def test_a_question_lists_the_tool_calls_and_cites_the_evidence(self, agent_env) -> None:  # noqa: ANN001
        agent_env.plan_tool_call("rag_search", {"query": "sourdough starter", "top_k": 1})
        agent_env.plan_answer("A sourdough starter is flour and water fermented by wild yeast [1].")
        at = run_page("ask.py")
        at.toggle(key="agent_mode").set_value(True).run()
        at.text_area(key="agent_question").input("What is a sourdough starter?")
        at = at.button(key="agent_ask").click().run()
        assert not at.exception and not at.error
        # The model's answer is shown as text: its Markdown characters arrive escaped.
        text = " ".join(element.value for element in at.markdown).replace("\\", "")
        assert "fermented by wild yeast [1]" in text and "unsupported" not in text
        calls = at.table[0].value
        assert list(calls["tool"]) == ["rag_search"] and "success" in calls["status"].iloc[0]
        assert '"sourdough starter"' in calls["arguments"].iloc[0].replace("\\", "")
        assert any(label.startswith("[1] Baking sourdough bread") for label in (e.label for e in at.expander))

    def test_a_failing_model_is_one_sentence(self, agent_env, monkeypatch) -> None:  # noqa: ANN001
        from components.settings import reload_settings

        monkeypatch.setenv("TOOL_RETRIES", "0")
        reload_settings()
        agent_env.fail("500")
        at = run_page("ask.py")
        at.toggle(key="agent_mode").set_value(True).run()
        at.text_area(key="agent_question").input("What is a sourdough starter?")
        at = at.button(key="agent_ask").click().run()
        assert not at.exception
        assert at.error and at.error[0].value.startswith("The agent could not answer: the chat model failed")
