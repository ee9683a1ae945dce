"""A birth or death date read from the brackets after the name an encyclopaedic lead sentence opens with."""

from __future__ import annotations

import pytest

from components.generation.life_dates import BIRTH, DEATH, asked_life_event, life_answer, life_date
from components.text.analyzer import terms
from tests.components.generation.test_extractive_answers import answer
from tests.components.ranking.chunks import kb_document


@pytest.mark.parametrize(
    ("question", "event"),
    [
        ("When did Ilsa Varga die?", DEATH),
        ("In what year was Ilsa Varga born?", BIRTH),
        ("Tomas Reln was born on what date?", BIRTH),
        ("What year did the death of Ilsa Varga occur?", DEATH),
        ("Where was Ilsa Varga born?", None),  # a place, not a date
        ("When was Ilsa Varga born and when did she die?", None),  # both: which one is not one answer
        ("When did Ilsa Varga direct Pale Orchard?", None),
        ("Where did Ilsa Varga live when she died?", None),  # a place, asked first
        ("How old was Ilsa Varga when she died?", None),
    ],
)
def test_the_asked_event(question, event):
    assert asked_life_event(question) == event


VARGA = "Ilsa Varga (3 May 1911 – 28 April 1989) was a Hungarian film director."


@pytest.mark.parametrize(
    ("question", "sentence", "expected"),
    [
        ("When did Ilsa Varga die?", VARGA, "28 April 1989"),
        ("When was Ilsa Varga born?", VARGA, "3 May 1911"),
        # A pronunciation's debris and an empty bracket before the dates; month-first dates; "to" as the dash.
        (
            "When did Orm von Kessel die?",
            "Orm von Kessel (] ; 19 December 1900 – 8 June 1969) was a poet.",
            "8 June 1969",
        ),
        (
            "When did Jon II Arvid die?",
            "Jon II Arvid () (27 December 1459 to 17 June 1501) was a king.",
            "17 June 1501",
        ),
        ("When was Pell Arno born?", "Pell Arno (February 27, 1913 – May 16, 1984) was a poet.", "February 27, 1913"),
        # "born" with a birth name first, a circa, a year alone.
        ("When was Tomas Reln born?", "Tomas Reln (born Tom Hask; 8 June 1951) is a Welsh singer.", "8 June 1951"),
        ("When was Dart Mollen born?", "Dart Mollen (c. 1780 – 30 January 1856) was a convict.", "1780"),
        ("When did Mara Oste die?", "Mara Oste (died 1702) was a weaver.", "1702"),
        # A living person's bracket has no death; a bracket that is no life's; a sentence about someone else.
        ("When did Tomas Reln die?", "Tomas Reln (born 8 June 1951) is a Welsh singer.", None),
        ("When did Kessel Rovers die?", "Kessel Rovers (2001 – 2009 season) was a club.", None),
        ("When did Ilsa Varga die?", "It was a remake of the 1949 film Vell (1949 – 1950) by Varga.", None),
        ("When did Ilsa Varga die?", "Anna Varga (1911 – 1989) was her sister.", None),
    ],
)
def test_the_bracket_after_the_name(question, sentence, expected):
    assert life_answer(sentence, question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "When did the husband of Ilsa Varga die?",  # someone the name points at
        "When did Ilsa Varga's husband die?",
        "When did Ilsa Varga and Karl Brenn die?",  # two people: one bracket answers for one
        "When did Karla Ilsa Varga die?",  # a longer name than the sentence's: another person
    ],
)
def test_only_the_person_asked_of_is_read(question):
    assert life_answer(VARGA, question) is None


def test_the_sentence_may_write_the_name_in_full():
    assert life_date(VARGA, DEATH, terms("Varga")) == "28 April 1989"
    assert (
        life_answer("Sandra Miju Oh (born July 20, 1971) is an actress.", "When was Sandra Oh born?") == "July 20, 1971"
    )


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When was Ilsa Varga born?", "3 May 1911"),
        ("In what year did Ilsa Varga die?", "1989"),  # a year asked: the year alone
        ("Which year was Ilsa Varga born in?", "1911"),
        ("Where was Ilsa Varga born?", None),
    ],
)
def test_the_answer_is_as_precise_as_the_question_asks(question, expected):
    assert life_answer(VARGA, question, set(terms(question))) == expected


def test_a_question_asking_when_a_person_died_reads_the_lead_sentence_not_another_date_beside_the_name():
    # The remake's sentence names the director beside a date and shares "director"; the lead sentence shares only the
    # name, with the death at the end of its bracket.
    film = kb_document(
        "film",
        "Dangerous Tide is a 1960 Austrian film directed by Ilsa Varga. It was a remake of the 1949 film Quiet Guests "
        "which had also been directed by Varga.",
        0.9,
        title="Dangerous Tide",
    )
    person = kb_document(
        "person",
        "Ilsa Varga (3 May 1911 – 28 April 1989) was a Hungarian and Austrian film director and screenwriter.",
        0.5,
        title="Ilsa Varga",
    )
    out = answer("When did the director Ilsa Varga die?", [film, person])
    assert out["parts"][0]["short_answer"] == "28 April 1989"
    off = answer("When did the director Ilsa Varga die?", [film, person], rules_off=["life_dates"])
    assert off["parts"][0]["short_answer"] != "28 April 1989"


def test_a_sentence_wording_the_death_itself_stands():
    person = kb_document(
        "person",
        "Ilsa Varga (1911 – 1989) was a Hungarian film director. Ilsa Varga died in Tarvo on 28 April 1989.",
        0.5,
        title="Ilsa Varga",
    )
    assert answer("When did Ilsa Varga die?", [person])["parts"][0]["short_answer"] == "28 April 1989"
