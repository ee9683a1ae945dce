"""The event-confidence fitting script: labels from the timelines matcher, the fit, and the threshold chosen
precision first."""

from __future__ import annotations

import datetime as dt
import json
import random

import pytest

from components.graph.dates import FuzzyDate
from components.graph.event_confidence import BASE_FEATURES, FAMILIES, EventConfidenceModel
from components.graph.store import GraphUnavailable
from pipelines.evaluation.event_confidence import (
    DEFAULT_FAMILIES,
    CorpusTimelines,
    TimelineFact,
    apply_model,
    choose_threshold,
    features_of,
    fit_model,
    fit_on_tune,
    main,
    out_of_fold,
    print_losses,
    recall_losses,
    select_families,
)
from pipelines.evaluation.timelines import EntityScore, GoldTimeline, TimelineEntry

GOLD = {
    "entity": "Orlund Rail",
    "events": [
        {"date": "2015", "mentions": [{"doc_id": "d1", "sentence_id": 1, "sentence": "Orlund Rail opened in 2015."}]},
        {"date": "XXXX-XX-XX", "mentions": [{"doc_id": "d1", "sentence_id": 3, "sentence": "Orlund Rail grew."}]},
    ],
}


def _entry(sentence: str, year: int | None = None) -> TimelineEntry:
    return TimelineEntry("d1", sentence, FuzzyDate(dt.date(year, 1, 1), "year") if year else None)


def test_the_matcher_labels_each_entry():
    entries = [
        _entry("Orlund Rail opened in 2015.", 2015),
        _entry("Orlund Rail grew.", 2020),
        _entry("Orlund Rail has a blue logo.", 2020),
    ]
    # Held events (the second has no known gold date, so no date verdict), and an entry holding none.
    assert GoldTimeline(GOLD, {}).judge(entries) == [(True, True), (True, None), (False, None)]
    assert GoldTimeline(GOLD, {}).judge([_entry("Orlund Rail opened in 2015.", 2016)]) == [(True, False)]


def _corpus(confidences_and_labels: list[tuple[float, bool]]) -> CorpusTimelines:
    """A corpus of one entity whose timeline holds a fact per (confidence, label): a labelled fact is a gold
    event."""
    events, facts = [], []
    for number, (confidence, label) in enumerate(confidences_and_labels):
        sentence = f"Orlund Rail event number {number} happened."
        if label:
            events.append({"date": "2015", "mentions": [{"doc_id": "d1", "sentence_id": number, "sentence": sentence}]})
        facts.append(TimelineFact(_entry(sentence, 2015), {}, label, "d1", confidence))
    gold = {"entity": "Orlund Rail", "events": events}
    return CorpusTimelines("invented", [gold], {"Orlund Rail": facts})


def test_the_threshold_puts_precision_first_within_the_recall_floor():
    corpus = _corpus([(0.9, True), (0.8, True), (0.7, False), (0.6, True), (0.5, False), (0.4, False), (0.3, True)])
    # One document: every resample is the corpus itself. Above 0.5 (to 0.6): recall 3/4, precision 3/4 meet both
    # targets, the higher threshold of them chosen; above 0.6 precision is 1.0 but recall 1/2 falls below the floor.
    assert choose_threshold(corpus, 0.70, 0.55) == pytest.approx(0.60)
    # No threshold reaches precision 0.95 with recall >= 0.55: the most precise one that keeps the recall floor.
    chosen = choose_threshold(corpus, 0.95, 0.55)
    assert (corpus.score(chosen).recall, corpus.score(chosen).precision) == (0.75, 0.75)
    # A floor of 0.9 keeps every fact.
    assert corpus.score(choose_threshold(corpus, 0.70, 0.9)).entries == 7


