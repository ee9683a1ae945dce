"""The gap a question's wh-word leaves, and the phrase of a sentence that fills it, on written examples."""

from __future__ import annotations

import pytest

from components.generation.question_gap import (
    QuestionGap,
    closed,
    counted_noun,
    fill_gap,
    question_gap,
)
from components.text.analyzer import terms
from components.text.language import parse


def filled(question: str, sentence: str) -> str:
    return fill_gap(parse(sentence), question_gap(question))


class TestQuestionGap:
    def test_roles(self):
        assert question_gap("What did Maria Lindqvist patent in 2011?") == QuestionGap("object", "patent")
        assert question_gap("Who wrote the storage engine?") == QuestionGap("subject", "write")
        assert question_gap("What was the harbour built with?") == QuestionGap("prep", "build", "with")
        assert question_gap("Where did the orchestra perform?") == QuestionGap("place", "perform")
        assert question_gap("Where was the organ built?") == QuestionGap("place", "build")
        # the parse may make the verb part of the subject: a participle after it, or the last word of "the band tour"
        assert question_gap("Where are the spore sacs located?") == QuestionGap("place", "locat")
        assert question_gap("Where was the brass lantern first observed by Ilsa?") == QuestionGap("place", "observ")
        assert question_gap("Where did the Larkfield choir practice for the Spring Gala?") == QuestionGap(
            "place", "practic"
        )

    def test_no_gap_under_a_light_verb(self):
        # "What is X?" asks for a description, not a role of a content verb.
        assert question_gap("What is a key-value store?") is None
        assert question_gap("When did the ferries start?") is None

    def test_what_did_x_do_asks_for_an_action(self):
        # "do" stands for the verb the answer names: found by the verb it stands under, the one it is done to, or the
        # one doing it.
        assert question_gap("What did Tomas Berg do after 2011?") == QuestionGap("action", "berg", "subject")
        assert question_gap("What did the storm do to the pier?") == QuestionGap("action", "pier", "object")
        assert question_gap("What did her mother want her to do?") == QuestionGap("action", "want", "clause")

    @pytest.mark.parametrize(
        ("question", "sentence", "expected"),
        [
            (
                "What did Tomas Berg do after 2011?",
                "After 2011, Tomas Berg sold the foundry and moved to the coast.",
                "sold the foundry",
            ),
            (
                "What did the storm do to the pier?",
                "The night the storm arrived, its waves tore apart the pier at Eastholm.",
                "tore apart the pier",
            ),
            (
                "What did her mother want her to do?",
                "Her mother had always wanted her to study the violin, but she chose chemistry.",
                "study the violin",
            ),
            # a light verb ("was", "had") is no action
            ("What did Tomas Berg do after 2011?", "Tomas Berg was the owner of a foundry.", ""),
        ],
    )
    def test_the_action_a_sentence_names(self, question, sentence, expected):
        assert filled(question, sentence) == expected


