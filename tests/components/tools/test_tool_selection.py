"""The manager's tool choice: the `auto` source selection generalised to tools, with reasons, within the grants."""

from __future__ import annotations

import pytest

from components.tools.tool_selection import conversation_text, select_tools


class TestSelectTools:
    def test_the_knowledge_base_is_always_searched(self) -> None:
        selection = select_tools("how do vector indexes trade recall for speed")
        assert selection.tools == ["rag_search"] and selection.sources == ["kb"]
        assert selection.reasons["rag_search"] == ["source kb: the knowledge base is always searched"]

    @pytest.mark.parametrize(
        ("question", "tool", "reason"),
        [
            ("What is 17% of 2340?", "calculator", "asks for a computation"),
            ("Summarise https://example.org/report for me", "fetch_page", "names a page: https://example.org/report"),
            ("What is in my notes.md file?", "read_file", "mentions the workspace's files"),
            ("Save it to a file called brief.md", "write_file", "asks to save a file"),
            ("Who is Ada Lovelace?", "wikipedia_summary", "asks what or who something is"),
            ("What are the latest papers on retrieval?", "arxiv_search", "source arxiv: papers or methods: papers"),
            ("What happened this week in AI news?", "firecrawl_search", "source web: recency words"),
            ("Which documents do we have about HNSW?", "list_documents", "asks about the documents themselves"),
            ("What does chapter 3 of the handbook say?", "retrieve_book_content", "books, pages or sections"),
            ('Where is "ef_search" explained?', "hybrid_search", 'exact terms, names or numbers: "ef_search"'),
        ],
    )
    def test_the_question_brings_its_tools_with_reasons(self, question: str, tool: str, reason: str) -> None:
        selection = select_tools(question)
        assert tool in selection.tools
        assert any(text.startswith(reason) for text in selection.reasons[tool]), selection.reasons[tool]

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
