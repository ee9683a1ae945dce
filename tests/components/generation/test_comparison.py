"""Comparison and yes/no questions answered by what the sources say of each named subject, on written examples."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from components.generation import ExtractiveAnswerGenerator
from components.generation.answer_confidence import BOTH, CHOICE, FEATURES, YES_NO
from components.generation.comparison import compare, listed_options, subjects, yes_no
from components.text.analyzer import terms
from tests.components.generation.test_answer_confidence import model_file
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


class TestAlternativesListedAfterTheComma:
    """An alternative question lists its options after its comma ("Which is older, X or Y?"): they are its subjects
    whatever their case, as long as each is a short run of words with no verb or preposition of its own."""

    @pytest.mark.parametrize(
        ("question", "names"),
        [
            ("Which was founded first, brindlecast or Velvet Harbour?", ["brindlecast", "Velvet Harbour"]),
            ("Which library came out earlier, tarnlib or quell-kit?", ["tarnlib", "quell-kit"]),
            ("Which is longer, the Kestrel River or the Amberline River?", ["Kestrel River", "Amberline River"]),
        ],
    )
    def test_lower_case_names_are_alternatives_too(self, question, names):
        assert subjects(question, "or") == names

    @pytest.mark.parametrize(
        "question",
        [
            "Which came first, brindlecast or tarnlib as open source?",  # a preposition: a clause, not a name
            "Who is older, the keeper or his wife?",  # a pronoun names no one by itself
            "Which is older, brindlecast, tarnlib or quell?",  # the comma before the first option cuts it off
            "Who is older: brindlecast, tarnlib or quell?",  # three options, the first cut off by no comma
        ],
    )
    def test_no_alternatives_without_two_short_names(self, question):
        assert subjects(question, "or") == []

    def test_a_lower_case_alternative_gets_its_verdict(self):
        rows = [Row("brindlecast was founded in 2011 in Oslo."), Row("Velvet Harbour was founded in 1997.")]
        verdict = compare("Which was founded first, brindlecast or Velvet Harbour?", rows)
        assert verdict is not None and verdict.answer == "Velvet Harbour"


class TestOptionsAfterTheComma:
    """What the question asks of its options, said before the comma, is no option; the options listed after the
    comma are whole names where the recogniser cut them short."""

    @pytest.mark.parametrize(
        ("question", "names"),
        [
            # The predicate or object of the wh-clause, which the tagger reads as a proper noun.
            ("Which singer is Welsh, Orla Vennick or Tavrin Kelso?", ["Orla Vennick", "Tavrin Kelso"]),
            ("Which Lantern co-founder is Danish, Orla Vennick or Tavrin Kelso?", ["Orla Vennick", "Tavrin Kelso"]),
            ("Which judoka represented Canada, Orla Vennick or Tavrin Kelso?", ["Orla Vennick", "Tavrin Kelso"]),
            ("Which company is Swedish, Kestrel, Amberline or Brask?", ["Kestrel", "Amberline", "Brask"]),
            # Titles with a number, a lower-case preposition or a capitalised pronoun in them.
            ("Which game was released first, Harbour Racing or Formula 4 99?", ["Harbour Racing", "Formula 4 99"]),
            (
                "Which film came out later, Three Days of Varna or Mind It Kestrel!?",
                ["Three Days of Varna", "Mind It Kestrel"],
            ),
        ],
    )
    def test_the_options_are_the_names_listed(self, question, names):
        assert subjects(question, "or") == names

    def test_the_predicate_decides_the_choice(self):
        rows = [Row("Orla Vennick is a Danish singer from Aarhus."), Row("Tavrin Kelso is a Welsh singer.")]
        assert compare("Which singer is Welsh, Orla Vennick or Tavrin Kelso?", rows).answer == "Tavrin Kelso"

    @pytest.mark.parametrize(
        ("question", "joiner"),
        [
            ("Which is older, Kestrel Press, Amberline Books or Brask House?", "or"),
            # The name after the verb is its subject, or the verb only carries the question: the list keeps it.
            ("When were Kestrel Press, Amberline Books and Brask House founded?", "and"),
            ("What do Kestrel Press, Amberline Books and Brask House have in common?", "and"),
            ("Which did Kestrel Press, Amberline Books or Brask House release first?", "or"),
        ],
    )
    def test_a_list_keeps_its_first_name(self, question, joiner):
        assert subjects(question, joiner) == ["Kestrel Press", "Amberline Books", "Brask House"]

    def test_a_bracketed_gloss_is_no_part_of_an_option(self):
        assert subjects("Which is older, Kestrel (band) or Brask?", "or") == ["Kestrel", "Brask"]


class TestADateTheQuestionWordsOtherwise:
    """A date asked of an event no sentence words as the question does is read from the subject's own text."""

    @pytest.mark.parametrize(
        "second",
        [
            Row("Varna Ales was founded in 1777 by Orla Vennick."),
            # A chunk titled by the subject is its own text, whether or not its sentence names it.
            Row("Production started in 1777 at a mill in Leeds.", title="Varna Ales"),
        ],
    )
    def test_an_event_worded_otherwise(self, second):
        rows = [Row("Kestrel Brewing is a beer company that began production in 1853 in Ohio."), second]
        verdict = compare("Which brewery was founded earlier, Kestrel Brewing or Varna Ales?", rows)
        assert verdict is not None and verdict.answer == "Varna Ales"

    def test_a_life_in_brackets_dates_a_birth(self):
        rows = [
            Row("Orla Vennick (6 October 1919 – 26 March 1989) was a ski jumper."),
            Row("Tavrin Kelso (30 December 1907 – 7 April 1994) was a ski jumper."),
        ]
        assert compare("Who was born first, Orla Vennick or Tavrin Kelso?", rows).answer == "Tavrin Kelso"

    @pytest.mark.parametrize(
        ("question", "rows"),
        [
            # A sentence that only mentions the subject dates something else of it.
            (
                "Who was born first, Orla Vennick or Tavrin Kelso?",
                [
                    Row("Orla Vennick (6 October 1919 – 26 March 1989) was a ski jumper."),
                    Row("The Harbour is a novel by Tavrin Kelso, first published in 1953.", title="The Harbour"),
                ],
            ),
            # A name that only begins the sentence's first word is not its subject ("Varnamo" for "Varna").
            (
                "Which brewery was founded earlier, Kestrel Brewing or Varna?",
                [
                    Row("Kestrel Brewing is a beer company that began production in 1853 in Ohio."),
                    Row("Varnamo Ales opened in 1777, long before the Varna brewery."),
                ],
            ),
            # An end asked of a life's dates: the first of them is the birth, no death.
            (
                "Who died first, Orla Vennick or Tavrin Kelso?",
                [
                    Row("Orla Vennick (1919 – 1999) was a ski jumper."),
                    Row("Tavrin Kelso (1907 – 2004) was a ski jumper."),
                ],
            ),
            # Two dates of which the sentence does not say which is the asked one.
            (
                "Which brewery was bought first, Kestrel Brewing or Varna Ales?",
                [Row("Kestrel Brewing operated from 1853 to 1990."), Row("Varna Ales operated from 1870 to 1901.")],
            ),
        ],
    )
    def test_no_date_is_read_where_the_sentence_cannot_tell_the_asked_event(self, question, rows):
        assert compare(question, rows) is None