def test_margins_are_told_by_resampling_the_documents():
    # Two documents: every fact of "d1" is a gold event, every fact of "d2" is not; "d3" holds nothing.
    gold = {"entity": "Orlund Rail", "events": []}
    facts = []
    for number in range(4):
        document = "d1" if number < 2 else "d2"
        sentence = f"Orlund Rail event number {number} happened."
        if document == "d1":
            gold["events"].append(
                {"date": "2015", "mentions": [{"doc_id": document, "sentence_id": number, "sentence": sentence}]}
            )
        facts.append(TimelineFact(TimelineEntry(document, sentence, None), {}, document == "d1", document, 0.9))
    corpus = CorpusTimelines("invented", [gold], {"Orlund Rail": facts}, documents=["d1", "d2", "d3"])
    scores = corpus.document_scores(0.5)
    assert list(scores) == ["d1", "d2", "d3"]
    assert (scores["d1"].recalled, scores["d1"].correct_entries, scores["d2"].entries, scores["d3"].entries) == (
        2,
        2,
        2,
        0,
    )
    whole, summed = corpus.score(0.5), EntityScore("sum")
    for score in scores.values():
        summed.add(score)
    assert (whole.recall, whole.precision) == (1.0, 0.5) and vars(summed) == {**vars(whole), "entity": "sum"}
    # A resample of three documents meets recall 0.55 and precision 0.70 only when it draws no "d2" and at least
    # one "d1": (2/3)^3 - (1/3)^3 of them.
    share = corpus.missed_share(0.5, 0.70, 0.55, resamples=4000)
    assert share == pytest.approx(1 - ((2 / 3) ** 3 - (1 / 3) ** 3), abs=0.03)
    assert corpus.missed_share(0.5, 0.70, 0.55, resamples=4000) == share  # a fixed seed
    assert corpus.missed_share(0.95, 0.70, 0.55) == 1.0  # nothing kept: recall 0


def test_a_corpus_with_nothing_to_resample_misses_its_targets_as_its_score_does():
    # No documents, no gold, no facts: recall and precision are 0, so the targets are missed, not met every time.
    corpus = CorpusTimelines("invented-empty", [], {}, documents=[])
    assert corpus.score(0.5).recall == 0.0
    assert corpus.missed_share(0.5, 0.70, 0.55) == 1.0


def test_recall_losses_tell_kept_below_the_threshold_never_proposed_and_wrong_dates(capsys):
    sentences = {
        1: ("2015", "Orlund Rail opened in 2015."),
        2: ("2016", "Orlund Rail won a prize."),
        3: ("2017", "Orlund Rail moved north."),
        4: ("2018", "Its trains were repainted."),
    }
    gold = {
        "entity": "Orlund Rail",
        "events": [
            {"date": date, "mentions": [{"doc_id": "d1", "sentence_id": number, "sentence": sentence}]}
            for number, (date, sentence) in sentences.items()
        ],
    }
    facts = [
        TimelineFact(_entry("Orlund Rail opened in 2015.", 2015), {}, True, "d1", 0.9),  # kept, date right
        TimelineFact(_entry("Orlund Rail won a prize.", 2020), {}, True, "d1", 0.8),  # kept, date wrong
        TimelineFact(_entry("Orlund Rail moved north.", 2017), {}, True, "d1", 0.3),  # below the threshold
        TimelineFact(_entry("Orlund Rail moved north.", 2017), {}, True, "d1", 0.4),  # the surer of the two
        TimelineFact(_entry("Orlund Rail has a blue logo.", 2020), {}, False, "d1", 0.9),  # no gold event
    ]
    corpus = CorpusTimelines("invented", [gold], {"Orlund Rail": facts})
    losses = recall_losses(corpus, 0.5)
    assert (losses.mentions, losses.kept, losses.below, losses.never) == (4, 2, 1, 1)
    assert (losses.dated, losses.date_wrong) == (2, 1)
    # The counts are the timeline scores' (computed by the scorer, not again): kept / mentions is the recall.
    assert losses.score == corpus.score(0.5)
    assert losses.kept / losses.mentions == corpus.score(0.5).recall
    by_loss = {mention.loss: mention for mention in losses.lost}
    assert by_loss["below"].sentence_id == 3 and by_loss["below"].confidence == 0.4
    assert by_loss["never"].sentence == "Its trains were repainted."
    assert (by_loss["date"].gold_date, by_loss["date"].fact_date) == ("2016", "2020")
    # At 0 nothing is below the threshold; the sentence no fact holds is still never proposed.
    assert (recall_losses(corpus, 0.0).below, recall_losses(corpus, 0.0).never) == (0, 1)
    # The listing names the listed corpus's lost mentions; the other corpus is only counted.
    print_losses([("tune", losses), ("check", recall_losses(corpus, 0.0))], losses)
    printed = capsys.readouterr().out
    assert "Its trains were repainted." in printed and "confidence 0.40" in printed and "gold 2016" in printed
    assert printed.splitlines()[3].split() == ["check", "4", "3", "0", "1", "3", "1"]


