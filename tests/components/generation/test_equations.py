"""The names a sentence equates with the noun a question asks about (general English grammar; invented names)."""

from __future__ import annotations

import pytest

from components.generation.equations import asked_role, copular_subject, equated_names
from components.text.analyzer import terms
from components.text.language import parse


def names(sentence: str, noun: str, question: str = "") -> list[str]:
    doc = parse(sentence)
    return [doc[i].text for i in sorted(equated_names(doc, noun, frozenset(terms(question))))]


@pytest.mark.parametrize(
    "sentence",
    [
        "In 1998 Tom Berg founded Corvane Maps, with Ada Quill as chief executive.",  # "X as N" on a name
        "Ada Quill, the chief executive of Corvane Maps, left in 2004.",  # apposition
        "The chief executive of Corvane Maps is Ada Quill.",  # copula
        "Corvane Maps appointed Ada Quill as chief executive in 2001.",  # a verb's "as", said of its object
        "Ada Quill served as chief executive of Corvane Maps.",  # ... of its subject
        "Chief executive Ada Quill opened the office.",  # a title before the name
    ],
)
def test_the_name_equated_with_the_asked_noun(sentence: str) -> None:
    assert names(sentence, "executive") == ["Ada", "Quill"]


def test_a_name_beside_the_noun_but_not_equated_with_it_is_not_read() -> None:
    # The founders are not said to be the chief executive; only Quill is.
    assert names("Tom Berg and Ada Quill founded Corvane Maps, with Quill as chief executive.", "executive") == [
        "Quill"
    ]
    assert names("Tom Berg met the chief executive in Lund.", "executive") == []
    assert names("Ada Quill, the chief executive, left.", "") == []


def test_a_name_the_question_holds_is_not_its_answer() -> None:
    # "Who is the parent company of Corvane?" over "Corvane, a company of ...": the sentence only describes Corvane.
    sentence = "Halvik Works, the parent company of Lund Maps, was sold."
    assert names(sentence, "company") == ["Halvik", "Works"]
    assert names(sentence, "company", "Who is the parent company of Halvik Works?") == []


def test_the_asked_noun_is_the_other_side_of_a_copular_question() -> None:
    assert copular_subject("Who is the chief executive of Corvane Maps?") == "executive"
    assert copular_subject("Who founded Corvane Maps?") == ""


def test_the_asked_role_is_a_copular_questions_noun_or_the_noun_of_the_wh_words_as() -> None:
    assert asked_role("Who is the chief executive of Corvane Maps?") == "executive"
    assert asked_role("Who heads Corvane Maps as chief executive?") == "executive"
    assert asked_role("Who did Corvane Maps hire as its new coach?") == "coach"
    assert asked_role("Who founded Corvane Maps?") == ""


def test_a_name_in_the_nouns_own_phrase_is_not_equated_with_it() -> None:
    # The league's name modifies the title, and the bracketed short form only repeats it: neither is who holds it.
    sentence = "Ada Quill was named the Norland Most Valuable Player (MVP) in 2004."
    assert "Norland" not in names(sentence, "player")
    assert names(sentence, "mvp") == []