class TestSubjectsTheParseMisreads:
    """Question shapes whose names spaCy's parse or recogniser reads short, long or not at all (invented names)."""

    def test_a_name_the_parse_hangs_on_the_common_noun_after_it(self):
        # spaCy parses "Tavrin Kelso painters" as one noun phrase and recognises only "Tavrin".
        assert subjects("Are both Orla Vennick and Tavrin Kelso painters?", "and") == ["Orla Vennick", "Tavrin Kelso"]
        assert subjects("Are either Orla Vennick or Tavrin Kelso painters?", "or") == ["Orla Vennick", "Tavrin Kelso"]
        rows = [Row("Orla Vennick was a painter from Leeds."), Row("Tavrin Kelso was a painter and sculptor.")]
        assert yes_no("Are both Orla Vennick and Tavrin Kelso painters?", rows).answer == "yes"

    def test_single_names_the_recogniser_does_not_know(self):
        # One name recognised or none, the other tagged as a common noun or an adjective.
        assert subjects("Are both Vennick and Kelso singers?", "and") == ["Vennick", "Kelso"]
        assert subjects("Which is older, Ferns or Willows?", "or") == ["Ferns", "Willows"]
        assert subjects("Is Moss or Pebble older?", "or") == ["Moss", "Pebble"]
        assert subjects("Which came out first, Night Harbour or Copper Lantern?", "or") == [
            "Night Harbour",
            "Copper Lantern",
        ]

    @pytest.mark.parametrize(
        ("question", "joiner", "names"),
        [
            # spaCy recognises "Are Quillon Press" as an organisation: the opening auxiliary is no part of a name.
            ("Are Quillon Press and Brask Media in the same country?", "and", ["Quillon Press", "Brask Media"]),
            # What is asked before the names is no subject.
            ("Which band is British, Velvet Harbour or Copper Lantern?", "or", ["Velvet Harbour", "Copper Lantern"]),
        ],
    )
    def test_words_around_the_names_are_no_part_of_them(self, question, joiner, names):
        assert subjects(question, joiner) == names

    def test_names_that_hold_a_lower_case_word(self):
        question = "Which has more members, the Order of Kestrel or the Guild of Varna?"
        assert subjects(question, "or") == ["Order of Kestrel", "Guild of Varna"]
        rows = [Row("The Order of Kestrel has 340 members."), Row("The Guild of Varna has 1,200 members.")]
        assert compare(question, rows).answer == "Guild of Varna"

    def test_three_names_in_a_list(self):
        question = "Are Orla Vennick, Tavrin Kelso and Mira Ostby all painters?"
        assert subjects(question, "and") == ["Orla Vennick", "Tavrin Kelso", "Mira Ostby"]
        rows = [Row("Orla Vennick was a painter."), Row("Tavrin Kelso was a painter."), Row("Mira Ostby was a poet.")]
        assert yes_no(question, rows).answer == "no"

    def test_a_title_opening_with_a_capitalised_function_word(self):
        # The recogniser bounds the title at its naming words; the options listed after the comma keep it whole, and
        # its sentences hold its terms either way.
        question = "Which was published first, Harbour Lights or On the Varna Road?"
        assert subjects(question, "or") == ["Harbour Lights", "On the Varna Road"]
        rows = [
            Row("Harbour Lights is a novel published in 1961."),
            Row("On the Varna Road is a memoir published in 1954."),
        ]
        assert compare(question, rows).answer == "On the Varna Road"

    def test_a_name_holding_an_and_stays_whole_beside_two_other_names(self):
        question = "Are the Bank of Kestrel and Amberline and Brask Media both banks?"
        assert subjects(question, "and") == ["Bank of Kestrel and Amberline", "Brask Media"]


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

    def test_a_tie_at_the_precision_both_dates_have_is_no_verdict(self):
        # "October 2019" and "1 October 2019" are the same month: neither was released first.
        rows = [
            Row("Orvane Systems released Tessel as open source in October 2019."),
            Row("Brindle was released as open source on October 1, 2019."),
        ]
        assert compare("Which was released first, Tessel or Brindle?", rows) is None
        rows[1] = Row("Brindle was released as open source on October 1, 2020.")
        assert compare("Which was released first, Tessel or Brindle?", rows).answer == "Tessel"

    def test_the_value_comes_from_a_sentence_of_the_asked_attribute(self):
        rows = [
            Row("Kestrel Labs raised a 30 million dollar Series B in 2021."),
            Row("In 2019 Kestrel Labs raised a 9 million dollar Series A led by Amberline Partners."),
            Row("Harrow Data raised a 12 million dollar Series A in 2020."),
            Row("Harrow Data has 4 offices and 420 staff."),
        ]
        question = "Which raised more in its Series A, Kestrel Labs or Harrow Data?"
        assert subjects(question, "or") == ["Kestrel Labs", "Harrow Data"]
        verdict = compare(question, rows)
        assert verdict.answer == "Harrow Data"
        assert [row.text for row in verdict.evidence] == [rows[2].text, rows[1].text]
        # No sentence of one subject holds the asked attribute: no verdict, not a value of another kind.
        assert compare("Which raised more in its Series C, Kestrel Labs or Harrow Data?", rows) is None

    def test_the_direction_is_read_outside_the_names(self):
        # "First" in a title is no comparative word: the question compares nothing by a value.
        rows = [
            Row("First Light is a French magazine founded in 1990."),
            Row("Ember Weekly is a Dutch magazine founded in 1970."),
        ]
        earlier = compare("Which magazine was founded earlier, First Light or Ember Weekly?", rows)
        assert earlier.answer == "Ember Weekly"
        assert compare("Which magazine is French, First Light or Ember Weekly?", rows).answer == "First Light"


