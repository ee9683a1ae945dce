"""`auto` source selection: sources worth asking, with reasons."""

from __future__ import annotations

import pytest

from components.tools.source_selection import AutoSourceSelector, capitalised_phrases, select_sources


class TestSelectSources:
    @pytest.mark.parametrize(
        ("question", "expected"),
        [
            ("What is the latest news on Acme's earnings this week?", ["kb", "web"]),
            ("Which papers compare dense retrieval methods?", ["kb", "arxiv"]),
            ("What did we discuss about pricing last time?", ["kb", "memory"]),
            ("Summarise our internal policy document", ["kb"]),
        ],
    )
    def test_rules(self, question: str, expected: list[str]) -> None:
        selection = select_sources(question, known_entities=lambda q: [])
        assert selection.sources == expected
        for source in expected:
            assert selection.reasons[source] and not selection.reasons[source][0].startswith("not selected")

    def test_reasons_name_the_words_that_decided(self) -> None:
        selection = select_sources("Recent papers we discussed", known_entities=lambda q: [])
        assert selection.reasons["web"] == ["recency words: recent"]
        assert selection.reasons["arxiv"] == ["papers or methods: papers"]
        assert selection.reasons["memory"] == ["refers to earlier conversation: we discussed"]
        assert selection.reasons["graph"] == ["not selected: nothing in the question calls for it"]

    def test_graph_entities_come_from_the_lookup(self) -> None:
        selection = select_sources("Tell me about Globex", known_entities=lambda q: ["Globex"] if "Globex" in q else [])
        assert "graph" in selection.sources and selection.reasons["graph"] == ["entities known to the graph: Globex"]
        assert selection.entities == ["Globex"]

    def test_without_a_lookup_relation_questions_about_names_go_to_the_graph(self) -> None:
        assert "graph" in select_sources("Who acquired Initech?").sources
        assert "graph" not in select_sources("who acquired it?").sources

    def test_a_broken_lookup_never_stops_selection(self) -> None:
        def broken(question: str) -> list[str]:
            raise RuntimeError("graph down")

        selection = select_sources("Tell me about Globex", known_entities=broken)
        assert selection.sources == ["kb"]

    def test_empty_question_and_available_sources(self) -> None:
        assert select_sources("  ").sources == []
        limited = select_sources("latest arxiv papers", available=["kb", "arxiv"])
        assert limited.sources == ["kb", "arxiv"] and "web" not in limited.reasons

    def test_capitalised_phrases(self) -> None:
        assert capitalised_phrases("What did Angela Merkel say about Acme Corp and GPT-4?") == [
            "Angela Merkel",
            "Acme Corp",
            "GPT-4",
        ]


class TestAutoSourceSelector:
    def test_init_and_serialisation(self) -> None:
        with pytest.raises(ValueError, match="unknown sources"):
            AutoSourceSelector(available=["kb", "fax"])
        selector = AutoSourceSelector(available=["kb", "web"])
        assert AutoSourceSelector.from_dict(selector.to_dict()).available == ["kb", "web"]

    def test_auto_and_explicit(self) -> None:
        selector = AutoSourceSelector()
        auto = selector.run(query="latest papers on RAG", sources=["auto"])
        assert auto["sources"] == ["kb", "web", "arxiv"] and "recency words: latest" in auto["reasons"]["web"]
        explicit = selector.run(query="latest papers", sources=["memory", "kb", "fax"])
        assert explicit == {
            "sources": ["memory", "kb"],
            "reasons": {"memory": ["requested explicitly"], "kb": ["requested explicitly"]},
        }
