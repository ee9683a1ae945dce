"""Comparison and yes/no questions answered by what the sources say of each named subject, on written examples."""

from __future__ import annotations

from dataclasses import dataclass

from components.generation import ExtractiveAnswerGenerator
from components.generation.comparison import compare, subjects, yes_no
from components.text.analyzer import terms
from tests.components.ranking.chunks import kb_document


@dataclass
class Row:
    text: str
    title: str = ""

    @property
    def terms(self) -> frozenset[str]:
        return frozenset(terms(self.text))

    @property
    def title_terms(self) -> frozenset[str]:
        return frozenset(terms(self.title))


BANDS = [
    Row("Velvet Harbour is an American rock band formed in Seattle in 1997."),
    Row("Copper Lantern is a British folk band formed in Leeds in 2004."),
    Row("The band toured Japan twice.", title="Copper Lantern"),
]
RIVERS = [
    Row("The Kestrel River is 412 kilometres long and drains a wide valley."),
    Row("The Amberline River runs for 96 kilometres before it meets the sea."),
]


class TestSubjects:
    def test_the_names_an_or_or_an_and_joins(self):
        assert subjects("Which band was formed first, Velvet Harbour or Copper Lantern?", "or") == [
            "Velvet Harbour",
            "Copper Lantern",
        ]
        assert subjects("Are Velvet Harbour and Copper Lantern both rock bands?", "and") == [
            "Velvet Harbour",
            "Copper Lantern",
        ]

    def test_two_names_the_recogniser_took_for_one_title_are_two(self):
        # Without the comma, spaCy reads "The Velvet Harbour or Copper Lantern" as one work of art.
        question = "Which band was formed first The Velvet Harbour or Copper Lantern ?"
        assert subjects(question, "or") == ["Velvet Harbour", "Copper Lantern"]
        assert compare(question, BANDS).answer == "Velvet Harbour"


class TestCompare:
    def test_by_time_the_earlier_or_the_later(self):
        assert (
            compare("Which band was formed first, Velvet Harbour or Copper Lantern?", BANDS).answer == "Velvet Harbour"
        )
        assert compare("Which band is younger, Velvet Harbour or Copper Lantern?", BANDS).answer == "Copper Lantern"

    def test_by_size(self):
        assert compare("Which river is longer, the Kestrel River or the Amberline River?", RIVERS).answer == (
            "Kestrel River"
        )
        assert compare("Which river is shorter, the Kestrel River or the Amberline River?", RIVERS).answer == (
            "Amberline River"
        )

    def test_by_what_each_subject_is_said_to_be(self):
        verdict = compare("Which band is British, Velvet Harbour or Copper Lantern?", BANDS)
        assert verdict.answer == "Copper Lantern"
        assert verdict.evidence[0].text.startswith("Copper Lantern is a British folk band")

    def test_no_verdict_without_two_subjects_in_the_sources(self):
        assert compare("Which band is older, Velvet Harbour or Granite Choir?", BANDS) is None
        assert compare("Which band toured Japan?", BANDS) is None


class TestYesNo:
    def test_yes_when_every_subject_holds_what_is_asked(self):
        assert yes_no("Are Velvet Harbour and Copper Lantern both bands?", BANDS).answer == "yes"

    def test_no_when_one_subject_does_not(self):
        assert yes_no("Are Velvet Harbour and Copper Lantern both rock bands?", BANDS).answer == "no"

    def test_two_names_the_recogniser_joined_across_the_and(self):
        # spaCy reads "the Lantern Review and Pick" as one organisation; each side is a subject of its own.
        question = "Are both magazines, the Lantern Review and Pick It Up, British publications?"
        rows = [
            Row("The Lantern Review is a British weekly magazine published in Leeds."),
            Row("Pick It Up is an American monthly magazine for collectors."),
        ]
        assert subjects(question, "and")[0] == "Lantern Review"
        verdict = yes_no(question, rows)
        assert verdict.answer == "no"
        assert [row.text for row in verdict.evidence] == [row.text for row in rows]

    def test_one_name_that_holds_an_and_stays_one(self):
        # "the Bank of Kestrel and Amberline" is one organisation: a question about it alone is not cut in two.
        assert subjects("Did the Bank of Kestrel and Amberline open in Leeds?", "and") == []

    def test_the_same_value(self):
        assert yes_no("Are Velvet Harbour and Copper Lantern from the same city?", BANDS).answer == "no"


class TestInTheAnswer:
    def test_the_verdict_leads_the_answer_and_each_subject_is_cited(self):
        documents = [
            kb_document("velvet", BANDS[0].text + " Its first album sold well.", 0.6, title="Velvet Harbour"),
            kb_document("copper", BANDS[1].text + " The band toured Japan twice.", 0.5, title="Copper Lantern"),
        ]
        out = ExtractiveAnswerGenerator(confidence_threshold=0.0).run(
            query="Which band was formed first, Velvet Harbour or Copper Lantern?", documents=documents
        )
        assert out["short_answer"] == "Velvet Harbour"
        reply = out["replies"][0]
        assert reply.startswith("Velvet Harbour [1].")
        assert "formed in Seattle in 1997 [1]" in reply and "formed in Leeds in 2004 [2]" in reply
