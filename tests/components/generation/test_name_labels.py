"""A name told apart by its label ("Series D", "Phase II", "Tessel 3.0"): invented names throughout."""

from __future__ import annotations

import pytest

from components.generation.name_labels import labelled_names, other_label


def test_labels_after_a_capitalised_word():
    assert labelled_names("the Korvan 11 and 12 missions, then Phase II") == {
        "korvan": frozenset({"11", "12"}),
        "phase": frozenset({"II"}),
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
