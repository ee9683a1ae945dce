"""The tools against the real hosted services; skipped unless their settings are given in the environment.

The test conftest clears OPENAI_* so no test reaches a developer's model by accident; the real chat model is
named by EXTERNAL_OPENAI_API_KEY, EXTERNAL_OPENAI_BASE_URL (optional) and EXTERNAL_OPENAI_MODEL (optional).
"""

from __future__ import annotations

import os

import pytest


@pytest.mark.external
class TestRealWikipedia:
    def test_summary_from_the_real_mediawiki_api(self) -> None:
        url = os.environ.get("RESEARCH_TEST_WIKIPEDIA_API_URL")
        if not url:
            pytest.skip(
                "RESEARCH_TEST_WIKIPEDIA_API_URL is not set (the suite points WIKIPEDIA_API_URL at a closed port)"
            )
        from components.tools.wikipedia import WikipediaSummary

        result = WikipediaSummary(api_url=url).run(title="Alan Turing")
        assert result["found"] and "Turing" in result["summary"] and result["url"].startswith("https://")


@pytest.mark.external
class TestRealChatModel:
    def test_agent_uses_the_calculator(self) -> None:
        key = os.environ.get("EXTERNAL_OPENAI_API_KEY")
        if not key:
            pytest.skip("EXTERNAL_OPENAI_API_KEY is not set")
        from haystack.components.generators.chat import OpenAIChatGenerator
        from haystack.utils import Secret

        from components.resilience import telemetry
        from components.tools.research_agent import ResearchAgent

        generator = OpenAIChatGenerator(
            api_key=Secret.from_env_var("EXTERNAL_OPENAI_API_KEY"),
            model=os.environ.get("EXTERNAL_OPENAI_MODEL", "gpt-4o-mini"),
            api_base_url=os.environ.get("EXTERNAL_OPENAI_BASE_URL"),
        )
        agent = ResearchAgent(profile="reader", chat_generator=generator)
        agent.warm_up()
        reply = agent.run(question="Use the calculator: what is 1234 * 5678?")
        assert "7006652" in reply["answer"].replace(",", "")
        assert telemetry.snapshot()["calculator"]["successes"] >= 1