class TestYesNo:
    def test_yes_when_every_subject_holds_what_is_asked(self):
        assert yes_no("Are Velvet Harbour and Copper Lantern both bands?", BANDS).answer == "yes"

    def test_no_when_one_subject_does_not(self):
        assert yes_no("Are Velvet Harbour and Copper Lantern both rock bands?", BANDS).answer == "no"

    def test_a_no_cites_first_the_subject_that_lacks_what_is_asked(self):
        # The first subject is a rock band; the verdict rests on the second's sentence (a folk band).
        verdict = yes_no("Are Velvet Harbour and Copper Lantern both rock bands?", BANDS)
        assert [row.text for row in verdict.evidence] == [BANDS[1].text, BANDS[0].text]

    def test_two_names_the_recogniser_joined_across_the_and(self):
        # spaCy reads "the Lantern Review and Pick" as one organisation; each side is a subject of its own.
        question = "Are both magazines, the Lantern Review and Pick It Up, British publications?"
        rows = [
            Row("The Lantern Review is a British weekly magazine published in Leeds."),
            Row("Pick It Up is an American monthly magazine for collectors."),
        ]
        assert subjects(question, "and")[0] == "Lantern Review"
        verdict = yes_no(question, rows)
        assert verdict.answer == "no"  # each side read; the American one, which the "no" rests on, cited first
        assert [row.text for row in verdict.evidence] == [rows[1].text, rows[0].text]

    def test_one_name_that_holds_an_and_stays_one(self):
        # "the Bank of Kestrel and Amberline" is one organisation: a question about it alone is not cut in two.
        assert subjects("Did the Bank of Kestrel and Amberline open in Leeds?", "and") == []

    def test_the_same_value(self):
        assert yes_no("Are Velvet Harbour and Copper Lantern from the same city?", BANDS).answer == "no"

    @pytest.mark.parametrize(("second", "answer"), [("1991", "yes"), ("2010", "no")])
    def test_a_year_is_in_its_decade(self, second, answer):
        rows = [Row("Kestrel Brewing was founded in 1994 in Ohio."), Row(f"Varna Ales was founded in {second}.")]
        assert yes_no("Were Kestrel Brewing and Varna Ales both founded in the 1990s?", rows).answer == answer