def test_a_mention_never_proposed_is_told_by_its_cause(capsys):
    sentences = {1: "Orlund Rail opened in 2015.", 2: "Its trains were repainted.", 3: "Orlund Rail and Vask merged."}
    gold = {
        "entity": "Orlund Rail",
        "events": [
            {"date": "2015", "mentions": [{"doc_id": "d1", "sentence_id": number, "sentence": sentence}]}
            for number, sentence in sentences.items()
        ],
    }
    # No fact of the entity holds any of them; the graph holds facts of other entities for the last two.
    others = [_entry("Its trains were repainted.", 2015), _entry("Orlund Rail and Vask merged.", 2015)]
    corpus = CorpusTimelines("invented", [gold], {"Orlund Rail": []}, facts_by_document={"d1": others})
    losses = recall_losses(corpus, 0.5)
    causes = {mention.sentence_id: mention.cause for mention in losses.lost}
    assert causes == {1: "no fact", 2: "named otherwise", 3: "name not linked"}
    assert losses.never_causes == {"no fact": 1, "named otherwise": 1, "name not linked": 1}
    print_losses([("tune", losses)], losses)
    printed = capsys.readouterr().out
    assert "tune never proposed: 1 no fact holds the sentence;" in printed
    # A corpus that did not record its facts gives no cause.
    unrecorded = CorpusTimelines("invented", [gold], {"Orlund Rail": []})
    assert {mention.cause for mention in recall_losses(unrecorded, 0.5).lost} == {""}


def test_losses_name_the_features_that_push_a_mention_below_the_threshold(capsys):
    sentence = "Orlund Rail will move north."
    gold = {
        "entity": "Orlund Rail",
        "events": [{"date": "2017", "mentions": [{"doc_id": "d1", "sentence_id": 1, "sentence": sentence}]}],
    }
    names = ["tense:future", "date:day", "modal"]
    model = EventConfidenceModel(names, [-2.0, 1.0, -0.5], 0.0, [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], 0.5)
    # The fact's confidence is its surest participant's: the one whose features the listing reads.
    surest = {"tense:future": 1.0, "date:day": 1.0}
    other = {"tense:future": 1.0, "modal": 1.0}
    fact = TimelineFact(_entry(sentence, 2017), surest, True, "d1", participants={"a": surest, "b": other})
    corpus = CorpusTimelines("invented", [gold], {"Orlund Rail": [fact]})
    apply_model(model, corpus)
    losses = recall_losses(corpus, 0.5, model)
    (lost,) = losses.lost
    assert lost.loss == "below" and lost.lowered_by == [("tense:future", 1.0, -2.0)]
    assert recall_losses(corpus, 0.5).lost[0].lowered_by == []  # without the model, no reasons
    print_losses([("tune", losses)], losses)
    printed = capsys.readouterr().out
    assert "lowered by tense:future=1 -2.00" in printed
    assert "features lowering them most (mentions): tense:future 1" in printed


def _past_tense_samples(seed: int, facts) -> list[TimelineFact]:
    """200 invented facts, every other one in the past tense and then mostly right (85% against 25%); `facts(past,
    rng)` gives a fact's features and participants."""
    rng = random.Random(seed)
    samples = []
    for number in range(200):
        past = number % 2 == 0
        label = rng.random() < (0.85 if past else 0.25)
        features, participants = facts(past, rng)
        fact = TimelineFact(_entry(f"s{number}"), features, label, f"d{number % 10}", participants=participants)
        samples.append(fact)
    return samples


def test_the_fit_learns_an_informative_feature_and_scores_like_the_extractor():
    def facts(past: bool, rng: random.Random) -> tuple[dict, dict]:
        features = {"tense:past": float(past), "log_sentence_tokens": rng.random() * 3}
        return features, {"e": features}

    samples = _past_tense_samples(7, facts)
    model, c, auc = fit_model(samples)
    assert model.features == features_of(DEFAULT_FAMILIES) and auc > 0.65
    assert model.coef[model.features.index("tense:past")] > 0
    corpus = CorpusTimelines("invented", [], {"x": samples})
    apply_model(model, corpus)
    past = [s.confidence for s in samples if s.features["tense:past"]]
    present = [s.confidence for s in samples if not s.features["tense:past"]]
    assert min(past) > max(present)


