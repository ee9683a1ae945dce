"""Disagreeing sources: a real conflict is reported with each side's citations; agreeing values are not."""

from __future__ import annotations

import pytest
from haystack import Document

from components.contracts import RankedDocuments
from components.generation.conflict_finder import ConflictFinder, find_conflicts, timeline_conflicts


def chunks(*texts: str) -> list[Document]:
    return [
        Document(content=text, meta={"document_id": f"doc-{n}", "source_date": f"2024-0{n}-01"})
        for n, text in enumerate(texts, start=1)
    ]


class TestConflictFinder:
    def test_a_date_conflict_is_said_in_the_answer_and_structured(self) -> None:
        documents = chunks(
            "Brevik Labs was founded in 2019 in Kestrel Bay.",
            "The drone maker Brevik Labs was founded in 2020 by Orla Venn.",
        )
        result = ConflictFinder().run(
            query="When was Brevik Labs founded?", answer="Brevik Labs was founded in 2019 [1].", documents=documents
        )
        assert result["answer"] == "Brevik Labs was founded in 2019 [1]. Sources disagree: 2019 [1], 2020 [2]."
        [conflict] = result["conflicts"]
        assert conflict["subject"] == "Brevik Labs" and conflict["attribute"] == "founded"
        assert conflict["values"] == [
            {"value": "2019", "citations": [1], "document_dates": ["2024-01-01"]},
            {"value": "2020", "citations": [2], "document_dates": ["2024-02-01"]},
        ]

    def test_the_answer_builders_view_is_read_as_its_list(self) -> None:
        documents = chunks(
            "Brevik Labs was founded in 2019 in Kestrel Bay.",
            "The drone maker Brevik Labs was founded in 2020 by Orla Venn.",
        )
        asked = {"query": "When was Brevik Labs founded?", "answer": "Brevik Labs was founded in 2019 [1]."}
        shared = ConflictFinder().run(**asked, documents=RankedDocuments(tuple(documents)))
        assert shared == ConflictFinder().run(**asked, documents=documents)
        assert len(shared["conflicts"]) == 1

    @pytest.mark.parametrize(
        ("query", "texts"),
        [
            (
                "How much did Brevik Labs raise in its seed round?",
                (
                    "Brevik Labs raised $4 million in its seed round.",
                    "In its seed round Brevik Labs raised $6 million.",
                ),
            ),
            ("Who leads Brevik Labs?", ("Brevik Labs is led by Orla Venn.", "Tomas Hale leads Brevik Labs.")),
            (
                "Where is Brevik Labs headquartered?",
                ("Brevik Labs is headquartered in Oslo.", "Brevik Labs is headquartered in Bergen."),
            ),
            (
                "How many employees does Brevik Labs have?",
                ("Brevik Labs has 120 employees.", "Brevik Labs has 340 employees."),
            ),
        ],
    )
    def test_amounts_people_places_and_counts_conflict_too(self, query: str, texts: tuple[str, str]) -> None:
        [conflict] = find_conflicts(query, chunks(*texts))
        assert [side["citations"] for side in conflict["values"]] == [[1], [2]]

    @pytest.mark.parametrize(
        ("query", "first", "second"),
        [
            pytest.param(
                "When was Brevik Labs founded?",
                "Brevik Labs was founded in 2019.",
                "Brevik Labs was founded in March 2019 in Kestrel Bay.",
                id="the same value up to precision",
            ),
            pytest.param(
                "How much did Brevik Labs raise?",
                "Brevik Labs raised 40 million dollars in 2021.",
                "In 2022 Brevik Labs raised $100 million.",
                id="values true at different times",
            ),
            pytest.param(
                "How much did Brevik Labs raise?",
                "Brevik Labs raised $40 million.",
                "Brevik Labs raised $40,000,000 from Kestrel Fund.",
                id="the same amount written differently",
            ),
            pytest.param(
                "When was Brevik Labs founded?",
                "Brevik Labs was founded in 2019.",
                "Zorvan Systems was founded in 2016.",
                id="another subject's value",
            ),
            pytest.param(
                "Who leads Brevik Labs?",
                "Brevik Labs is led by Orla Venn.",
                "Venn leads Brevik Labs.",
                id="a name and its shorter form",
            ),
            pytest.param(
                "When was Brevik OS 3.0 released?",
                "Brevik OS 3.0 was released on December 3, 2008.",
                "Brevik OS 2.0 was released in October 2000.",
                id="another version of the subject",
            ),
            pytest.param(
                "When was Brevik Labs founded?",
                "Brevik Labs was founded in 2019.",
                "It was founded in 2016, two years before Brevik Labs.",
                id="a pronoun in a sentence that names the subject apart",
            ),
        ],
    )
    def test_agreeing_values_are_no_conflict(self, query: str, first: str, second: str) -> None:
        assert find_conflicts(query, chunks(first, second)) == []

    def test_a_question_asking_for_no_value_is_not_parsed(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from components.generation import conflict_finder

        parsed: list[str] = []
        light = conflict_finder.parse_question
        monkeypatch.setattr(conflict_finder, "parse_question", lambda text: parsed.append(text) or light(text))
        documents = chunks("Brevik Labs was founded in 2019.", "Brevik Labs was founded in 2017.")
        assert find_conflicts("What about Brevik Labs and its founders?", documents) == []
        assert parsed == []
        assert find_conflicts("When was Brevik Labs founded?", documents)  # a value asked: read, and it conflicts
        assert parsed

    def test_round_trips_and_checks_its_parameter(self) -> None:
        finder = ConflictFinder(max_conflicts=2)
        assert ConflictFinder.from_dict(finder.to_dict()).max_conflicts == 2
        with pytest.raises(ValueError, match="max_conflicts"):
            ConflictFinder(max_conflicts=0)


class TestTimelineConflicts:
    FACTS = [
        {"fact": "Zorvan Systems, a sensor maker, was founded in 2016.", "valid_at": "2016", "document_id": "a"},
        {"fact": "According to a filing, Zorvan Systems was founded in 2015.", "valid_at": "2015", "document_id": "b"},
        {"fact": "Zorvan Systems was founded in March 2016.", "valid_at": "2016-03", "document_id": "c"},
    ]

    def test_one_event_dated_differently_by_two_documents_is_a_conflict(self) -> None:
        [conflict] = timeline_conflicts(self.FACTS, "Zorvan Systems")
        assert conflict["attribute"] == "founded"
        assert [side["citations"] for side in conflict["values"]] == [[1, 3], [2]]

    def test_repeated_events_and_the_same_date_at_another_precision_are_not(self) -> None:
        facts = [
            {"fact": "Zorvan Systems raised 40 million dollars in 2021.", "valid_at": "2021", "document_id": "a"},
            {"fact": "Zorvan Systems raised 100 million dollars in 2022.", "valid_at": "2022", "document_id": "b"},
            self.FACTS[0],
            self.FACTS[2],
        ]
        assert timeline_conflicts(facts, "Zorvan Systems") == []

    def test_a_fact_dated_only_by_its_document_takes_no_side(self) -> None:
        facts = [self.FACTS[0], {**self.FACTS[1], "undated": True}]  # 2015 is the filing's date, not the event's
        assert timeline_conflicts(facts, "Zorvan Systems") == []

    def test_a_dated_fact_without_a_verb_is_no_event(self) -> None:
        facts = [
            {"fact": "Zorvan Systems 2.0 (2016).", "valid_at": "2016", "document_id": "a"},
            {"fact": "Zorvan Systems 2.0 (2017).", "valid_at": "2017", "document_id": "b"},
        ]
        assert timeline_conflicts(facts, "Zorvan Systems") == []