class TestRelations:
    """Yes/no questions that relate two names: a verdict only when one sentence says the relation of both."""

    ROWS = [
        Row("In 2021 Orvane Systems acquired Tessel, a start-up that made charting tools."),
        Row("Spaces, for apps built with Tessel or Brindle, followed in 2022.", title="Orvane Systems"),
        Row("On March 2, 2022, Kestrel Data announced that it had agreed to acquire Brindle."),
        Row("Harrow Labs is a software company based in Dunmore."),
        Row("Velloran did not acquire Tessel, which stayed independent."),
    ]

    def test_yes_only_when_one_sentence_holds_both_names_and_the_relation(self):
        assert yes_no("Did Kestrel Data acquire Brindle?", self.ROWS).answer == "yes"
        assert yes_no("Is Harrow Labs based in Dunmore?", self.ROWS).answer == "yes"
        # Orvane Systems acquired something and Brindle was acquired, in two sentences: that says nothing of the two.
        assert yes_no("Did Orvane Systems acquire Brindle?", self.ROWS) is None

    def test_the_roles_of_the_names_count(self):
        assert yes_no("Was Brindle acquired by Kestrel Data?", self.ROWS).answer == "yes"
        assert yes_no("Did Brindle acquire Kestrel Data?", self.ROWS) is None

    def test_the_question_s_first_name_as_the_pronoun_subject_of_a_sentence_about_it(self):
        rows = [Row("In December 2021 it acquired Harrowgate, a maker of charts.", title="Velloran Labs")]
        assert yes_no("Did Velloran Labs acquire Harrowgate?", rows).answer == "yes"
        assert yes_no("Did Harrowgate acquire Velloran Labs?", rows) is None
        passive = [Row("In 2021 it was acquired by Harrowgate.", title="Velloran Labs")]
        assert yes_no("Did Velloran Labs acquire Harrowgate?", passive) is None

    def test_no_when_the_sentence_negates_the_relation(self):
        assert yes_no("Did Velloran acquire Tessel?", self.ROWS).answer == "no"

    def test_an_ordering_by_the_asked_attribute_and_direction(self):
        rows = [
            Row("Orvane Systems released Tessel as open source in October 2019."),
            Row("Brindle began as an open-source project by a search engineer."),
            Row("Brindle was released as open source on March 3, 2021."),
            Row("Kestrel was released as open source on October 1, 2019."),
        ]
        assert yes_no("Was Tessel released before Brindle?", rows).answer == "yes"
        assert yes_no("Was Brindle released before Tessel?", rows).answer == "no"
        assert yes_no("Was Brindle released after Tessel?", rows).answer == "yes"
        # The same month at the precision both dates have: no verdict either way.
        assert yes_no("Was Tessel released before Kestrel?", rows) is None
        assert yes_no("Was Kestrel released before Tessel?", rows) is None
        # Neither of Brindle's sentences dates its founding.
        assert yes_no("Was Brindle founded before Tessel?", rows) is None

    def test_one_name_keeps_the_share_of_what_is_asked(self):
        assert yes_no("Is Velvet Harbour a rock band?", BANDS).answer == "yes"
        assert yes_no("Is Velvet Harbour a folk band?", BANDS).answer == "no"