def test_entity_scoring_reads_the_timeline_entity_s_own_part_not_its_surest_participant():
    def facts(past: bool, rng: random.Random) -> tuple[dict, dict]:
        own = {"tense:past": float(past)}
        # Every fact also has a participant whose own event is past: the fact's surest participant.
        return own, {"own": own, "other": {"tense:past": 1.0}}

    samples = _past_tense_samples(5, facts)
    model, _, _ = fit_model(samples)
    corpus = CorpusTimelines("invented", [], {"x": samples})
    apply_model(model, corpus)
    assert len({s.confidence for s in samples}) == 1  # the other participant decides every fact alike
    apply_model(model, corpus, scoring="entity")
    past = [s.confidence for s in samples if s.features["tense:past"]]
    present = [s.confidence for s in samples if not s.features["tense:past"]]
    assert min(past) > max(present)
    out_of_fold(corpus, features_of(DEFAULT_FAMILIES), 1.0, scoring="entity")
    assert len({s.confidence for s in samples}) > 1


def test_families_name_the_features_a_model_uses():
    assert sorted(features_of(["base"])) == sorted(BASE_FEATURES)
    with_line = features_of(["base", "line"])
    assert set(with_line) == set(BASE_FEATURES) | set(FAMILIES["line"])
    with pytest.raises(ValueError, match="unknown feature families shoe"):
        features_of(["base", "shoe"])


def _document_corpus() -> CorpusTimelines:
    """Ten invented documents, each of whose facts are all events or all not: a feature naming the document tells
    the label in sample, and nothing of a document not fitted on."""
    rng = random.Random(3)
    facts = []
    for number in range(120):
        document = number % 10
        label = document % 2 == 0
        features = {"kind_confidence": float(document) / 10, "log_sentence_tokens": rng.random()}
        facts.append(TimelineFact(_entry(f"s{number}"), features, label, f"d{document}", participants={"e": features}))
    return CorpusTimelines("invented", [], {"x": facts})


def test_out_of_fold_confidences_come_from_models_not_fitted_on_the_fact_s_document():
    corpus = _document_corpus()
    names = features_of(["base"])
    model, _, _ = fit_model(corpus.samples(), names)
    apply_model(model, corpus)
    in_sample = {f.document_id: f.confidence for f in corpus.samples()}
    out_of_fold(corpus, names, 3.0)
    held_out = {f.document_id: f.confidence for f in corpus.samples()}

    # In sample the even documents (events) score above their odd neighbours; a model that never saw the document
    # cannot tell them apart that well.
    def gap(scores):
        return sum(scores[f"d{k}"] - scores[f"d{k + 1}"] for k in range(0, 10, 2)) / 5

    assert gap(in_sample) > gap(held_out) + 0.05


def test_the_threshold_is_chosen_on_the_tune_set_alone():
    tune = _corpus([(0.9, True), (0.8, True), (0.7, False), (0.6, True), (0.5, False), (0.4, False), (0.3, True)])
    for number, fact in enumerate(tune.samples()):
        fact.document_id = f"d{number}"
        fact.features = {"kind_confidence": fact.confidence, "log_sentence_tokens": 1.0}
        fact.participants = {"e": fact.features}
    model, _, _, tuned = fit_on_tune(tune, ["kind_confidence", "log_sentence_tokens"], 0.70, 0.55)
    # The threshold is the precision-first point of the tune set's out-of-fold confidences, which it reports.
    assert tuned.recall >= 0.55 and model.threshold == choose_threshold(tune, 0.70, 0.55)
    with pytest.raises(ValueError, match="at least 2 documents"):
        fit_model([TimelineFact(_entry("s"), {}, True, "d1"), TimelineFact(_entry("t"), {}, False, "d1")])


