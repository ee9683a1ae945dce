"""Entity kinds from evidence, no junk, and explainable merges, on written examples with invented names."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest

from components.graph.extraction import LanguageExtractor
from components.graph.kinds import FEATURES, KINDS, KindEvidence, KindModel, default_kind_model, features, kind_of_noun
from tests.components.graph.conftest import make_document

# How many numbers the embeddings the shipped kind model reads hold (the default embedding model's).
(WIDTH,) = default_kind_model().embedding_widths()


def wide(*head: float) -> list[float]:
    """An embedding as wide as the shipped kind model reads: `head`, then zeros."""
    return [*head, *[0.0] * (WIDTH - len(head))]


def extract(text: str, title: str = "t"):
    document, chunks = make_document("doc", text, dt.date(2023, 5, 4), title)
    return LanguageExtractor().extract(document, chunks)


def entities(text: str) -> dict:
    return {entity.key: entity for entity in extract(text).entities}


def read_as_model(entity) -> bool:
    """A name read as a model designation: shown as product or as "other" with the designation as evidence, never
    a wrong kind. (Up to `kinds-6` product was also its most probable kind; `kinds-7`, which reads the name's and its
    sentences' embeddings, no longer weighs a designation towards product: the tune sets hold 11 of them.)"""
    return entity.kind in ("product", "other") and "designation" in entity.evidence


class TestKindModel:
    def test_the_shipped_model_loads_and_gives_a_probability(self):
        from components.embedding.model import get_embedding_model

        model = default_kind_model()
        # The shipped model reads the name's and its sentences' embeddings, as the extractor sets them.
        name, sentence = get_embedding_model("all-MiniLM-L6-v2").embed(
            ["Talia Brennick", "Talia Brennick, a physicist, joined the institute."]
        )
        evidence = KindEvidence(
            names=["Talia Brennick"],
            labels=Counter({"person": 3}),
            nouns={"physicist"},
            name_vector=name,
            sentence_vector=sentence,
        )
        decision = model.decide(evidence)
        assert decision.kind == "person" and 0.5 < decision.confidence <= 1.0
        assert "physicist" in decision.evidence

    def test_weak_evidence_below_the_threshold_is_other(self):
        model = KindModel(["organization", "person"], [[0.0] * len(FEATURES)] * 2, [0.0, 0.1], threshold=0.6)
        decision = model.decide(KindEvidence(names=["Quorra"], labels=Counter({"": 1})))
        assert decision.kind == "other" and decision.confidence < 0.6

    def test_where_the_model_abstains_no_role_overrides_it(self):
        # Precision first: below the threshold the kind is "other" with its evidence shown, whatever verbs the entity
        # is the subject of ("Quorra merged", "Quorra acquired": a person or a product acts so too).
        model = KindModel(["organization", "person"], [[0.0] * len(FEATURES)] * 2, [0.0, 0.1], threshold=0.6)
        for roles in ({"s:merge": 1, "i:in": 1}, {"s:acquire": 2, "s:hire": 1}):
            decision = model.decide(KindEvidence(names=["Quorra"], labels=Counter({"": 2}), roles=Counter(roles)))
            assert decision.kind == "other" and decision.confidence < 0.6

    def test_what_the_text_calls_a_name_decides_where_the_model_is_less_sure_than_that_word_has_been_right(self):
        # A model unsure between two kinds; the text calls the name a novelist.
        model = KindModel(
            ["organization", "person"], [[0.0] * len(FEATURES)] * 2, [0.1, 0.0], threshold=0.6, equated=0.89
        )
        called = KindEvidence(names=["Ines Corvalo"], labels=Counter({"organization": 1}), nouns={"novelist"})
        decision = model.decide(called)
        assert (decision.kind, decision.confidence) == ("person", 0.89)
        assert "novelist" in decision.evidence and "what the text calls it (right 89%" in decision.evidence
        # Without the measured word (an older model) or without a word, the model's own kind stands.
        unmeasured = KindModel(["organization", "person"], [[0.0] * len(FEATURES)] * 2, [0.1, 0.0], threshold=0.6)
        assert unmeasured.decide(called).kind == "other"
        assert model.decide(KindEvidence(names=["Ines Corvalo"], labels=Counter({"organization": 1}))).kind == "other"
        # Nouns of two kinds say nothing ("the publisher and novelist"), nor does a noun of no kind.
        for nouns in ({"novelist", "publisher"}, {"stalwart"}):
            evidence = KindEvidence(names=["Ines Corvalo"], labels=Counter({"organization": 1}), nouns=nouns)
            assert model.decide(evidence).kind == "other", nouns
        # A model surer of its own kind than the word has been right keeps it.
        sure = KindModel(
            ["organization", "person"], [[0.0] * len(FEATURES)] * 2, [4.0, 0.0], threshold=0.6, equated=0.89
        )
        decision = sure.decide(called)
        assert decision.kind == "organization" and decision.confidence > 0.89

    def test_a_result_after_a_name_makes_it_an_organisation_where_the_model_is_less_sure_than_that_has_been_right(self):
        # A model that reads the name as a place, not sure of it; a result follows the name twice.
        model = KindModel(
            ["organization", "place"], [[0.0] * len(FEATURES)] * 2, [0.0, 0.1], threshold=0.4, competing=0.8
        )
        scored = KindEvidence(names=["Varnholm"], labels=Counter({"place": 2}), scored=2)
        decision = model.decide(scored)
        assert (decision.kind, decision.confidence) == ("organization", 0.8)
        assert (
            "a result after it 2" in decision.evidence and "a result follows its name (right 80%" in decision.evidence
        )
        # A person's label on most mentions or a title before the name says a person competes (one label of two
        # does not: the recogniser reads a club's name as a person's now and then); without a result nothing competes.
        assert (
            model.decide(KindEvidence(names=["Varnholm"], labels=Counter({"place": 1, "person": 1}), scored=1)).kind
            == "organization"
        )
        for evidence in (
            KindEvidence(names=["Varnholm"], labels=Counter({"place": 1, "person": 2}), scored=1),
            KindEvidence(names=["Varnholm"], labels=Counter({"place": 2}), scored=1, titled=1),
            KindEvidence(names=["Varnholm"], labels=Counter({"place": 2})),
        ):
            assert model.decide(evidence).kind == "place", evidence
        # Without the measured number (an older model) the model's kind stands, and so where it is surer than that.
        unmeasured = KindModel(["organization", "place"], [[0.0] * len(FEATURES)] * 2, [0.0, 0.1], threshold=0.4)
        assert unmeasured.decide(scored).kind == "place"
        sure = KindModel(
            ["organization", "place"], [[0.0] * len(FEATURES)] * 2, [0.0, 4.0], threshold=0.4, competing=0.8
        )
        assert sure.decide(scored).kind == "place"
        # What the text calls the name decides before the result does.
        called = KindEvidence(names=["Varnholm"], labels=Counter({"place": 2}), scored=1, nouns={"town"})
        said = KindModel(
            ["organization", "place"],
            [[0.0] * len(FEATURES)] * 2,
            [0.0, 0.1],
            threshold=0.4,
            equated=0.89,
            competing=0.8,
        )
        assert said.decide(called).kind == "place"

    def test_a_result_after_a_name_is_a_score_a_row_of_figures_or_figures_after_two_names(self):
        from components.graph.name_forms import result_after
        from components.text.language import analyse_text

        def scored(text: str, *names: tuple[int, int]) -> list[bool]:
            _, doc = next(iter(analyse_text(text)))
            sentence = doc[:]  # the line as one sentence
            return [result_after(sentence, end, [e for _, e in names]) for _, end in names]

        assert scored("Ostby beat Dalby 3-1 on Saturday.", (0, 1), (2, 3)) == [False, True]
        assert scored("Dalby United 12 8 25 and Ostby City 12 7 22.", (0, 2), (6, 8)) == [True, True]
        assert scored("Varnholm 2 Ostby 1 on Saturday.", (0, 1), (2, 3)) == [True, True]
        # One figure after one name is no result ("Varnholm 2 ships"); nor is a number after a word.
        assert scored("Varnholm sold 2 ships to Ostby in May.", (0, 1), (5, 6)) == [False, False]
        assert scored("Varnholm 2 left the port of Ostby in May.", (0, 1), (6, 7)) == [False, False]

    def test_a_model_fitted_on_other_features_is_refused(self):
        with pytest.raises(ValueError, match="fit it again"):
            KindModel(["other"], [[0.0]], [0.0], 0.0, feature_names=["label:person"])

    def test_a_name_a_headline_writes_in_capitals_is_read_and_shown_as_running_text_writes_it(self):
        from components.graph.kinds import fullest_name

        found = entities(
            "BUSINESS - KESTREL BUYS OSTBY PLANT .\nOSTBY 1996-09-14\n"
            "Kestrel said on Monday it had bought a plant in Ostby .\nThe plant employs 300 people ."
        )["kestrel"]
        # Both spellings once: the capitals say nothing of the name's shape ("KESTREL" would read as an acronym).
        assert sorted(found.kind_evidence.names) == ["KESTREL", "Kestrel"]
        assert found.name == "Kestrel" and fullest_name(found.kind_evidence) == "Kestrel"

    def test_the_labels_of_the_fullest_name_are_features_of_their_own(self):
        evidence = KindEvidence(
            names=["Nordvik Aerospace", "Nordvik"],
            labels=Counter({"place": 3, "organization": 1}),
            name_labels=Counter({(2, "organization"): 1, (1, "place"): 3}),
        )
        values = features(evidence)
        assert values[FEATURES.index("full:organization")] == 1.0 and values[FEATURES.index("full:place")] == 0.0
        assert values[FEATURES.index("label:place")] == 0.75
        found = entities("Nordvik Aerospace opened a plant in Varna in 2019. Nordvik said the plant employs 300.")
        name_labels = found["nordvik aerospace"].kind_evidence.name_labels
        assert name_labels and max(words for words, _ in name_labels) == 2

    def test_nouns_and_roles_are_features(self):
        plain = features(KindEvidence(names=["Zorvex"], labels=Counter({"organization": 1})))
        told = features(
            KindEvidence(
                names=["Zorvex"],
                labels=Counter({"organization": 1}),
                nouns={"database"},
                roles=Counter({"o:release": 2}),
            )
        )
        assert told[FEATURES.index("noun:product")] == 1.0 and plain[FEATURES.index("noun:product")] == 0.0
        assert told[FEATURES.index("role:product")] == 1.0
        assert kind_of_noun("mathematician") == "person" and kind_of_noun("planemaker") == "organization"
        assert set(KINDS) >= {"person", "organization", "place", "product", "work", "event", "other"}

    def test_how_its_mentions_take_part_in_their_clauses_are_features(self):
        # Whatever the verb or the preposition: an agent ("Dravik hired 40 people"), a passive subject, an object, a
        # preposition's object ("flights to Dravik"), a possessor ("Dravik's board"); the copula's subject is no agent.
        evidence = KindEvidence(
            names=["Dravik"],
            labels=Counter({"": 4}),
            roles=Counter({"s:hire": 1, "s:be": 1, "i:to": 1, "g:board": 1}),
        )
        x = features(evidence)
        assert x[FEATURES.index("part:agent")] == 0.25
        assert x[FEATURES.index("part:preposition")] == 0.25 and x[FEATURES.index("part:possessor")] == 0.25
        assert x[FEATURES.index("part:object")] == 0.0 and x[FEATURES.index("part:passive")] == 0.0
        found = entities("Ostrava Lenk's board met in Kelmar. Ostrava Lenk hired 40 engineers in Kelmar.")
        roles = found["ostrava lenk"].kind_evidence.roles
        assert roles["g:board"] == 1 and roles["s:hire"] == 1
        assert features(found["ostrava lenk"].kind_evidence)[FEATURES.index("part:possessor")] == 0.5
        assert features(found["kelmar"].kind_evidence)[FEATURES.index("part:preposition")] == 1.0

    def test_a_company_designator_ending_a_name_is_organisation_evidence(self):
        # "Ltd.", "Group", "Holdings": how the language writes an organisation's name, of any trade.
        designated = KindEvidence(names=["Brask Ferrow Ltd.", "Brask Ferrow"], labels=Counter({"": 2}))
        plain = KindEvidence(names=["Brask Ferrow"], labels=Counter({"": 2}))
        assert features(designated)[FEATURES.index("name:designator")] == 1.0
        assert features(plain)[FEATURES.index("name:designator")] == 0.0
        assert features(KindEvidence(names=["Group"]))[FEATURES.index("name:designator")] == 0.0  # a word alone
        # Written with inner dots ("S.A.", "N.V.", "S.p.A."), as the key drops them; "the" and a designator is no name.
        for name in ("Brask Ferrow S.A.", "Brask Ferrow N.V.", "Brask Ferrow S.p.A.", "The Brask Ferrow Group"):
            assert features(KindEvidence(names=[name]))[FEATURES.index("name:designator")] == 1.0, name
        for name in ("The Group", "The Labs"):
            assert features(KindEvidence(names=[name]))[FEATURES.index("name:designator")] == 0.0, name
        model = default_kind_model()
        assert model.probabilities(designated)["organization"] > model.probabilities(plain)["organization"] + 0.1
        # Alone (no label, no role) it makes organisation the likeliest kind; whether that is sure enough to be shown
        # as the kind is the fitted threshold's call, and the evidence line says why either way.
        probabilities = model.probabilities(designated)
        assert max(probabilities, key=probabilities.get) == "organization"
        assert "company designator" in model.decide(designated).evidence
        # Read from the text: the mention "Quillon Holdings" keeps its written name, though its key drops the word.
        found = entities("Quillon Holdings bought a plant in Varna in 2019. Quillon Holdings said it employs 300.")
        assert found["quillon"].kind_evidence.names == ["Quillon Holdings"]
        assert features(found["quillon"].kind_evidence)[FEATURES.index("name:designator")] == 1.0

    def test_the_pronoun_after_a_name_is_evidence_of_a_person_or_a_thing(self):
        found = entities(
            "Orla Vennick resigned in 2019, and her team followed. "
            "Brightwater Loom said in 2020 that its plant would close."
        )
        assert found["orla vennick"].kind_evidence.pronouns == Counter({"person": 1})
        assert "next pronoun he/she 1" in found["orla vennick"].evidence  # shown with the kind
        # Shown as what was counted: the pronoun after a name may be the next name's, so no "referred to as".
        joined = entities("Orla Vennick joined Quillon Holdings in 2019, and its shares rose.")["orla vennick"]
        assert "next pronoun it 1" in joined.evidence and "referred to as" not in joined.evidence
        assert found["brightwater loom"].kind_evidence.pronouns["thing"] >= 1
        assert found["brightwater loom"].kind_evidence.pronouns["person"] == 0
        said = KindEvidence(names=["Tamsin Royle"], labels=Counter({"": 2}), pronouns=Counter({"person": 2}))
        person = features(said)
        assert person[FEATURES.index("pronoun:person")] == 1.0 and person[FEATURES.index("pronoun:thing")] == 0.0
        model = default_kind_model()
        plain = KindEvidence(names=["Tamsin Royle"], labels=Counter({"organization": 2}))
        told = KindEvidence(
            names=["Tamsin Royle"], labels=Counter({"organization": 2}), pronouns=Counter({"person": 2})
        )
        assert model.probabilities(told)["person"] > model.probabilities(plain)["person"]

    def test_a_name_before_a_title_and_a_persons_name_is_not_the_person(self):
        # "Tarvik coach Emil Strand said ... his ...": the club premodifies the coach's title; the speaker and the
        # owner of "his" is Strand. Read as the subject of "said" with a person's pronoun after it, the club looked
        # a person.
        found = entities(
            "Tarvik won the league title on Saturday. Tarvik coach Emil Strand said on Sunday his players were tired."
        )
        club = found["tarvik"].kind_evidence
        assert club.roles == Counter({"s:win": 1}) and club.pronouns["person"] == 0
        assert found["tarvik"].kind != "person"
        assert found["emil strand"].kind_evidence.roles["s:say"] == 1
        assert found["emil strand"].kind_evidence.pronouns["person"] == 1

    def test_a_title_right_before_a_name_is_person_evidence(self):
        found = entities("Chairman Orvel Tansy opened the Brightwater Loom plant in 2019. Tansy said it employs 300.")
        assert found["orvel tansy"].kind_evidence.titled == 1  # the title is evidence, not part of the name
        assert found["orvel tansy"].name == "Orvel Tansy" and "after a title 1" in found["orvel tansy"].evidence
        titled = KindEvidence(names=["Orvel Tansy"], labels=Counter({"organization": 2}), titled=2)
        plain = KindEvidence(names=["Orvel Tansy"], labels=Counter({"organization": 2}))
        assert features(titled)[FEATURES.index("title:before")] == 1.0
        assert features(plain)[FEATURES.index("title:before")] == 0.0
        model = default_kind_model()
        # (`kinds-6` by more than 0.1; `kinds-7` reads person evidence in the name's embedding too, and weighs the
        # title less.)
        assert model.probabilities(titled)["person"] > model.probabilities(plain)["person"] + 0.02
        # And it is evidence of a person above all: no other kind gains from a title as much.
        title = FEATURES.index("title:before")
        weight = {kind: row[title] for kind, row in zip(model.classes, model.coef, strict=True)}
        assert max(weight, key=weight.get) == "person" and weight["person"] > 0

    def test_the_subject_of_a_verb_of_saying_is_person_or_organisation_evidence(self):
        # The name itself, one of coordinated subjects, or named in an apposition to the subject speaks.
        for text, key in (
            ("Quillon Brask said on Monday that the plant in Varna would close.", "quillon brask"),
            ("Orla Vennick and Tamsin Royle announced the merger in 2019.", "tamsin royle"),
            ("Its founder, Orla Vennick, told reporters in Varna that sales rose.", "orla vennick"),
        ):
            found = entities(text)
            assert found[key].kind_evidence.spoke == 1, text
            assert "speaks 1" in found[key].evidence, text
        # A word of a longer subject, a subject of another verb, or a place the saying happened in does not.
        for text, key in (
            ("A Quillon Holdings spokesman said in 2019 that the plant would close.", "quillon"),
            ("Orla Vennick opened the plant in Varna in 2019.", "orla vennick"),
            ("Orla Vennick said in Varna that sales rose.", "varna"),
        ):
            assert entities(text)[key].kind_evidence.spoke == 0, text
        # A speaker is also its verb's subject, as the extractor records it (`kinds-10` reads that as an agent too).
        spoke = KindEvidence(names=["Zorvath"], labels=Counter({"place": 2}), roles=Counter({"s:say": 2}), spoke=2)
        plain = KindEvidence(names=["Zorvath"], labels=Counter({"place": 2}))
        assert features(spoke)[FEATURES.index("role:speaker")] == 1.0
        assert features(plain)[FEATURES.index("role:speaker")] == 0.0
        model = default_kind_model()
        speaking, silent = model.probabilities(spoke), model.probabilities(plain)
        assert speaking["person"] + speaking["organization"] > silent["person"] + silent["organization"] + 0.05
        assert speaking["place"] < silent["place"]

    def test_a_verb_of_saying_that_says_nothing_is_no_speaker_evidence(self):
        # A reduced passive ("said to be") says something of the subject; "add" and "claim" with a noun object are
        # other senses than saying.
        for text, key in (
            ("Varna, said to be the oldest city in Ostmark, lies on the coast.", "varna"),
            ("Varna added 3,000 jobs in 2019.", "varna"),
            ("Storm Zorvath claimed 30 lives in Ostmark.", "storm zorvath"),
        ):
            assert entities(text)[key].kind_evidence.spoke == 0, text
        # The same verbs with what is said as a clause, a quotation or a parenthesis still speak.
        for text, key in (
            ("Orla Vennick added that the plant would close.", "orla vennick"),
            ('"The plant will close," Orla Vennick added.', "orla vennick"),
            ("Orla Vennick claimed that the plant was safe.", "orla vennick"),
            ("Sales in Varna, Orla Vennick said, rose by ten percent.", "orla vennick"),
            ("Orla Vennick told Tamsin Royle that the plant would close.", "orla vennick"),
        ):
            assert entities(text)[key].kind_evidence.spoke == 1, text

    def test_a_title_word_that_is_part_of_a_name_or_modifies_another_word_is_no_title(self):
        # A title that opens a place's or an organisation's name, or a word of the list that modifies another word
        # than the name, is no evidence that the name is a person's (and is not shown as "after a title").
        for text, key in (
            ("The plant in St. Orvel was opened by Quillon in 2019.", "st orvel"),  # the title word is the name's
            ("Quillon moved to King Harald Square in 2019.", "king harald square"),
            ("General Tavrin Motors opened a plant in Varna in 2019.", "tavrin motors"),
            ("We reviewed the technology Quillon uses in its plants in 2019.", "quillon"),
        ):
            found = entities(text)
            assert found[key].kind_evidence.titled == 0, text
            assert "after a title" not in found[key].evidence, text
        # Titles before a person still count, capitalised or not.
        for text, key in (
            ("Former chief executive Orla Vennick left Quillon in 2019.", "orla vennick"),
            ("Dr. Vennick said so in 2019.", "vennick"),
        ):
            assert entities(text)[key].kind_evidence.titled == 1, text


class TestKindsFromEvidence:
    def test_kind_confidence_and_evidence_are_kept(self):
        found = entities("Talia Brennick, a physicist at Ostrava University, was born in 1961. Brennick said so.")
        person = found["talia brennick"]
        assert person.kind == "person" and person.confidence > 0.5
        assert "physicist" in person.evidence

    def test_what_the_text_equates_a_name_with_types_it(self):
        found = entities(
            "Zorvex is an open-source vector database written in a systems language. "
            "The Zorvex database was released in 2021 and developers use Zorvex for search."
        )
        assert found["zorvex"].kind == "product"
        assert "database" in found["zorvex"].evidence

    def test_what_the_text_calls_a_name_decides_its_kind_where_the_model_is_unsure(self):
        # The recogniser reads the first as an organisation, and the model reads the second's name as a product.
        for text, key in (
            ("Passengers praised Kelvane, a leader of the industry, in 2019.", "kelvane"),
            ("Critics praised Orsanna, a novelist from the north, in 2019.", "orsanna"),
        ):
            found = entities(text)[key]
            assert found.kind == "person", text
            assert found.confidence == default_kind_model().equated and "what the text calls it" in found.evidence

    def test_a_name_a_result_follows_is_an_organisation_where_the_model_is_unsure(self):
        # The recogniser gives the name no label and the model reads it as a place, not sure of it.
        found = entities("Dunharrow beat Brisk Vale 3-1 on Saturday to go top of the northern league.")["brisk vale"]
        assert found.kind == "organization" and found.confidence == default_kind_model().competing
        assert "a result after it 1" in found.evidence and "a result follows its name" in found.evidence


class TestNoJunk:
    def test_titles_alone_are_no_entities_and_not_part_of_a_name(self):
        found = entities(
            "Chief Executive Officer Marta Quell said the plant would open in 2024. "
            "Vice President Oskar Brandt said the plan was approved in March."
        )
        assert "chief executive officer" not in found and "vice president" not in found
        assert "marta quell" in found and "oskar brandt" in found

    def test_a_generational_suffix_alone_or_opening_a_name_is_no_entity(self):
        # "Jr." after a comma, where the recogniser ended the name, is no entity of its own; at the end of a name it
        # stays, so that a son is not his father.
        found = entities("Tavin Orrell, Jr. (a founder) and Mako Dunst (an investor) left Quillon in 2015.")
        assert "jr" not in found and "mako dunst" in found
        found = entities("Tavin Orrell Sr. founded Quillon in 1950, and his son Tavin Orrell Jr. ran it from 1980.")
        assert {"tavin orrell sr", "tavin orrell jr"} <= set(found)

    def test_the_surname_of_a_name_with_a_generational_suffix_is_the_word_before_it(self):
        # "Orrell" alone is Tavin Orrell Jr.'s surname, not "Jr."; with a father and a son of that name in the same
        # text, "Orrell" alone names neither.
        found = entities("Tavin Orrell Jr. founded Quillon in 2010. Orrell left Quillon in 2015.")
        assert "orrell" not in found and "orrell" in found["tavin orrell jr"].aliases
        assert "jr" not in found["tavin orrell jr"].aliases
        found = entities("Tavin Orrell Sr. founded Quillon in 1950, and Tavin Orrell Jr. ran it. Orrell died in 1990.")
        assert {"tavin orrell sr", "tavin orrell jr", "orrell"} <= set(found)

    def test_a_word_that_only_heads_an_of_phrase_is_no_entity(self):
        # "Margrave of Varnia", "Professor of the Theory of ...": the common noun of a description whose name is in
        # the of-phrase; a name the recogniser reads whole ("Bank of Ostby") stays.
        found = entities("Ilse Orvel, Margrave of Varnia, granted the weavers of Ostby a charter in 1702.")
        assert "margrave" not in found and {"ilse orvel", "varnia"} <= set(found)
        found = entities("In 1938 Halvard Quist, Professor of the Theory of Music at Ostby, criticised the decree.")
        assert "professor" not in found and "halvard quist" in found
        assert "bank of ostby" in entities("The Bank of Ostby raised its rates in 2020.")
        assert "k900" in entities("The K900 of Talmont Aerospace made its first flight in 2021.")

    def test_a_number_before_a_makers_name_counts_its_things(self):
        # "40 Nordvik Aerospace engines": a count of the maker's things, not a model designation "40 Nordvik ...".
        found = entities("Quillon said 40 Nordvik Aerospace engines were delivered in 2018.")
        assert "nordvik aerospace" in found and not any(key.startswith("40") for key in found)

    def test_a_part_of_a_longer_written_word_is_no_entity(self):
        found = entities("Clients honour the Fizzle-Back header, which Dorvant Labs added to its gateway in 2022.")
        assert "fizzle" not in found

    def test_a_name_does_not_run_on_past_an_initial_ending_a_sentence(self):
        found = entities(
            "The three had worked together at Brightwell X. Treadway then led the robotics work at Nuvola in 2019."
        )
        assert not any("treadway" in key and "brightwell" in key for key in found)

    def test_a_capitalised_word_the_text_also_writes_in_lower_case_is_no_entity(self):
        found = entities("Award winners included Oslo Works in 2020. The award is given every year.")
        assert "award" not in found and "oslo works" in found

    def test_a_capitalised_word_in_a_heading_only_is_no_entity(self):
        found = entities("# Standings\n\nOslo Works led the standings in 2020 and kept the lead.")
        assert "standings" not in found and "oslo works" in found

    @pytest.mark.parametrize(
        ("text", "name"),
        [
            (
                "Oslo Works wrote the new parser in Rust in 2021, and Rust made it faster. The old hinge showed rust.",
                "rust",
            ),
            ("Oslo Works ships builds for Windows since 2019. The windows of the office face north.", "windows"),
        ],
    )
    def test_a_name_written_capitalised_mid_sentence_stays_beside_its_common_noun(self, text, name):
        assert name in entities(text)

    def test_an_unlabelled_piece_beside_a_capitalised_word_is_no_entity(self):
        # The recogniser labels "Quellan Dawn" and leaves "Eternal", the first word of the same title, unlabelled.
        found = entities("The band released Eternal Quellan Dawn in 2004, which Dawn Records sold in Drevik.")
        assert "eternal" not in found
        assert "quellan dawn" in found and "dawn records" in found

    def test_a_lower_case_common_noun_is_no_entity(self):
        found = entities("The node holds a vector and metadata. Hollis Grane wrote the store in 2018.")
        assert "node" not in found and "metadata" not in found and "hollis grane" in found

    def test_trailing_common_words_are_not_part_of_a_name(self):
        from components.graph.extraction import LanguageExtractor, _DocEntity  # noqa: F401
        from components.text.language import analyse_text

        _, doc = next(iter(analyse_text("The results were worse than older methods such as Vexel averages.")))
        span = doc[-3:-1]  # "Vexel averages"
        found: dict = {}
        mention = LanguageExtractor._mention(span, found, "organization")
        assert mention is not None and list(found) == ["vexel"]


class TestOnePerThing:
    def test_coordinated_people_are_two_people(self):
        from components.graph.name_forms import split_name
        from components.text.language import analyse_text

        _, doc = next(iter(analyse_text("Orrin Vale and Petra Lund wrote the first release of Quillon.")))
        parts = split_name(doc[0:5], "PERSON")  # as the recogniser sometimes takes them: one PERSON span
        assert [part.text for part in parts] == ["Orrin Vale", "Petra Lund"]
        assert [part.text for part in split_name(doc[0:5], "ORG")] == ["Orrin Vale and Petra Lund"]

    def test_names_listed_with_a_comma_are_two_names(self):
        from components.graph.name_forms import split_name
        from components.text.language import analyse_text

        # As the recogniser sometimes takes them: a list's or an apposition's names as one span.
        _, doc = next(iter(analyse_text("Traders shipped grain from Ostvara, Dellmoor and the Varnish Republic.")))
        assert [part.text for part in split_name(doc[4:7], "GPE")] == ["Ostvara", "Dellmoor"]
        _, doc = next(iter(analyse_text("The ships sailed from Ostvara, Dellmoor to the Varnish Republic.")))
        assert [part.text for part in split_name(doc[4:7], "GPE")] == ["Ostvara", "Dellmoor"]
        # A designator or a generational suffix after the comma is part of the name ...
        _, doc = next(iter(analyse_text("Quillon Network, Inc. opened an office.")))
        assert [part.text for part in split_name(doc[0:4], "ORG")] == ["Quillon Network, Inc."]
        _, doc = next(iter(analyse_text("Tavin Orrell, Jr. spoke on Monday.")))
        assert [part.text for part in split_name(doc[0:4], "PERSON")] == ["Tavin Orrell, Jr."]
        # ... and a span that holds a whole list with its "and" names one thing.
        _, doc = next(iter(analyse_text("Kelmar Servicing, Repair and Overhaul opened a hangar.")))
        assert [part.text for part in split_name(doc[0:6], "ORG")] == ["Kelmar Servicing, Repair and Overhaul"]

    def test_a_number_opening_a_persons_name_is_a_score_before_it(self):
        from components.graph.name_forms import split_name
        from components.text.language import analyse_text

        _, doc = next(iter(analyse_text("138 Tomas Herrera ( Chile ) 70 68 , Kenji Aoyama ( Japan ) 69 69")))
        # A leaderboard row, as the recogniser sometimes takes its score and name: one PERSON span.
        assert [part.text for part in split_name(doc[0:3], "PERSON")] == ["Tomas Herrera"]
        assert [part.text for part in split_name(doc[0:3], "ORG")] == ["138 Tomas Herrera"]  # "3 Suisses" may be one

    def test_a_name_and_its_longer_variant_are_two_names(self):
        from components.graph.name_forms import split_name
        from components.text.language import analyse_text

        _, doc = next(iter(analyse_text("The shop sells the Zentra and Zentra Pro laptops.")))
        span = doc[4:8]  # "Zentra and Zentra Pro", as the recogniser may take it: one ORG span
        assert [part.text for part in split_name(span, "ORG")] == ["Zentra", "Zentra Pro"]
        # ... and so with the article the recogniser may take with them.
        assert [part.text for part in split_name(doc[3:8], "ORG")] == ["Zentra", "Zentra Pro"]
        _, doc = next(iter(analyse_text("The shop sells Zentra and Vexo Labs laptops.")))
        assert [part.text for part in split_name(doc[3:7], "ORG")] == ["Zentra and Vexo Labs"]  # one name

    @pytest.mark.parametrize(
        ("text", "start", "end", "parts"),
        [
            ("Orla Fenn moved to Harlow University in Ostby last year.", 4, 8, ["Harlow University", "Ostby"]),
            ("The router maker is based in Port Ulm - Vexcom said so.", 6, 10, ["Port Ulm", "Vexcom"]),
        ],
    )
    def test_a_place_preposition_or_a_spaced_dash_ends_a_name(self, text, start, end, parts):
        from components.graph.name_forms import split_name
        from components.text.language import analyse_text

        _, doc = next(iter(analyse_text(text)))
        assert [part.text for part in split_name(doc[start:end], "ORG")] == parts
        assert [part.text for part in split_name(doc[start : end - 2], "ORG")] == [parts[0]]  # a name stays whole

    def test_an_of_or_for_joins_untagged_proper_nouns_into_one_name(self):
        from components.graph.extraction import LanguageExtractor
        from components.text.language import analyse_text

        _, doc = next(iter(analyse_text("In 2015, the Society for Applied Tinkering announced that Mira Coll won.")))
        doc.ents = []  # as when the recogniser misses the name: its proper nouns are runs
        runs = [run.text for run in LanguageExtractor._proper_noun_runs(doc[:], set())]
        assert "Society for Applied Tinkering" in runs and "Applied Tinkering" not in runs

    def test_a_surname_alone_joins_the_full_name_with_its_reason(self):
        found = entities(
            "In 2021 Andrei Zorvanek founded Pellucid in Tallinn. Zorvanek led the company until 2023, "
            "and Zorvanek still advises it."
        )
        assert "zorvanek" not in found
        person = found["andrei zorvanek"]
        assert "zorvanek" in person.aliases and "surname" in person.reasons["zorvanek"]

    def test_the_last_word_alone_joins_a_full_name_the_recogniser_left_unlabelled(self):
        # In a results line the recogniser labels no kind for "Dimitar Kolev", so no surname alias waits for it; the
        # story's "Kolev" alone, unlabelled too, is still that name.
        found = entities(
            "Second round 1 - Dimitar Kolev ( Bulgaria ) beat Joran Vik ( Norway ) 6-3 6-4\n\n"
            "Kolev , who won the title two years ago , plays on Thursday ."
        )
        assert "kolev" not in found
        assert "last word" in found["dimitar kolev"].reasons["kolev"]

    def test_a_company_named_after_a_person_is_not_the_persons_surname(self):
        # "Royle Holdings" is keyed "royle" (the designator dropped), but it is written as a company's name: it stays
        # its own organisation, and the founder stays a person.
        found = entities("Tamsin Royle founded Royle Holdings in 2019. Royle Holdings said it employs 300.")
        assert found["tamsin royle"].kind == "person"
        assert found["tamsin royle"].kind_evidence.names == ["Tamsin Royle"]
        assert found["royle"].name == "Royle Holdings" and found["royle"].kind == "organization"
        assert "company designator" not in found["tamsin royle"].evidence

    def test_a_first_word_used_more_than_the_longer_name_stays_its_own(self):
        found = entities(
            "Brindle released Brindle Cloud, a hosted service, in 2022. Brindle is an open-source framework. "
            "Brindle added charts in 2020. Developers install Brindle with one command since 2019."
        )
        assert "brindle" in found


class TestNumbers:
    def test_a_bare_number_is_no_entity_but_a_model_keeps_its_short_form(self):
        found = entities(
            "Brask Ferries has ordered 22 new Talmont 909 ferries. The 909 seated 250 passengers on its first trip."
        )
        assert "22" not in found
        model = found["talmont 909"]
        assert read_as_model(model)  # the designation is a feature of the fitted model


class TestKindFeatures:
    def test_context_features_are_common_words_never_names(self):
        from components.graph.extraction import _context_word
        from components.text.language import analyse_text

        _, doc = next(iter(analyse_text("Oslo Works sued Brindle over the new Quorra tablet in Varna.")))
        kept = {token.text for token in doc if _context_word(token)}
        assert {"sued", "new", "tablet"} <= kept
        assert not kept & {"Oslo", "Works", "Brindle", "Quorra", "Varna", "over", "the", "in"}

    def test_a_model_designation_is_weighed_by_the_model_not_decided_by_rule(self):
        index = FEATURES.index("label:designation")
        weights = [[0.0] * len(FEATURES), [0.0] * len(FEATURES)]
        weights[1][index] = 4.0
        model = KindModel(["person", "product"], weights, [0.0, 0.0], threshold=0.6)
        designated = KindEvidence(names=["Talmont 909"], labels=Counter({"designation": 2}))
        assert model.decide(designated).kind == "product" and model.decide(designated).confidence > 0.9
        unweighted = KindModel(["person", "product"], [[0.0] * len(FEATURES)] * 2, [0.0, 0.0], threshold=0.6)
        decision = unweighted.decide(designated)
        assert decision.kind == "other" and decision.confidence == 0.5  # no shortcut around the model


class TestEmbeddingReadings:
    """The name's embedding and its sentences' mean embedding, each read by a regression of its own (`kinds-7`)."""

    @staticmethod
    def _reader_model():
        from components.graph.kinds import EmbeddingReader

        # The name reader says "person" for vectors along the first axis, "organization" along the second; the kind
        # model trusts nothing but that reading.
        readers = {"name": EmbeddingReader(["organization", "person"], [[-4.0, 4.0], [4.0, -4.0]], [0.0, 0.0])}
        coef = [[0.0] * len(FEATURES) for _ in range(2)]
        coef[0][FEATURES.index("embedding_name:organization")] = 6.0
        coef[1][FEATURES.index("embedding_name:person")] = 6.0
        return KindModel(["organization", "person"], coef, [0.0, 0.0], 0.6, readers=readers)

    def test_the_name_embedding_is_read_by_a_regression_whose_probabilities_are_features(self):
        model = self._reader_model()
        labels = Counter({"organization": 1})  # the recogniser's wrong label, which this model does not weigh
        person = KindEvidence(names=["Orla Vennick"], labels=labels, name_vector=[1.0, 0.0])
        company = KindEvidence(names=["Quillon"], labels=labels, name_vector=[0.0, 1.0])
        assert model.decide(person).kind == "person" and model.decide(company).kind == "organization"
        assert model.decide(person).evidence == "labels organization 1; name reads person 1.00"  # shown with the rest
        readings = model.readings(person)
        assert readings["name"]["person"] > 0.99
        values = features(person, readings=readings)
        assert values[FEATURES.index("embedding_name:person")] == readings["name"]["person"]
        # Without a vector (no embedding model), or of another dimension, there is no reading: no kind from it.
        assert model.readings(KindEvidence(names=["Orla Vennick"])) == {"name": {}}
        assert model.readings(KindEvidence(names=["Orla Vennick"], name_vector=[1.0, 0.0, 0.0])) == {"name": {}}
        assert model.decide(KindEvidence(names=["Orla Vennick"], labels=labels)).kind == "other"

    def test_the_readers_are_written_and_read_with_the_model(self, tmp_path):
        import json

        from components.graph.kinds import to_json

        path = tmp_path / "kinds.json"
        path.write_text(json.dumps(to_json(self._reader_model())), encoding="utf-8")
        loaded = KindModel.load(path)
        assert loaded.decide(KindEvidence(names=["Orla Vennick"], name_vector=[1.0, 0.0])).kind == "person"
        broken = {**to_json(self._reader_model()), "readers": {"name": {"classes": ["person"], "coef": [[1.0]]}}}
        path.write_text(json.dumps(broken), encoding="utf-8")
        with pytest.raises(ValueError, match="not one the fitting script writes"):
            KindModel.load(path)

    def test_a_model_of_an_older_version_is_refused_when_loaded_in_one_sentence(self, tmp_path):
        import json

        from components.graph.kinds import to_json

        # A `kinds-6` file: no embedding features, so one weight fewer per reader kind than this version reads.
        older = [name for name in FEATURES if not name.startswith("embedding_")]
        written = to_json(self._reader_model())
        written["coef"] = [row[: len(older)] for row in written["coef"]]
        path = tmp_path / "kinds.json"
        path.write_text(json.dumps({**written, "version": "kinds-6", "features": older}), encoding="utf-8")
        with pytest.raises(ValueError, match="kinds-6 was fitted on other features") as raised:
            KindModel.load(path)
        assert "\n" not in str(raised.value)
        # One without its feature names (older still): refused when loaded too, not on the first entity it reads.
        path.write_text(json.dumps({**written, "version": "kinds-2"}), encoding="utf-8")
        with pytest.raises(ValueError, match="kinds-2 has not one weight per feature"):
            KindModel.load(path)
        with pytest.raises(ValueError, match="not one weight per feature"):
            LanguageExtractor(kind_model_path=str(path))

    def test_the_extractor_reuses_the_chunks_sentence_vectors_and_embeds_the_rest_in_one_batch(self, monkeypatch):
        import numpy as np

        from components.knowledge_base.store import ChunkRecord  # the record ingestion hands to the extractor

        class Embedder:
            def __init__(self):
                self.calls = []

            def embed(self, texts, batch_size=32):
                self.calls.append(list(texts))
                return np.array([wide(1.0) for _ in texts], dtype=np.float32)

        first = "Orla Vennick joined Quillon in 2019."
        second = "Tavrin Kelso founded Brask Ferrow in 2012."
        text = f"{first} {second}"
        document, _ = make_document("doc", text, dt.date(2023, 5, 4), "t")
        stored = np.array(wide(0.0, 1.0), dtype=np.float32)
        # The chunk holds the first sentence's in-context vector (made at ingestion), not the second's.
        chunk = ChunkRecord(
            chunk_id="doc-c0",
            document_id="doc",
            chunk_index=0,
            text=text,
            metadata={"char_start": 0, "char_end": len(text)},
            sentence_spans=[(0, len(first))],
            sentence_embeddings=stored[None, :],
        )
        embedder = Embedder()
        monkeypatch.setattr("components.graph.extraction.get_embedding_model", lambda name: embedder)
        extractor = LanguageExtractor()
        graph = extractor.extract(document, [chunk])
        found = {entity.key: entity.kind_evidence for entity in graph.entities}
        assert len(embedder.calls) == 1  # one batch for the document
        assert first not in embedder.calls[0] and second in embedder.calls[0]
        assert {"Orla Vennick", "Tavrin Kelso"} <= set(embedder.calls[0])
        assert np.allclose(found["orla vennick"].sentence_vector, stored)
        assert np.allclose(found["tavrin kelso"].sentence_vector, wide(1.0))
        assert np.allclose(found["orla vennick"].name_vector, wide(1.0))
        # Without an embedding model nothing is embedded and no vector is set.
        bare = LanguageExtractor(embedding_model=None).extract(document, [chunk])
        assert all(entity.kind_evidence.name_vector is None for entity in bare.entities)

    @pytest.mark.parametrize(("runtime", "embedded_again"), [("onnx", False), ("torch", True)])
    def test_names_are_embedded_once_across_documents_where_a_vector_is_the_same_in_any_batch(
        self, monkeypatch, runtime, embedded_again
    ):
        import numpy as np

        class Embedder:
            def __init__(self):
                self.runtime, self.texts = runtime, []

            def embed(self, texts, batch_size=32):
                self.texts += texts
                return np.array([wide(float(len(text)), 1.0) for text in texts], dtype=np.float32)

        embedder = Embedder()
        monkeypatch.setattr("components.graph.extraction.get_embedding_model", lambda name: embedder)
        extractor = LanguageExtractor()
        first = make_document("a", "Orla Vennick joined Quillon in 2019.", dt.date(2023, 5, 4), "t")
        second = make_document("b", "Orla Vennick left Quillon in 2021.", dt.date(2023, 5, 4), "t")
        graphs = [extractor.extract(document, chunks) for document, chunks in (first, second)]
        assert embedder.texts.count("Orla Vennick") == (2 if embedded_again else 1)
        vectors = [{entity.key: entity.kind_evidence.name_vector for entity in graph.entities} for graph in graphs]
        assert np.array_equal(vectors[0]["orla vennick"], vectors[1]["orla vennick"])
        assert [graph.extractor for graph in graphs] == [extractor.stamp] * 2

    def test_a_failing_embedding_model_keeps_the_graph(self, monkeypatch):
        from components.graph.extraction import WITHOUT_EMBEDDINGS

        class Broken:
            def embed(self, texts, batch_size=32):
                raise RuntimeError("out of memory")

        monkeypatch.setattr("components.graph.extraction.get_embedding_model", lambda name: Broken())
        document, chunks = make_document("doc", "Orla Vennick joined Quillon in 2019.", dt.date(2023, 5, 4), "t")
        extractor = LanguageExtractor()
        graph = extractor.extract(document, chunks)
        assert "orla vennick" in {entity.key for entity in graph.entities} and graph.facts
        assert all(entity.kind_evidence.name_vector is None for entity in graph.entities)
        assert graph.extractor == extractor.stamp + WITHOUT_EMBEDDINGS  # not current: extracted again later

    @pytest.mark.parametrize("declared", [True, False])
    def test_embeddings_of_another_width_than_the_kinds_read_are_said_once_and_stamped(self, monkeypatch, declared):
        import numpy as np

        from components.graph import extraction

        class Narrow:
            """A tiny model whose embeddings are 8 numbers wide (the shipped kinds read the default model's)."""

            def __init__(self):
                self.calls = 0
                if declared:
                    self.dimension = 8

            def embed(self, texts, batch_size=32):
                self.calls += 1
                return np.ones((len(texts), 8), dtype=np.float32)

        narrow = Narrow()
        warnings = []
        monkeypatch.setattr(extraction, "get_embedding_model", lambda name: narrow)
        monkeypatch.setattr(extraction.logger, "warning", lambda message, **fields: warnings.append((message, fields)))
        extractor = LanguageExtractor(embedding_model="quorvane-narrow-8")
        documents = [
            make_document(name, text, dt.date(2023, 5, 4), "t")
            for name, text in (("a", "Orla Vennick joined Quillon in 2019."), ("b", "Tavrin Kelso left Brask in 2021."))
        ]
        graphs = [extractor.extract(document, chunks) for document, chunks in documents]
        # The graphs are kept, their kinds read without the embeddings and stamped so the next ingest reads them again.
        assert all(graph.facts and graph.entities for graph in graphs)
        assert all(entity.kind_evidence.name_vector is None for graph in graphs for entity in graph.entities)
        assert [graph.extractor for graph in graphs] == [extractor.stamp + extraction.WITHOUT_EMBEDDINGS] * 2
        # Said once for the extractor, naming the model and both widths; a declared width embeds nothing.
        ((message, fields),) = warnings
        assert "wide" in message and fields["model"] == "quorvane-narrow-8" and fields["width"] == 8
        assert fields["read"] == str(WIDTH)
        assert narrow.calls == (0 if declared else 2)
        # Extracting again would read them the same way: until the model changes, such a graph counts as current.
        assert extractor.current_stamps() == {extractor.stamp, extractor.stamp + extraction.WITHOUT_EMBEDDINGS}
        assert len(warnings) == 1

    def test_a_missing_embedding_model_keeps_the_graph_and_is_said_once(self, tmp_path, monkeypatch):
        from components.graph import extraction

        warnings = []
        monkeypatch.setattr(extraction.logger, "warning", lambda message, **fields: warnings.append(message))
        document, chunks = make_document("doc", "Orla Vennick joined Quillon in 2019.", dt.date(2023, 5, 4), "t")
        extractor = LanguageExtractor(embedding_model=str(tmp_path / "gone"))
        extractor.warm_up()  # no stack trace: the kinds are read without the embeddings
        graphs = [extractor.extract(document, chunks) for _ in range(2)]
        assert all("orla vennick" in {entity.key for entity in graph.entities} for graph in graphs)
        assert all(graph.extractor.endswith(extraction.WITHOUT_EMBEDDINGS) for graph in graphs)
        assert len(warnings) == 1 and "cannot be loaded" in warnings[0]
        # Without a model by choice, the graph is current: nothing failed.
        assert LanguageExtractor(embedding_model=None).extract(document, chunks).extractor == extractor.stamp

    @pytest.mark.parametrize(
        ("text", "key", "kind"),
        [
            # The recogniser labels the full name an organisation; the name reads as a person's.
            (
                "The library was started in 2015 by Tomasz Reywick and Anneli Dorsett at a small startup.",
                "tomasz reywick",
                "person",
            ),
            # An unlabelled one-word name that its sentence reads as software.
            (
                "Developers install Quillstream with pip and run Zephyrion on a laptop since 2021.",
                "zephyrion",
                "product",
            ),
        ],
    )
    def test_the_shipped_model_reads_the_name_and_its_sentences(self, text, key, kind):
        document, chunks = make_document("doc", text, dt.date(2023, 5, 4), "t")
        read = {e.key: e for e in LanguageExtractor().extract(document, chunks).entities}
        unread = {e.key: e for e in LanguageExtractor(embedding_model=None).extract(document, chunks).entities}
        assert read[key].kind == kind
        assert unread[key].kind != kind  # the same evidence without the embeddings does not tell it


class TestListedWith:
    """The names an entity is listed with ("Dalby, Orsk and Vellmar": a list holds things of one kind), their mean
    embedding read by the name's reader (`kinds-8`)."""

    @staticmethod
    def _list_model(parts=("name", "list")):
        from components.graph.kinds import EmbeddingReader

        # The name reader says "place" along the first axis, "person" along the second; the kind model trusts only
        # what it reads in the names listed with an entity.
        readers = {"name": EmbeddingReader(["person", "place"], [[-4.0, 4.0], [4.0, -4.0]], [0.0, 0.0])}
        coef = [[0.0] * len(FEATURES) for _ in range(2)]
        coef[0][FEATURES.index("embedding_list:person")] = 6.0
        coef[1][FEATURES.index("embedding_list:place")] = 6.0
        return KindModel(["person", "place"], coef, [0.0, 0.0], 0.6, readers=readers, parts=parts)

    def test_the_extractor_keeps_the_names_a_mention_is_listed_with_and_their_mean_vector(self, monkeypatch):
        import numpy as np

        vectors = {"Dalby": wide(1.0, 0.0), "Orsk": wide(0.0, 1.0)}

        class Embedder:
            runtime, texts = "onnx", []

            def embed(self, texts, batch_size=32):
                self.texts += texts
                return np.array([vectors.get(text, wide(0.0, 0.0, 1.0)) for text in texts], dtype=np.float32)

        embedder = Embedder()
        monkeypatch.setattr("components.graph.extraction.get_embedding_model", lambda name: embedder)
        document, chunks = make_document(
            "doc", "In 2019 Orla Vennick opened plants in Dalby, Orsk and Vellmar.", dt.date(2023, 5, 4), "t"
        )
        extractor = LanguageExtractor()
        found = {e.key: e.kind_evidence for e in extractor.extract(document, chunks).entities}
        # Listed names are embedded with the document's names, once, and not again for a later document.
        extractor.extract(document, chunks)
        assert embedder.texts.count("Dalby") == 1
        assert set(found["vellmar"].listed) == {"Dalby", "Orsk"}
        assert np.allclose(found["vellmar"].list_vector, np.array(wide(1.0, 1.0)) / np.sqrt(2.0))
        # Listed with no name, there is no list vector (and no reading of it).
        assert found["orla vennick"].listed == [] and found["orla vennick"].list_vector is None

    def test_the_names_listed_with_an_entity_are_read_by_the_name_reader(self):
        model = self._list_model()
        place = KindEvidence(names=["Vellmar"], labels=Counter({"": 1}), list_vector=[1.0, 0.0])
        decision = model.decide(place)
        assert decision.kind == "place" and "names listed with it read place" in decision.evidence
        assert model.readings(place)["list"]["place"] > 0.99
        assert model.decide(KindEvidence(names=["Vellmar"], labels=Counter({"": 1}))).kind == "other"
        # A model fitted without the part does not read it.
        assert model.__class__(model.classes, model.coef, model.intercept, 0.6, readers=model.readers).readings(
            place
        ) == {"name": {}}

    def test_the_parts_read_are_written_with_the_model_and_a_part_without_its_reader_is_refused(self, tmp_path):
        import json

        from components.graph.kinds import to_json

        path = tmp_path / "kinds.json"
        path.write_text(json.dumps(to_json(self._list_model())), encoding="utf-8")
        loaded = KindModel.load(path)
        assert loaded.parts == ("name", "list")
        assert loaded.decide(KindEvidence(names=["Vellmar"], list_vector=[0.0, 1.0])).kind == "person"
        path.write_text(json.dumps({**to_json(self._list_model()), "readers": {}}), encoding="utf-8")
        with pytest.raises(ValueError, match="reads an embedding it has no reader of"):
            KindModel.load(path)


class TestNameHead:
    """The kind a name's last word names ("Quorvane Developers Conference" is named as an event; `kinds-9`)."""

    def test_the_last_word_of_a_longer_name_is_a_feature_of_its_kind(self):
        def head(names):
            values = features(KindEvidence(names=names))
            return {k for k in KINDS if f"head:{k}" in FEATURES and values[FEATURES.index(f"head:{k}")] == 1.0}

        assert head(["Quorvane Developers Conference"]) == {"event"}
        assert head(["Brask Valley University", "Brask Valley"]) == {"organization"}  # the fullest name's
        assert head(["Orla Vennick"]) == set()
        assert head(["Conference"]) == set()  # a lone word names nothing

    def test_the_shipped_model_reads_a_conference_the_recogniser_labels_an_organisation_as_less_of_one(self):
        model = default_kind_model()
        named = KindEvidence(names=["Quorvane Developers Conference"], labels=Counter({"organization": 1}))
        plain = KindEvidence(names=["Quorvane Developers Meetup"], labels=Counter({"organization": 1}))
        assert model.probabilities(named)["event"] > model.probabilities(plain)["event"]
        assert model.probabilities(named)["organization"] < model.probabilities(plain)["organization"]