class TestTheSame:
    """The same X: each subject's sentence read for the values of the kind X names, not for any shared name."""

    QUESTION = "Are Brindle Field and Tessaly Airport both airports in the same state?"

    @staticmethod
    def airports(first: str, second: str) -> list[Row]:
        return [
            Row(f"Brindle Field is a public airport in {first}."),
            Row(f"Tessaly Airport is a small airport {second}."),
        ]

    def test_yes_when_the_values_are_the_same(self):
        rows = self.airports("Dunmore County, Varnland", "in Dunmore County, Varnland")
        verdict = yes_no(self.QUESTION, rows)
        assert verdict.answer == "yes"
        assert [row.text for row in verdict.evidence] == [row.text for row in rows]

    def test_yes_when_one_side_names_only_the_other_s_most_specific_value(self):
        assert yes_no(self.QUESTION, self.airports("Dunmore County, Varnland", "in Dunmore County")).answer == "yes"

    def test_no_when_no_value_is_shared(self):
        # A name both sentences hold that is no place ("FAA", a code's label) does not make the places the same.
        rows = self.airports("Dunmore County, Varnland (FAA: BRF)", "in Perrin, Moravel (FAA: TSY)")
        assert yes_no(self.QUESTION, rows).answer == "no"

    def test_no_verdict_when_only_a_broader_value_is_shared(self):
        # Both in the Federated States, in two counties: which value is the state, the words do not say. A shared
        # name of the broader place (and "States", the asked noun's plural) is no "yes".
        rows = self.airports(
            "Jessup County, Kellon, the Federated States", "in Morrow County, Selk, the Federated States"
        )
        assert yes_no(self.QUESTION, rows) is None
        rows = self.airports("Dunmore County, Varnland", "in Ashby County, Varnland")
        assert yes_no(self.QUESTION, rows) is None

    def test_no_verdict_when_one_side_names_no_value_of_the_kind(self):
        assert yes_no(self.QUESTION, self.airports("Dunmore County, Varnland", "with one runway")) is None

    def test_values_named_with_the_asked_noun_decide(self):
        # "the same county": the counties differ though the country is the same; and agree though the towns differ.
        question = "Are Brindle Field and Tessaly Airport in the same county?"
        assert yes_no(question, self.airports("Dunmore County, Varnland", "in Ashby County, Varnland")).answer == "no"
        rows = self.airports("Perrin, Dunmore County, Varnland", "in Moravel, Dunmore County, Varnland")
        assert yes_no(question, rows).answer == "yes"

    def test_a_nationality_is_compared_by_nationalities(self):
        question = "Were Orla Vennick and Tavrin Kelso of the same nationality?"
        same = ["Orla Vennick was an American painter born in Ohio.", "Tavrin Kelso was an American sculptor."]
        assert yes_no(question, [Row(text) for text in same]).answer == "yes"
        other = [
            "Orla Vennick was an American painter who studied in Paris.",
            "Tavrin Kelso was a Canadian sculptor who studied in Paris.",
        ]
        assert yes_no(question, [Row(text) for text in other]).answer == "no"

    def test_an_organisation_is_compared_by_organisations_not_nationalities(self):
        # Both bands are American: the nationality is no label, so only the labels' names count.
        question = "Are Velvet Harbour and Copper Lantern signed to the same label?"
        rows = [
            Row("Velvet Harbour is an American rock band signed to Saltmarsh Records."),
            Row("Copper Lantern is an American folk band signed to Greywater Music."),
        ]
        assert yes_no(question, rows).answer == "no"

    def test_no_verdict_when_the_asked_noun_is_no_name(self):
        # A year or an age is a value, not a name the sentences' entities compare.
        rows = [Row("Orla Vennick was born in Ohio in 1931."), Row("Tavrin Kelso was born in Ohio in 1948.")]
        assert yes_no("Were Orla Vennick and Tavrin Kelso born in the same year?", rows) is None

    def test_no_headline_without_a_verdict(self):
        documents = [
            kb_document(
                "brindle",
                "Brindle Field is a public airport in Jessup County, Kellon, the Federated States. It has two runways.",
                0.6,
                title="Brindle Field",
            ),
            kb_document(
                "tessaly",
                "Tessaly Airport is a small airport in Morrow County, Selk, the Federated States. It opened in 1961.",
                0.5,
                title="Tessaly Airport",
            ),
        ]
        out = ExtractiveAnswerGenerator(confidence_threshold=0.0).run(query=self.QUESTION, documents=documents)
        assert out["short_answer"] == ""
        assert out["replies"][0].startswith("Brindle Field is a public airport in Jessup County")


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

    def test_a_span_naming_none_of_the_options_is_held_back(self):
        # No tornado count to compare: the span read otherwise ("Iowa") answers no choice between the two outbreaks.
        documents = [
            kb_document(
                "tarn",
                "The Tarn outbreak was a large tornado outbreak across Iowa. It killed 18 people.",
                0.6,
                title="Tarn outbreak",
            ),
            kb_document(
                "vell",
                "The Vell outbreak struck Alabama, where a large outbreak of storms killed 34 people.",
                0.5,
                title="Vell outbreak",
            ),
        ]
        out = ExtractiveAnswerGenerator(confidence_threshold=0.0).run(
            query="Which outbreak produced more tornadoes, the Tarn outbreak or the Vell outbreak?", documents=documents
        )
        part = out["parts"][0]
        assert out["short_answer"] == "" and part["short_answer_confidence"] is None and not part["sure"]
        assert "Not sure of the short answer" in out["replies"][0]

    def test_names_listed_in_a_question_that_asks_for_something_else_hold_nothing_back(self):
        # The three books are what the question mentions, not options it asks to choose from.
        question = "Who would usually teach from a book like the Varna Codex, Kestrel Scroll or Amberline Psalter?"
        assert listed_options(question) == []
        documents = [
            kb_document(
                "teaching",
                "Religious teachers usually teach from the Varna Codex, the Kestrel Scroll or the Amberline Psalter.",
                0.6,
                title="Teaching",
            )
        ]
        out = ExtractiveAnswerGenerator(confidence_threshold=0.0).run(query=question, documents=documents)
        assert out["short_answer"] == "Religious teachers"


