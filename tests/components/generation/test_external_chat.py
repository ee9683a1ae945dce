"""The chat generator against a real OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp).

The suite's conftest removes OPENAI_* so a developer's settings never leak into tests; point this test at a real
server with RESEARCH_TEST_OPENAI_BASE_URL, RESEARCH_TEST_OPENAI_API_KEY and RESEARCH_TEST_OPENAI_MODEL.
"""

from __future__ import annotations

import os

import pytest
from haystack.dataclasses import ChatMessage

from components.contracts import StatusKind
from components.generation import ResearchGenerator
from tests.components.ranking.chunks import kb_document

pytestmark = [
    pytest.mark.external,
    pytest.mark.skipif(
        not (os.environ.get("RESEARCH_TEST_OPENAI_BASE_URL") and os.environ.get("RESEARCH_TEST_OPENAI_API_KEY")),
        reason="RESEARCH_TEST_OPENAI_BASE_URL and RESEARCH_TEST_OPENAI_API_KEY are not set",
    ),
]


class TestResearchGeneratorExternal:
    def test_real_server_answers_with_a_citation(self, monkeypatch):
        monkeypatch.setenv("OPENAI_API_KEY", os.environ["RESEARCH_TEST_OPENAI_API_KEY"])
        generator = ResearchGenerator(
            generator="openai",
            api_base_url=os.environ["RESEARCH_TEST_OPENAI_BASE_URL"],
            model=os.environ.get("RESEARCH_TEST_OPENAI_MODEL", "gpt-4o-mini"),
            timeout_s=60,
        )
        documents = [kb_document("wa", "Warsaw, in east-central Poland, stands on the Vistula River.")]
        prompt = [
            ChatMessage.from_system("Answer from the numbered sources only and cite them as [n]."),
            ChatMessage.from_user(
                "[1] Warsaw, in east-central Poland, stands on the Vistula River.\n\nQuestion: "
                "Which river does Warsaw stand on?"
            ),
        ]
        result = generator.run(messages=prompt, documents=documents, query="Which river does Warsaw stand on?")
        assert result["status"].status is StatusKind.SUCCESS, result["status"].message
        assert "Vistula" in result["replies"][0]