class TestFillGap:
    @pytest.mark.parametrize(
        ("question", "sentence", "expected"),
        [
            # the object of the same verb, not the nearest phrase
            (
                "What did Maria Lindqvist patent in 2011?",
                "In 2011 Maria Lindqvist patented a log-structured storage engine, a design she kept for years.",
                "a log-structured storage engine",
            ),
            # a passive sentence answers an active question, both ways
            (
                "Who wrote the storage engine?",
                "The storage engine was written by Tomas Berg during a long winter.",
                "Tomas Berg",
            ),
            (
                "What did Tomas Berg write?",
                "The storage engine was written by Tomas Berg during a long winter.",
                "The storage engine",
            ),
            # the object of the same preposition
            (
                "What was the harbour built with?",
                "The harbour was built with granite from the northern quarries.",
                "granite",
            ),
            # coordinated nouns and of-phrases stay, relative clauses go
            (
                "What do the ferries carry?",
                "The ferries carry passengers and bicycles of every size, which pay the same fare.",
                "passengers and bicycles of every size",
            ),
            # a relative clause's "who" stands for the noun the clause modifies
            (
                "What rower won the northern regatta?",
                "The club sent Ines Vale, who won the northern regatta in May.",
                "Ines Vale",
            ),
            # a coordinated verb shares its subject with the first
            (
                "What firm designed the lighthouse?",
                "Harlow Brothers surveyed the coast in 1871 and designed the lighthouse a year later.",
                "Harlow Brothers",
            ),
            # ... but a "to" clause after an object is that object's to do
            (
                "Who built the laboratory?",
                "Westinghouse asked Tesla to build the laboratory in 1899.",
                "Tesla",
            ),
            # a "where" clause before the question's own wh-word does not set the gap
            (
                "In the town where Tesla lived, what did he build?",
                "In Colorado Springs Tesla lived in a hotel and built a laboratory.",
                "a laboratory",
            ),
            # a hyphenated word stays whole
            (
                "What did the inspectors find?",
                "The inspectors found water-damaged timbers under the deck.",
                "water-damaged timbers",
            ),
            # "where": the place the question's verb takes, after the verb before one in front of it, not a time
            (
                "Where did the orchestra perform?",
                "In 1962, the orchestra performed at the Corn Exchange in Kettering.",
                "the Corn Exchange",
            ),
            (
                "Where did the orchestra perform?",
                "In addition to concerts, the orchestra performed in the old library.",
                "the old library",
            ),
            (
                "Where did the orchestra perform?",
                "The orchestra performed in concert halls of Vienna.",
                "concert halls of Vienna",
            ),
            # "From where ...?" names the preposition
            (
                "From where was the organ moved?",
                "In those years the organ was moved from the cathedral to the town hall.",
                "the cathedral",
            ),
            # a possessive pronoun points outside the phrase: the answer is the rest
            (
                "What did the judges praise?",
                "The judges praised their careful planning of the route.",
                "careful planning of the route",
            ),
        ],
    )
    def test_the_phrase_in_the_wh_words_role(self, question, sentence, expected):
        assert filled(question, sentence) == expected

    def test_a_name_is_given_without_the_title_before_it(self):
        # a lower-case common noun before a name only gives its role ("veteran coach Marta Lind")
        sentence = "In 2019 the club hired veteran coach Marta Lind from a rival team."
        assert filled("Who did the club hire in 2019?", sentence) == "Marta Lind"
        # a name of several capitalised words keeps them all, and a phrase headed by a common noun keeps its modifiers
        sentence = "In 2019 the club hired the Western Rowing Association to run its races."
        assert filled("Who did the club hire in 2019?", sentence) == "the Western Rowing Association"
        sentence = "In 2019 the club hired a rowing coach from a rival team."
        assert filled("Who did the club hire in 2019?", sentence) == "a rowing coach"

    def test_a_phrase_ending_inside_an_aside_or_a_quotation_leaves_it_out(self):
        assert closed("a small farm (the old mill") == "a small farm"
        assert closed('the "golden harvest') == "the golden harvest"
        # closed marks, and a bracket of a formula, stay
        assert closed("a small farm (the old mill)") == "a small farm (the old mill)"
        assert closed("f(n") == "f(n"
        assert closed('the "golden harvest"') == 'the "golden harvest"'

    @pytest.mark.parametrize(
        ("question", "sentence", "expected"),
        [
            # the verb whose subject the question names, not the first verb with the stem
            (
                "What do lanterns emit?",
                "The hall holds drums that emit noise, and lanterns that emit a soft glow.",
                "a soft glow",
            ),
            # a verb without a subject of its own shares the one of the word it depends on
            (
                "What can old kilns produce?",
                "Old kilns are able to produce a dark glaze, unlike new kilns, which produce a pale one.",
                "a dark glaze",
            ),
        ],
    )
    def test_of_several_words_with_the_stem_the_one_whose_other_roles_the_question_holds(
        self, question, sentence, expected
    ):
        assert fill_gap(parse(sentence), question_gap(question), frozenset(terms(question))) == expected

    def test_a_pronoun_or_an_unrelated_sentence_fills_nothing(self):
        assert filled("What did Maria Lindqvist patent?", "She patented it in 2011.") == ""
        assert filled("What did Maria Lindqvist patent?", "The harbour employs 340 people.") == ""


class TestCountedNoun:
    @pytest.mark.parametrize(
        "question,expected",
        [
            ("How many total yards did Tarn Rivel gain?", "yard"),
            ("How much money did the Oslin fund raise?", "money"),
            ("How old was Mara Quill?", "age"),
            # The "many" that "how" asks is the counted one, not an earlier "many" or "much" of the question.
            ("Many changes came to Velmora in the reform, which was how many years ago?", "year"),
            ("Much of the Pellow estate was sold for how many pounds?", "pound"),
            ("Many towers", "tower"),  # no "how many": the first "many" still counts its noun
            ("What did Velmora build?", ""),
        ],
    )
    def test_the_noun_how_many_counts(self, question, expected):
        assert counted_noun(question) == expected