class TestBothSidesRead:
    """A verdict is said only from sentences read for every subject, each value from its own sentence; dates are read
    by the dates module to the precision they state."""

    def test_no_verdict_when_the_sources_say_nothing_of_one_subject(self):
        # Nothing is said of Copper Lantern: whether it is a band is unknown, not denied.
        assert yes_no("Are Velvet Harbour and Copper Lantern both bands?", BANDS[:1]) is None

    def test_birth_dates_of_one_year_are_compared_by_day(self):
        quint, drumm = "Orla Quint (born 14 July 1939) is a painter.", "Ansel Drumm (born 3 March 1939) is a sculptor."
        verdict = compare("Who is older, Orla Quint or Ansel Drumm?", [Row(quint), Row(drumm)])
        # Each side's value from its own sentence, the older's cited first.
        assert (verdict.answer, [row.text for row in verdict.evidence]) == ("Ansel Drumm", [drumm, quint])

    def test_numbers_are_compared_as_numbers(self):
        rows = [
            Row("The Kestrel Society has 9,500 members across the region."),
            Row("The Amberline Guild has 12,000 members in four towns."),
        ]
        assert compare("Which has more members, the Kestrel Society or the Amberline Guild?", rows).answer == (
            "Amberline Guild"
        )


class TestVerdictConfidence:
    def test_a_verdict_is_as_sure_as_the_weakest_subject_sentence(self, tmp_path):
        # A model that reads only the chunk rank: the verdict is rated by the lower-ranked subject's sentence (its
        # chunk is fourth), not by the winner's at the top.
        coef = [4.0 if name == "top_rank" else 0.0 for name in FEATURES]
        path = model_file(tmp_path, -2.0, 0.5, coef=coef)
        documents = [
            kb_document("velvet", BANDS[0].text, 0.9, title="Velvet Harbour"),
            kb_document("filler-a", "Seattle is a city in the north-west.", 0.8, title="Seattle"),
            kb_document("filler-b", "Leeds is a city in the north.", 0.7, title="Leeds"),
            kb_document("copper", BANDS[1].text, 0.6, title="Copper Lantern"),
        ]
        out = ExtractiveAnswerGenerator(confidence_model=str(path)).run(
            query="Which band was formed first, Velvet Harbour or Copper Lantern?", documents=documents
        )
        (part,) = out["parts"]
        assert part["short_answer"] == "Velvet Harbour"
        assert part["features"]["top_rank"] == pytest.approx(0.25)
        assert not part["sure"] and part["short_answer_confidence"] < 0.5 and out["short_answer"] == ""


class TestKindOfVerdict:
    """Each verdict says how it was read, for the confidence its kind has earned (`research fit verdicts`)."""

    def test_a_choice_among_options(self):
        assert compare("Which band was formed first, Velvet Harbour or Copper Lantern?", BANDS).kind == CHOICE

    def test_a_question_asked_of_several_subjects_alike(self):
        assert yes_no("Are Velvet Harbour and Copper Lantern both bands?", BANDS).kind == BOTH

    def test_any_other_yes_or_no(self):
        assert yes_no("Was Velvet Harbour formed before Copper Lantern?", BANDS).kind == YES_NO
        assert yes_no("Is Velvet Harbour a rock band?", BANDS).kind == YES_NO