def test_fit_needs_no_check_set_and_refuses_an_unknown_family(tmp_path, capsys):
    assert main(["fit", "--tune", str(tmp_path), "--families", "base,shoe"]) == 2
    assert "needs corpus.jsonl" in capsys.readouterr().err
    for name in ("corpus.jsonl", "entity_timelines.jsonl"):
        (tmp_path / name).write_text("", encoding="utf-8")
    assert main(["fit", "--tune", str(tmp_path), "--families", "base,shoe"]) == 2
    assert "unknown feature families shoe" in capsys.readouterr().err
    assert main(["curve", "--tune", str(tmp_path)]) == 2
    assert "curve needs --check" in capsys.readouterr().err
    # Per-entity scoring is a measurement of `ablate`; a fit would silently score facts as the extractor does.
    assert main(["fit", "--tune", str(tmp_path), "--scoring", "entity"]) == 2
    assert "--scoring entity is for ablate only" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("corpus", "gold", "says"),
    [
        ("", '{"entity": "Orlund Rail", "events": []}', "corpus.jsonl holds no records"),
        ('{"id": "d1", "text": "Orlund Rail opened."}\n{"id": "d2"', "", "corpus.jsonl line 2 is not JSON"),
        ('{"id": "d1", "text": "Orlund Rail opened."}', '{"events": []}', "entity_timelines.jsonl line 1 lacks entity"),
    ],
)
def test_a_corpus_or_gold_file_that_cannot_be_read_is_one_sentence(tmp_path, capsys, corpus, gold, says):
    (tmp_path / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (tmp_path / "entity_timelines.jsonl").write_text(gold, encoding="utf-8")
    assert main(["fit", "--tune", str(tmp_path), "--out", str(tmp_path / "model.json")]) == 2
    error = capsys.readouterr().err
    assert says in error and "Traceback" not in error
    assert not (tmp_path / "model.json").exists()


def test_forward_selection_picks_the_family_that_tells_events_apart():
    rng = random.Random(11)
    samples = []
    for number in range(160):
        label = rng.random() < 0.5
        # Only a date feature follows the label; a line feature is noise.
        features = {"log_days_from_document": label + rng.gauss(0, 0.6), "number_share": rng.random()}
        fact = TimelineFact(_entry(f"s{number}"), features, label, f"d{number % 8}", participants={"e": features})
        samples.append(fact)
    steps = select_families(samples, 0.02, ("line", "date", "position"))
    assert steps[0][0] == ["date"] and steps[0][1] > 0.75
    assert len(steps) == 1  # noise gains too little to be added


def _timelines(name: str, seed: int) -> CorpusTimelines:
    """Ten invented documents of one entity whose facts are events when told in the past tense (mostly), and whose
    kind confidence (a feature of the family the default families leave out) follows the label too."""
    rng = random.Random(seed)
    events, facts = [], []
    for number in range(80):
        sentence = f"Orlund Rail event number {number} of {name} happened."
        label = rng.random() < 0.6
        if label:
            events.append({"date": "2015", "mentions": [{"doc_id": "d1", "sentence_id": number, "sentence": sentence}]})
        past = float(label if rng.random() < 0.8 else not label)
        features = {"tense:past": past, "kind_confidence": float(label) * 0.5 + rng.random() * 0.5}
        fact = TimelineFact(_entry(sentence, 2015), features, label, f"d{number % 10}", participants={"e": features})
        facts.append(fact)
    return CorpusTimelines(name, [{"entity": "Orlund Rail", "events": events}], {"Orlund Rail": facts})


def test_fit_records_a_command_that_gives_its_features_again_and_reads_nothing_of_the_check_set(
    tmp_path, monkeypatch, capsys
):
    from pipelines.evaluation import event_confidence

    corpora = {"tune_set": 5, "check_set": 9}
    monkeypatch.setattr(
        event_confidence, "extract_timelines", lambda folder, _: _timelines(folder.name, corpora[folder.name])
    )
    for name in corpora:
        (tmp_path / name).mkdir()
        for file in ("corpus.jsonl", "entity_timelines.jsonl"):
            (tmp_path / name / file).write_text("", encoding="utf-8")
    written = {}
    for label, check in (("alone", []), ("beside", ["--check", str(tmp_path / "check_set")])):
        out = tmp_path / f"{label}.json"
        assert main(["fit", "--tune", str(tmp_path / "tune_set"), *check, "--out", str(out)]) == 0
        written[label] = json.loads(out.read_text(encoding="utf-8"))
    # How thin the margins are is printed for each corpus fitted or reported.
    margins = [line for line in capsys.readouterr().out.splitlines() if "missing a target" in line]
    assert len(margins) == 2 and "check" not in margins[0] and "; check " in margins[1]
    model = written["alone"]
    assert model["features"] == features_of(DEFAULT_FAMILIES) and "kind_confidence" not in model["features"]
    # The recorded command names the families fitted: run again, it gives a model over the same features.
    recorded = model["command"].split("--families ")[1].split()[0].split(",")
    assert features_of(recorded) == model["features"]
    # A check set beside the tune set is only reported: the model, its C and its threshold are the same.
    beside = written["beside"]
    assert "check" in beside["scores"] and "check" not in model["scores"]
    for key in ("features", "coef", "intercept", "mean", "scale", "C", "threshold", "cross_validated_auc"):
        assert beside[key] == model[key], key


def test_the_shipped_model_s_command_names_the_families_it_was_fitted_on():
    from components.graph.event_confidence import MODEL_PATH

    shipped = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    recorded = shipped["command"].split("--families ")[1].split()[0].split(",")
    assert features_of(recorded) == shipped["features"]


@pytest.mark.parametrize(
    "failure",
    [
        GraphUnavailable("the graph database at 127.0.0.1:1 refused the connection; check DATABASE_URL"),
        OSError("the embedding model folder /models/gone does not exist"),
    ],
)
def test_an_unreachable_graph_or_a_missing_model_is_one_sentence(tmp_path, capsys, monkeypatch, failure):
    for name in ("corpus.jsonl", "entity_timelines.jsonl"):
        (tmp_path / name).write_text("", encoding="utf-8")

    def unavailable(*args, **kwargs):
        raise failure

    monkeypatch.setattr("pipelines.evaluation.event_confidence.extract_timelines", unavailable)
    assert main(["fit", "--tune", str(tmp_path), "--out", str(tmp_path / "model.json")]) == 2
    error = capsys.readouterr().err
    assert str(failure) in error and "Traceback" not in error
    assert not (tmp_path / "model.json").exists()


def _documents_corpus(documents: list[list[tuple[float, bool]]]) -> CorpusTimelines:
    """A corpus of one entity whose facts are spread over documents: one list of (confidence, label) per document,
    a labelled fact being a gold event."""
    events, facts, ids = [], [], []
    for index, document in enumerate(documents):
        ids.append(f"d{index}")
        for number, (confidence, label) in enumerate(document):
            sentence = f"Orlund Rail event number {index}-{number} happened."
            if label:
                mention = {"doc_id": f"d{index}", "sentence_id": number, "sentence": sentence}
                events.append({"date": "2015", "mentions": [mention]})
            facts.append(TimelineFact(TimelineEntry(f"d{index}", sentence, None), {}, label, f"d{index}", confidence))
    gold = {"entity": "Orlund Rail", "events": events}
    return CorpusTimelines("invented", [gold], {"Orlund Rail": facts}, documents=ids)


def test_a_threshold_whose_precision_sits_on_the_target_is_not_chosen():
    # Five documents of each kind; every fact above 0.5 is right. Kept whole, the corpus is right 70 times in 100:
    # on the precision target, which a resample of its documents meets only when it draws no more of the first kind
    # than of the second (638 of 1024 ways). Above 0.5 every resample is right every time, at recall 60/70.
    first = [(0.9, True)] * 5 + [(0.2, True)] + [(0.2, False)] * 4
    second = [(0.9, True)] * 7 + [(0.2, True)] + [(0.2, False)] * 2
    corpus = _documents_corpus([first] * 5 + [second] * 5)
    whole = corpus.score(0.0)
    assert (whole.recall, whole.precision) == (1.0, 0.7)
    assert corpus.met_share(0.0, 0.70, 0.55, resamples=4000) == pytest.approx(638 / 1024, abs=0.03)
    # The highest recall reaching precision 0.70 (the old rule) keeps every fact; the most resamples meeting both
    # targets keep the sure facts only, the higher of the thresholds that do (precision first).
    chosen = choose_threshold(corpus, 0.70, 0.55)
    assert chosen == pytest.approx(0.90)
    assert (corpus.score(chosen).recall, corpus.score(chosen).precision) == (60 / 70, 1.0)
    assert corpus.met_share(chosen, 0.70, 0.55) == 1.0


def test_one_set_of_document_draws_serves_every_threshold_of_a_choice():
    from pipelines.evaluation.event_confidence import _draw_counts

    right = [(0.9, True)] * 3 + [(0.2, False)]
    corpus = _documents_corpus([right] * 6)
    _draw_counts.cache_clear()
    choose_threshold(corpus, 0.70, 0.55)
    assert _draw_counts.cache_info().misses == 1  # 96 thresholds, the same draws
    counts = _draw_counts(6, 2000, 0)
    assert counts.shape == (2000, 6) and (counts.sum(axis=1) == 6).all()
    assert not counts.flags.writeable
