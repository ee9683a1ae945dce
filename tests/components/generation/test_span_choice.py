"""The fitted span chooser: the candidate spans a sentence offers, their features, the model file and its choice,
and the generator reading it. Invented sentences and names only."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from haystack import Document

from components.generation import span_choice
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from components.generation.question_analysis import analyze_question
from components.generation.span_choice import (
    FEATURES,
    FORM_CHECKS,
    PronounDoer,
    RatedCandidate,
    SpanModel,
    SpanModelError,
    candidate_eligibility,
    candidate_features,
    choose_span,
    fit,
    pronoun_antecedent,
    pronoun_doer,
    question_context,
    rate_span,
    rated_candidates,
    scored_candidates,
    span_candidates,
    switch_span,
)
from components.text.language import parse

SENTENCE = "Ada Quill founded Brightwater Mills in 1901 along the southern coastal region, with Tom Reed and Ann Bell."


def _texts(sentence: str, rule_span: str = "") -> dict[str, frozenset[str]]:
    return {candidate.text: candidate.sources for candidate in span_candidates(parse(sentence), rule_span)}


def test_candidates_cover_entities_phrases_heads_modifiers_numbers_objects_and_lists() -> None:
    texts = _texts(SENTENCE)
    assert "entity" in texts["Ada Quill"] and "entity" in texts["Brightwater Mills"]
    assert "number" in texts["1901"] and "object" in texts["1901"]
    assert "southern coastal region" in texts  # the noun phrase, without its article
    assert "region" in texts and "head" in texts["region"]
    assert "modifier" in texts["southern coastal"]  # what the sentence says of the noun
    assert "list" in texts["Tom Reed and Ann Bell"]  # the list whole ...
    assert "Ann Bell" in texts and "Tom Reed" in texts  # ... and each member
    assert not any(text.lower().startswith(("the ", "and ", "with ")) for text in texts)


def test_candidates_hold_a_do_questions_verb_phrase_and_a_counted_number() -> None:
    texts = _texts("A harbour pilot guides large ships through the narrow channel on a 60-cycle schedule.")
    assert "verb" in texts["guides large ships"]
    assert any(text.startswith("60") and "number" in sources for text, sources in texts.items())


def test_the_rules_span_is_one_candidate_found_in_the_sentence_or_kept_as_it_is() -> None:
    inside = _texts(SENTENCE, "Ada Quill")
    assert {"rule", "entity"} <= inside["Ada Quill"]
    assert list(inside).count("Ada Quill") == 1
    outside = [c for c in span_candidates(parse(SENTENCE), "Quill Mills Ltd") if "rule" in c.sources]
    assert len(outside) == 1 and outside[0].start is None and outside[0].text == "Quill Mills Ltd"


def test_a_run_of_entities_of_one_kind_is_one_entity_candidate_beside_each_of_them() -> None:
    # A coordination of people and an appositive chain of places answer as one name ("Who ...?", "Where ...?").
    people = _texts("The studio was opened in 1994 by Lena Marsh and Piet Vogel in Haarlem.")
    assert "entity" in people["Lena Marsh and Piet Vogel"]
    assert "entity" in people["Lena Marsh"] and "entity" in people["Piet Vogel"]
    places = _texts("The mill stands on a hill near Tarvik, Norway, at 300 metres.")
    assert "entity" in places["Tarvik, Norway"]
    assert "entity" in places["Tarvik"] and "entity" in places["Norway"]
    # Entities of different kinds, or parted by more than a comma or a conjunction, stay apart.
    apart = _texts("Lena Marsh moved to Haarlem in 1994.")
    assert not any(
        "entity" in sources and " " in text and "Haarlem" in text and "Marsh" in text for text, sources in apart.items()
    )


def _features(question: str, sentence: str, rule_span: str = "", rule_way: str = "") -> dict[str, dict[str, float]]:
    analysis = analyze_question(question)
    doc = parse(sentence)
    candidates = span_candidates(doc, rule_span)
    context = question_context(analysis.parts[0], analysis.question_terms)
    rows = candidate_features(doc, candidates, context, rule_span, rule_way)
    return {candidate.text: row for candidate, row in zip(candidates, rows, strict=True)}


def test_features_read_the_asked_kind_the_questions_verb_its_words_and_the_rules() -> None:
    rows = _features("Who founded Brightwater Mills?", SENTENCE, "Tom Reed", "entity")
    assert set(rows["Ada Quill"]) == set(FEATURES)
    assert rows["Ada Quill"]["verb_subject"] == 1.0 and rows["Tom Reed"]["verb_subject"] == 0.0
    assert rows["Ada Quill"]["label_first"] == 1.0 and rows["1901"]["label_other"] == 1.0
    assert rows["Brightwater Mills"]["asked_share"] == 1.0 and rows["Ada Quill"]["asked_share"] == 0.0
    assert rows["Tom Reed"]["rule_entity"] == 1.0 and rows["Ada Quill"]["rule_entity"] == 0.0
    assert rows["Ada Quill"]["distance"] < rows["Ann Bell"]["distance"]
    assert rows["Ada Quill"]["q_person"] == 1.0 and rows["Ada Quill"]["q_person_x_proper"] == 1.0
    assert all(math.isfinite(value) for row in rows.values() for value in row.values())


def test_the_question_words_near_a_candidate_and_the_preposition_before_the_wh_phrase() -> None:
    sentence = "Born in 1870 on a farm far to the north of the river, Ada Quill opened Brightwater Mills in 1901."
    rows = _features("In what year did Ada Quill open Brightwater Mills?", sentence)
    # Both years follow an "in"; only 1901 stands among the question's words.
    assert rows["1901"]["prep_match"] == 1.0 and rows["1870"]["prep_match"] == 1.0
    assert rows["farm"]["prep_match"] == 0.0 and rows["Ada Quill"]["prep_match"] == 0.0
    assert rows["1901"]["window_terms"] > rows["1870"]["window_terms"] == 0.0
    # The candidate's own words are not counted: "Ada Quill" sees only the mill's name and the verb beside it.
    assert 0.0 < rows["Ada Quill"]["window_terms"] < rows["1901"]["window_terms"]
    without = _features("What year did Ada Quill open Brightwater Mills?", sentence)
    assert without["1901"]["prep_match"] == 0.0


def _subject_rows() -> tuple[list[dict[str, float]], list[bool], list[int]]:
    """Invented candidate rows where the right span is the subject of the question's verb, with each row's part."""
    rows, labels, parts = [], [], []
    for part, (question, sentence, right) in enumerate(
        (
            ("Who founded Brightwater Mills?", SENTENCE, "Ada Quill"),
            ("Who painted the Lorn Chapel?", "Bram Ostry painted the Lorn Chapel for Ida Venn in 1880.", "Bram Ostry"),
            ("Who built the Pell Tower?", "In 1722 Cora Hask built the Pell Tower beside Joss Mere.", "Cora Hask"),
        )
    ):
        for text, row in _features(question, sentence).items():
            rows.append(row)
            labels.append(text == right)
            parts.append(part)
    return rows, labels, parts


def _subject_model() -> SpanModel:
    """A pointwise model fitted on `_subject_rows`."""
    rows, labels, _ = _subject_rows()
    return fit(rows, labels, meta={"command": "test"})


@pytest.mark.parametrize("objective", ["pairwise", "listwise"])
def test_a_ranking_objective_ranks_a_parts_candidates_and_gives_a_probability(objective: str) -> None:
    rows, labels, parts = _subject_rows()
    model = fit(rows, labels, meta={"command": "test"}, objective=objective, parts=parts)
    assert model.meta["objective"] == objective
    analysis = analyze_question("Who restored the Fenn Organ?")
    sentence = "After the fire, Lise Harrow restored the Fenn Organ with Otto Brisk."
    rated = rated_candidates(sentence, analysis.parts[0], analysis.question_terms, "Otto Brisk", "entity", model)
    choice = choose_span(sentence, rated)
    assert choice is not None and choice.text == "Lise Harrow"
    # A probability like the pointwise model's: its slope and intercept fitted on the candidates' labels.
    assert 0.0 < choice.probability < 1.0 and choice.margin > 0.0
    assert SpanModel.from_dict(json.loads(json.dumps(model.to_dict()))).coef == model.coef


def _two_models() -> SpanModel:
    """The pointwise `_subject_model` with a ranker beside it that prefers what the pointwise model rates last."""
    model = _subject_model()
    ranker = SpanModel(model.features, model.mean, model.scale, tuple(-w for w in model.coef), 0.0, {"objective": "x"})
    return SpanModel(model.features, model.mean, model.scale, model.coef, model.intercept, model.meta, rank=ranker)


def test_the_ranker_chooses_the_pick_and_the_pointwise_model_gives_its_probability(monkeypatch) -> None:
    # The rules' span "Otto Brisk" is not the doer the question asks: the mechanics are shown without that check.
    monkeypatch.setattr(span_choice, "FORM_CHECKS", tuple(c for c in FORM_CHECKS if c != "doer"))
    pointwise, both = _subject_model(), _two_models()
    analysis = analyze_question("Who restored the Fenn Organ?")
    sentence = "After the fire, Lise Harrow restored the Fenn Organ with Otto Brisk."
    args = (sentence, analysis.parts[0], analysis.question_terms, "Otto Brisk", "entity")
    plain, ranked = rated_candidates(*args, pointwise), rated_candidates(*args, both)
    assert all(item.rank is None for item in plain)
    # The order is the ranker's among the candidates the question's form lets answer (and among the others, after
    # them); each candidate keeps the pointwise model's probability.
    for eligible in (True, False):
        ranks = [item.rank for item in ranked if item.eligible == eligible]
        assert ranks == sorted(ranks, reverse=True)
    probability = {item.candidate.text: item.probability for item in plain}
    assert {item.candidate.text: item.probability for item in ranked} == probability
    picked = choose_span(sentence, ranked)
    assert picked is not None and picked.text == ranked[0].candidate.text != "Lise Harrow"
    others = max(p for text, p in probability.items() if text != picked.text)
    assert picked.probability == probability[picked.text] and picked.margin == pytest.approx(
        picked.probability - others
    )
    # Switching from the rules' span is decided by the ranking, too: with any lead, its pick; with none, the rules'.
    assert switch_span(sentence, "Otto Brisk", ranked, 0.0) == picked
    kept = switch_span(sentence, "Otto Brisk", ranked, 1.0)
    if picked.text != "Otto Brisk":
        assert kept.text == "Otto Brisk" and kept.probability == probability["Otto Brisk"]
    # The rules' span is rated by the pointwise probability, ranker or not.
    assert rate_span(ranked) == rate_span(plain)


def test_a_model_file_with_a_ranker_or_with_the_pointwise_model_alone_loads(tmp_path: Path) -> None:
    both = _two_models()
    data = json.loads(json.dumps(both.to_dict()))
    assert data["version"] == 2 and data["rank"]["objective"] == "x" and "version" not in data["rank"]
    loaded = SpanModel.from_dict(data)
    assert loaded.coef == both.coef and loaded.rank is not None and loaded.rank.coef == both.rank.coef
    assert loaded.rank.meta["objective"] == "x" and SpanModel.from_dict(loaded.to_dict()) == loaded
    # A file of the pointwise model alone (a version 1 file, as before the ranker, or a version 2 one) picks by it.
    for version in (1, 2):
        alone = SpanModel.from_dict({**_subject_model().to_dict(), "version": version})
        assert alone.rank is None and alone.coef == both.coef
        row = dict.fromkeys(FEATURES, 0.5)
        assert alone.rank_scores([row]) == alone.probabilities([row])
    for change, message in (
        ({"version": 1}, "rank is dict, not a ranker of a version 2 file"),
        ({"rank": [1, 2]}, "rank is list"),
        ({"rank": {**data["rank"], "coef": data["rank"]["coef"][:-1]}}, "ranker's features, mean, scale and coef"),
        (
            {"rank": {**data["rank"], "features": [*data["rank"]["features"][:-1], "favourite_word"]}},
            "ranker reads unknown features",
        ),
        ({"version": True}, "is version True, not 2"),
    ):
        with pytest.raises(SpanModelError, match=message):
            SpanModel.from_dict({**data, **change})


def test_a_ranking_objective_needs_each_rows_part_and_a_known_name() -> None:
    rows, labels, parts = _subject_rows()
    with pytest.raises(ValueError, match="needs the part of every row"):
        fit(rows, labels, objective="listwise")
    with pytest.raises(ValueError, match="one of pointwise, pairwise, listwise"):
        fit(rows, labels, objective="ordinal", parts=parts)
    with pytest.raises(ValueError, match="both right and wrong"):
        fit(rows, labels, objective="pairwise", parts=list(range(len(rows))))


def test_a_fitted_model_chooses_and_reports_its_probability_and_margin() -> None:
    model = _subject_model()
    analysis = analyze_question("Who restored the Fenn Organ?")
    sentence = "After the fire, Lise Harrow restored the Fenn Organ with Otto Brisk."
    rated = rated_candidates(sentence, analysis.parts[0], analysis.question_terms, "Otto Brisk", "entity", model)
    choice = choose_span(sentence, rated)
    assert choice is not None and choice.text == "Lise Harrow"
    assert 0.0 < choice.probability <= 1.0 and 0.0 <= choice.margin <= choice.probability
    assert choice.label == "PERSON"


def test_the_models_pick_replaces_the_rules_span_only_when_it_leads_by_the_fitted_margin(monkeypatch) -> None:
    # The rules' span "Otto Brisk" is not the doer the question asks: the margin is shown without that check.
    monkeypatch.setattr(span_choice, "FORM_CHECKS", tuple(c for c in FORM_CHECKS if c != "doer"))
    model = _subject_model()
    analysis = analyze_question("Who restored the Fenn Organ?")
    sentence = "After the fire, Lise Harrow restored the Fenn Organ with Otto Brisk."

    def switched(margin: float, rule_span: str = "Otto Brisk") -> object:
        with_margin = SpanModel(
            *(getattr(model, key) for key in ("features", "mean", "scale", "coef", "intercept")),
            {**model.meta, "switch_margin": margin},
        )
        rated = rated_candidates(sentence, analysis.parts[0], analysis.question_terms, rule_span, "entity", with_margin)
        return switch_span(sentence, rule_span, rated, with_margin.switch_margin)

    rated = rated_candidates(sentence, analysis.parts[0], analysis.question_terms, "Otto Brisk", "entity", model)
    chosen = choose_span(sentence, rated)
    own, lead = rate_span(rated)
    assert chosen is not None and chosen.text == "Lise Harrow" and chosen.probability - own > 0.05
    # A lead beyond the margin: the pick, as "choose" gives it.
    assert switched(0.0) == chosen
    # A lead short of it: the rules' span stays, rated as "rate" rates it.
    kept = switched(chosen.probability - own + 0.01)
    assert kept.text == "Otto Brisk" and kept.probability == pytest.approx(own) and kept.margin == pytest.approx(lead)
    # Without a span of the rules, the pick.
    assert switched(1.0, rule_span="").text == "Lise Harrow"
    assert SpanModel.from_dict({k: v for k, v in model.to_dict().items() if k != "switch_margin"}).switch_margin == 0.0


def test_the_amount_and_person_crossings_read_the_questions_unit_and_a_list() -> None:
    rows = _features(
        "How many barrels did the Pell cooper fill in 1802?", "The Pell cooper filled 640 barrels in 1802."
    )
    assert rows["640 barrels"]["q_amount_x_asked"] == 1.0 and rows["640"]["q_amount_x_asked"] == 0.0
    people = _features("Who founded Brightwater Mills?", SENTENCE)
    assert people["Tom Reed and Ann Bell"]["q_person_x_list"] == 1.0 and people["Tom Reed"]["q_person_x_list"] == 0.0


def test_all_rows_at_once_score_exactly_as_one_row_at_a_time() -> None:
    model = SpanModel.load()
    rows = list(_features("Who founded Brightwater Mills?", SENTENCE, "Tom Reed", "entity").values())
    partial = {name: 1.0 for name in FEATURES[:5]}  # the features it lacks read as 0
    assert model.probabilities([*rows, partial]) == [model.probability(row) for row in [*rows, partial]]
    assert model.probabilities([]) == []


def test_a_sentence_read_once_gives_what_its_parse_gives_for_every_question() -> None:
    model = SpanModel.load()
    for question, rule_span, rule_way in (
        ("Who founded Brightwater Mills?", "Tom Reed", "entity"),
        ("When was Brightwater Mills founded?", "1901", "entity"),
        ("Which region did Ada Quill settle?", "Quill Mills Ltd", "phrase"),  # not in the sentence
        ("Who worked with Ada Quill?", "", ""),
    ):
        analysis = analyze_question(question)
        part, question_terms = analysis.parts[0], analysis.question_terms
        doc = parse(SENTENCE)
        candidates = span_candidates(doc, rule_span)
        context = question_context(part, question_terms)
        rows = candidate_features(doc, candidates, context, rule_span, rule_way)
        eligible = candidate_eligibility(doc, candidates, context)
        ranker = model.rank
        expected = sorted(
            (
                RatedCandidate(model.probability(row), candidate, ranker and ranker.probability(row), ok)
                for candidate, row, ok in zip(candidates, rows, eligible, strict=True)
            ),
            key=lambda item: (not item.eligible, -item.order, len(item.candidate.text)),
        )
        for _ in range(2):  # read afresh, then from the sentence's kept reading
            assert rated_candidates(SENTENCE, part, question_terms, rule_span, rule_way, model) == expected


def test_the_model_file_round_trips_and_a_bad_one_is_one_sentence(tmp_path: Path) -> None:
    model = _subject_model()
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(model.to_dict()), encoding="utf-8")
    loaded = SpanModel.load(path)
    row = dict.fromkeys(FEATURES, 0.5)
    assert loaded.probability(row) == pytest.approx(model.probability(row))
    for change, message in (
        ({"version": 99}, "version 99"),
        ({"features": [*model.features[:-1], "favourite_word"]}, "unknown features: favourite_word"),
        ({"intercept": float("inf")}, "not finite"),
        ({"scale": [0.0] * len(model.features)}, "do not match"),
        ({"switch_margin": "wide"}, "switch_margin is 'wide', not a number from 0 to 1"),
        ({"switch_margin": float("nan")}, "switch_margin is nan"),
    ):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({**model.to_dict(), **change}), encoding="utf-8")
        with pytest.raises(SpanModelError, match=message):
            SpanModel.from_dict(json.loads(bad.read_text(encoding="utf-8")))
    with pytest.raises(SpanModelError, match="no span model at"):
        SpanModel.load(tmp_path / "missing.json")


def test_the_packaged_model_loads_and_reads_known_features() -> None:
    model = SpanModel.load()
    assert set(model.features) <= set(FEATURES) and model.meta.get("command", "").startswith("research fit spans")


def test_the_generator_rates_the_rules_span_or_takes_the_models_and_reports_the_probability(tmp_path: Path) -> None:
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(_subject_model().to_dict()), encoding="utf-8")
    sentence = "After the fire, Lise Harrow restored the Fenn Organ with Otto Brisk and the parish choir."
    documents = [
        Document(
            content="The Fenn Organ was rebuilt twice. " + sentence, score=0.9, meta={"source_title": "Fenn Organ"}
        )
    ]
    query = "Who restored the Fenn Organ?"
    part = analyze_question(query).parts[0]
    terms = analyze_question(query).question_terms

    def run(choice: str) -> dict:
        generator = ExtractiveAnswerGenerator(span_model=str(path), span_choice=choice, confidence_threshold=0.0)
        return generator.run(query, documents)["parts"][0]

    off, rated, chosen, switched = run("off"), run("rate"), run("choose"), run("switch")
    assert "span_probability" not in off["features"] and "span_margin" not in off["features"]
    # Rating keeps the rules' span; its probability and lead are the model's view of it.
    assert rated["short_answer"] == off["short_answer"]
    probability, margin = rate_span(
        rated_candidates(sentence, part, terms, off["short_answer"], "entity", _subject_model())
    )
    assert rated["features"]["span_probability"] == pytest.approx(probability)
    assert rated["features"]["span_margin"] == pytest.approx(margin)
    # Choosing takes the candidate the model rates highest.
    assert chosen["short_answer"] == "Lise Harrow" and chosen["features"]["span_probability"] > 0.5
    # Switching (the default; this file has no margin: any lead) takes it too.
    assert switched["short_answer"] == "Lise Harrow"
    assert ExtractiveAnswerGenerator(span_model=str(path)).span_choice == "switch"
    with pytest.raises(ValueError, match="span_choice must be one of"):
        ExtractiveAnswerGenerator(span_choice="always")
    assert ExtractiveAnswerGenerator(span_model=str(path)).to_dict()["init_parameters"]["span_model"] == str(path)


class TestPronounDoer:
    """A question that asks who did something, answered by a sentence where a pronoun did it: the name the pronoun
    stands for, never a name that only modifies another noun of the sentence."""

    ACQUIRED = "In June 2020 it acquired Quillby, a start-up that made tools for drawing maps, founded by Teodor Brask."
    BEFORE = "In March 2019 Vellmark Labs raised a 12 million dollar Series A led by Corvane Capital."

    def test_the_asked_doer_is_a_pronoun_and_the_founder_only_modifies_a_noun(self):
        for question in ("Who purchased Quillby?", "Which company acquired Quillby?"):
            part = analyze_question(question).parts[0]
            doer = pronoun_doer(self.ACQUIRED, part.text, frozenset(part.terms), "Teodor Brask")
            # A person inside a phrase modifying another noun: neither the doer nor what "it" stands for.
            assert doer == PronounDoer("it", span_in_modifier=True, span_could_be_it=False, span_disagrees=True)

    def test_no_pronoun_doer_when_a_name_does_it_or_the_question_asks_another_role(self):
        part = analyze_question("Who founded Quillby?").parts[0]  # the founder does the asked verb himself
        assert pronoun_doer(self.ACQUIRED, part.text, frozenset(part.terms), "Teodor Brask") is None
        part = analyze_question("What did Vellmark Labs acquire?").parts[0]  # the object is asked, not the doer
        assert pronoun_doer(self.ACQUIRED, part.text, frozenset(part.terms), "Quillby") is None

    def test_a_name_before_the_pronoun_may_be_what_it_stands_for(self):
        sentence = "After Orla Venn left Lisbon, she founded the Harrow Studio."
        part = analyze_question("Who founded the Harrow Studio?").parts[0]
        doer = pronoun_doer(sentence, part.text, frozenset(part.terms), "Orla Venn")
        assert doer is not None and doer.span_could_be_it and not doer.span_in_modifier

    def test_the_antecedent_is_the_subject_before_when_it_agrees(self):
        labels, asked = ("ORG", "PERSON"), frozenset({"quillbi"})
        assert pronoun_antecedent(self.BEFORE, "it", labels, asked) == ("Vellmark Labs", "ORG")
        assert pronoun_antecedent(self.BEFORE, "she", labels, asked) == ("", "")  # an organisation is not a "she"
        assert pronoun_antecedent(self.BEFORE, "it", ("DATE",), asked) == ("", "")  # not of the asked kind
        assert pronoun_antecedent("The market grew quickly.", "it", labels, asked) == ("", "")
        person = "Orla Venn studied in Lisbon under Marco Tell."
        assert pronoun_antecedent(person, "she", ("PERSON",), frozenset()) == ("Orla Venn", "PERSON")


def test_a_pronoun_doer_is_answered_by_its_antecedent_never_by_a_modifying_name():
    generator = ExtractiveAnswerGenerator()
    acquired = TestPronounDoer.ACQUIRED
    with_subject = Document(content=f"{TestPronounDoer.BEFORE} {acquired}", meta={"source_title": "Vellmark Labs"})
    without = Document(content=f"The market for mapping software grew quickly after 2015. {acquired}", meta={})
    for question in ("Who purchased Quillby?", "Which company acquired Quillby?"):
        part = generator.run(query=question, documents=[with_subject])["parts"][0]
        assert part["short_answer"] == "Vellmark Labs"
        out = generator.run(query=question, documents=[without])
        # No name stands for "it": the founder of the bought start-up is not offered; the sentence is cited.
        assert out["short_answer"] == "" and out["parts"][0]["short_answer"] == ""
        assert "it acquired Quillby" in out["replies"][0]


class TestPronounAgreement:
    """A name the recogniser labels an organisation or a place is never what "he" or "she" stands for (nor a person
    what "it" does): in "X taught at Harrow College, where she founded ..." the college founded nothing."""

    TAUGHT = "Orla Venn taught at Harrow College in Dunmere, where she founded the Quillby Press."

    def test_a_span_that_cannot_be_the_pronoun_gives_way_to_the_subject_of_its_sentence(self):
        part = analyze_question("Who founded the Quillby Press?").parts[0]
        asked = frozenset(part.terms)
        doer = pronoun_doer(self.TAUGHT, part.text, asked, "Harrow College")
        assert doer is not None and doer.span_disagrees and not doer.span_could_be_it
        assert pronoun_antecedent("", doer.pronoun, part.labels, asked, self.TAUGHT, doer.at) == ("Orla Venn", "PERSON")
        # Without its own sentence, only the sentence before is read, as before.
        assert pronoun_antecedent("", doer.pronoun, part.labels, asked) == ("", "")
        kept = pronoun_doer(self.TAUGHT, part.text, asked, "Orla Venn")
        assert kept is not None and kept.span_could_be_it and not kept.span_disagrees

    def test_the_generator_answers_with_the_subject_or_with_the_sentence_alone(self):
        generator = ExtractiveAnswerGenerator(confidence_threshold=0.0)
        question = "Who founded the Quillby Press?"
        taught = Document(content=f"The Quillby Press printed maps of the coast. {self.TAUGHT}", meta={})
        assert generator.run(query=question, documents=[taught])["parts"][0]["short_answer"] == "Orla Venn"
        stood = "The coast had no printer. Harrow College stood in Dunmere, where she founded the Quillby Press."
        out = generator.run(query=question, documents=[Document(content=stood, meta={})])
        assert out["parts"][0]["short_answer"] != "Harrow College"


def _preferring(feature: str, weight: float) -> SpanModel:
    """A model that ranks a sentence's candidates by one feature alone, so the question's form must stop it."""
    return SpanModel((feature,), (0.0,), (1.0,), (weight,), 0.0, {"command": "test"})


# Per check: a question, its sentence, the rules' span, a model's one feature and weight that favour a span breaking
# the question's form, and what a span keeping it is.
FORM_CASES = {
    # "How many N": a number that counts N, not a later word or the number that counts another noun.
    "count": (
        "How many bridges did Orvel Tarn design?",
        "Orvel Tarn designed 14 bridges for the Pell valley and later built 3 towers.",
        "14",
        ("position", 4.0),
        lambda text: "14" in text.split(),
    ),
    # "What kind of N": the phrase headed by N with its own words, not a word of it or another noun.
    "kind": (
        "What kind of mill is Harrow Works?",
        "Harrow Works, a small paper mill, sold its wares to traders from Lund.",
        "a small paper mill",
        ("words", -4.0),
        lambda text: text.endswith("paper mill"),
    ),
    # A thing asked ("What is ...?"): no bare date, while the sentence names a thing.
    "time": (
        "What is beside the Tarn Quay?",
        "The guild built a storehouse beside the Tarn Quay in 1874.",
        "a storehouse",
        ("value", 4.0),
        lambda text: text != "1874",
    ),
    # The doer asked ("Who won ...?"): the subject whose infinitive "to win" is the asked verb, not the beaten side.
    "doer": (
        "Who won the Marlow Cup?",
        "The Dane Owls beat the Fen Hares 3-1 to win the Marlow Cup.",
        "The Dane Owls",
        ("window_terms", 4.0),
        lambda text: text.endswith("Owls"),
    ),
    # A role asked by a copular "who": the name the sentence equates with the role ("Quill as chief executive"), not
    # the founders' list named first.
    "role": (
        "Who is the chief executive of Corvane Maps?",
        "In 1998 Tom Berg and Ada Quill founded Corvane Maps in Lund, with Quill as chief executive.",
        "Tom Berg and Ada Quill",
        ("from_list", 4.0),
        lambda text: text == "Quill",
    ),
    # The same role asked by the "as" of the wh-word's verb ("Who heads ... as chief executive?").
    "role_as": (
        "Who heads Corvane Maps as chief executive?",
        "In 1998 Tom Berg and Ada Quill founded Corvane Maps in Lund, with Quill as chief executive.",
        "Tom Berg and Ada Quill",
        ("from_list", 4.0),
        lambda text: text == "Quill",
    ),
}


@pytest.mark.parametrize("check", sorted(FORM_CASES))
def test_a_candidate_that_breaks_the_questions_form_is_not_picked(check: str, monkeypatch) -> None:
    question, sentence, rule_span, (feature, weight), keeps = FORM_CASES[check]
    check = check.removesuffix("_as")  # a second case of the same check
    analysis = analyze_question(question)
    part, asked = analysis.parts[0], analysis.question_terms
    model = _preferring(feature, weight)

    def picks(checks: tuple[str, ...]) -> list[str]:
        monkeypatch.setattr(span_choice, "FORM_CHECKS", checks)
        rated = rated_candidates(sentence, part, asked, rule_span, "phrase", model)
        return [switch_span(sentence, rule_span, rated, 0.0).text, choose_span(sentence, rated).text]

    # Without the check the model's favourite breaks the question's form; with it (alone or with the others), the
    # pick keeps it.
    assert not any(keeps(text) for text in picks(()))
    assert all(keeps(text) for text in picks((check,)))
    assert all(keeps(text) for text in picks(FORM_CHECKS))


def test_a_form_check_leaves_the_candidates_when_none_keeps_it_or_the_question_asks_a_value() -> None:
    def eligible(question: str, sentence: str) -> dict[str, bool]:
        analysis = analyze_question(question)
        candidates, _, flags = scored_candidates(sentence, analysis.parts[0], analysis.question_terms, "", "")
        return {candidate.text: flag for candidate, flag in zip(candidates, flags, strict=True)}

    # No number in the sentence counts bridges: every candidate stays.
    assert all(eligible("How many bridges did Orvel Tarn design?", "Orvel Tarn built 3 towers in Pell.").values())
    # A time asked, even after another wh-word: a date stays eligible.
    assert eligible("When did the guild build the storehouse?", "The guild built the storehouse in 1874.")["1874"]
    assert eligible("The quay, which was built how many years ago?", "The quay was built 60 years ago.")["60 years"]
    # A date beside a thing asked is not; but a noun the question names may be named by its date ("the 1874 fair").
    assert not eligible("What did the guild build?", "The guild built a storehouse in 1874.")["1874"]
    assert eligible("Which fair did the guild open?", "The guild opened the 1874 fair in Pell.")["1874"]
    # A kind is said before its noun: not by the noun with a phrase after it.
    kinds = eligible("What kind of mill is Harrow Works?", "Harrow Works is an example of a paper mill in Pell.")
    assert kinds["paper mill"] and not kinds["paper mill in Pell"] and not kinds["Pell"]
