"""The manager's tool choice: the `auto` source selection generalised to tools, with reasons, within the grants."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.tools.tool_selection import conversation_text, select_tools
from pipelines.evaluation.jsonl import load_jsonl

# Labelled questions: a tool each calls for, and how the reason given for it begins.
TOOL_CHOICES = load_jsonl(
    Path(__file__).resolve().parents[2] / "data" / "tool_choices.jsonl", required=("question", "tool", "reason")
)


class TestSelectTools:
    def test_the_knowledge_base_is_always_searched(self) -> None:
        selection = select_tools("how do vector indexes trade recall for speed")
        assert selection.tools == ["rag_search"] and selection.sources == ["kb"]
        assert selection.reasons["rag_search"] == ["source kb: the knowledge base is always searched"]

    @pytest.mark.parametrize("case", TOOL_CHOICES, ids=lambda case: case["tool"])
    def test_the_question_brings_its_tools_with_reasons(self, case: dict[str, str]) -> None:
        selection = select_tools(case["question"])
        assert case["tool"] in selection.tools
        reasons = selection.reasons[case["tool"]]
        assert any(text.startswith(case["reason"]) for text in reasons), reasons

    def test_the_graph_tools_follow_known_entities(self) -> None:
        selection = select_tools(
            "When did Nordvik and Talmont partner?", known_entities=lambda text: ["Nordvik", "Talmont"]
        )
        assert {
            "graph_search",
            "get_entity_timeline",
            "get_entity_relationships",
            "perform_comprehensive_search",
        } <= set(selection.tools)
        assert selection.reasons["graph_search"] == ["source graph: entities known to the graph: Nordvik, Talmont"]

    def test_a_broken_entity_lookup_is_treated_as_none(self) -> None:
        def broken(text: str) -> list[str]:
            raise ConnectionError("graph down")

        assert select_tools("When did Nordvik deliver the NV900?", known_entities=broken).tools[0] == "rag_search"

    def test_only_granted_tools_are_chosen_and_the_rest_say_why(self) -> None:
        selection = select_tools("latest papers, and what is 2 * 21?", available=["rag_search", "calculator"])
        assert selection.tools == ["rag_search", "calculator"]
        assert selection.reasons["arxiv_search"][-1] == "not granted to this profile"
        assert selection.reasons["firecrawl_search"][-1] == "not granted to this profile"

    def test_an_empty_question_chooses_nothing(self) -> None:
        assert select_tools("  ").tools == [] and select_tools("").reasons == {"*": ["the question is empty"]}

    def test_conversation_text_takes_the_last_turns(self) -> None:
        turns = [{"role": "user", "content": f"q{n}"} for n in range(6)]
        assert conversation_text(turns, turns=2) == "q4\nq5"
        assert conversation_text([{"role": "user"}, "junk"]) == ""
