"""The gap a question's wh-word leaves, and the phrase of a sentence that fills it, on written examples."""

from __future__ import annotations

from components.generation.question_gap import QuestionGap, fill_gap, question_gap
from components.text.language import parse


def filled(question: str, sentence: str) -> str:
    return fill_gap(parse(sentence), question_gap(question))


class TestQuestionGap:
    def test_roles(self):
        assert question_gap("What did Maria Lindqvist patent in 2011?") == QuestionGap("object", "patent")
        assert question_gap("Who wrote the storage engine?") == QuestionGap("subject", "write")
        assert question_gap("What was the harbour built with?") == QuestionGap("prep", "build", "with")

    def test_no_gap_under_a_light_verb(self):
        # "What is X?" and "What did X do?" ask for a description, not a role of a content verb.
        assert question_gap("What is a key-value store?") is None
        assert question_gap("What did Tomas Berg do after 2011?") is None
        assert question_gap("When did the ferries start?") is None


class TestFillGap:
    def test_the_object_of_the_same_verb_not_the_nearest_phrase(self):
        sentence = "In 2011 Maria Lindqvist patented a log-structured storage engine, a design she kept for years."
        assert filled("What did Maria Lindqvist patent in 2011?", sentence) == "a log-structured storage engine"

    def test_a_passive_sentence_answers_an_active_question(self):
        sentence = "The storage engine was written by Tomas Berg during a long winter."
        assert filled("Who wrote the storage engine?", sentence) == "Tomas Berg"
        assert filled("What did Tomas Berg write?", sentence) == "The storage engine"

    def test_the_object_of_the_same_preposition(self):
        sentence = "The harbour was built with granite from the northern quarries."
        assert filled("What was the harbour built with?", sentence) == "granite"

    def test_coordinated_nouns_and_of_phrases_stay_relative_clauses_go(self):
        sentence = "The ferries carry passengers and bicycles of every size, which pay the same fare."
        assert filled("What do the ferries carry?", sentence) == "passengers and bicycles of every size"

    def test_a_pronoun_or_an_unrelated_sentence_fills_nothing(self):
        assert filled("What did Maria Lindqvist patent?", "She patented it in 2011.") == ""
        assert filled("What did Maria Lindqvist patent?", "The harbour employs 340 people.") == ""
