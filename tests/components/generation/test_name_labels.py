"""A name told apart by its label ("Series D", "Phase II", "Tessel 3.0"): invented names throughout."""

from __future__ import annotations

import pytest

from components.generation.name_labels import labelled_names, other_label


def test_labels_after_a_capitalised_word():
    assert labelled_names("the Korvan 11 and 12 missions, then Phase II") == {
        "korvan": frozenset({"11", "12"}),
        "phase": frozenset({"2"}),  # a Roman numeral is its number
    }
    assert labelled_names("Tessel 3.0 shipped") == {"tessel": frozenset({"3"})}  # "3.0" is the "3"


@pytest.mark.parametrize(
    "text",
    [
        "On March 15, 2023 the store opened.",  # a date, not a label
        "The 4 sales centres",  # a function word heads no name
        "It raised 40 million dollars.",
    ],
)
def test_no_label(text):
    assert labelled_names(text) == {}


@pytest.mark.parametrize(
    ("question", "sentence", "other"),
    [
        ("Which firm led the Series D?", "It raised a Series B led by Harrow Partners.", True),
        ("Which firm led the Series D?", "Its Series B and Series D were led by Harrow Partners.", False),
        ("Who flew on Korvan 12?", "The crews of Korvan 11 and 12 trained together.", False),
        ("Who won Tessa Cup I?", "Ana Roe, winner of Tessa Cups I and II, spoke at Tessa Cup 50.", False),  # plural
        ("When was Tessel 3 released?", "Tessel 3.0 was released in 2008.", False),
        ("When was Tessel 3 released?", "Tessel 2.0 was released in 2000.", True),
        ("Which firm led the round?", "It raised a Series B led by Harrow Partners.", False),
        ("Who led the Series D?", "Harrow Partners led the round.", False),  # no label given: no other one
    ],
)
def test_other_label(question, sentence, other):
    assert other_label(question, sentence) is other


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        ("When did Korvan II launch?", "Korvan 2 launched in 1990."),  # a Roman numeral is its number
        ("What happened in Phase 2?", "Phase II began in 1990."),
        ("Which firm led the Series D?", "Harrow led both the Series B and the Series D."),  # the last before a stop
        ("Who flew Korvan 12?", "Ana Roe flew Korvan 11 before Korvan 12."),
        ("What happened in Phase 3?", "Phases 2 to 4 took ten years."),  # a range holds what lies between its ends
        ("Which firm led the Series B?", "Harrow Partners led Series A through C."),
    ],
)
def test_the_same_label_written_otherwise_is_no_other_label(question, sentence):
    assert other_label(question, sentence) is False


def test_a_range_and_a_numeral_read_as_labels():
    assert labelled_names("Phases 2 to 5 and Korvan IV.") == {
        "phase": frozenset({"2", "3", "4", "5"}),
        "korvan": frozenset({"4"}),
    }
    assert other_label("Who flew Korvan IX?", "Korvan 8 flew in 1990.") is True


@pytest.mark.parametrize(
    ("question", "sentence", "other"),
    [
        # A label this module cannot read (a suffix, a numeral of other letters) may be the asked one: undecided.
        ("What was the upgraded Korvan I called?", "The Korvan V and the Korvan IB flew in 1966.", False),
        ("Who won the Tessa Cup 50?", "Ana Roe won the Tessa Cup IIII.", False),
        ("Who won the Tessa Cup 50?", "Ana Roe won the Tessa Cup XLIX.", True),  # a numeral of L read: the 49th
        ("Who flew Korvan 12?", "Korvan 5A flew in 1969.", False),
        # A plain capitalised word after the name is no label at all.
        ("Which firm led the Series D?", "The Series B Fund of Harrow Partners led it.", True),
    ],
)
def test_a_label_it_cannot_read_leaves_the_name_undecided(question, sentence, other):
    assert other_label(question, sentence) is other
