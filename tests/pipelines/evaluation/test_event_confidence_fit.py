"""The event-confidence fitting script: labels from the timelines matcher, the fit, and the threshold chosen
precision first."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from components.graph.dates import FuzzyDate
from components.graph.event_confidence import FEATURES
from pipelines.evaluation.event_confidence import (
    CorpusTimelines,
    TimelineFact,
    apply_model,
    choose_threshold,
    fit_model,
)
from pipelines.evaluation.timelines import GoldTimeline, TimelineEntry

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
    # Above 0.5: recall 3/4, precision 3/4 -> the highest recall reaching precision 0.70 with recall >= 0.55 (the
    # lowest such threshold); above 0.7 precision is 1.0 but recall 1/2 falls below the floor.
    assert choose_threshold(corpus, 0.70, 0.55) == pytest.approx(0.51)
    # No threshold reaches precision 0.95 with recall >= 0.55: the most precise one that keeps the recall floor.
    chosen = choose_threshold(corpus, 0.95, 0.55)
    assert (corpus.score(chosen).recall, corpus.score(chosen).precision) == (0.75, 0.75)
    # A floor of 0.9 keeps every fact.
    assert corpus.score(choose_threshold(corpus, 0.70, 0.9)).entries == 7


def test_the_fit_learns_an_informative_feature_and_scores_like_the_extractor():
    rng = random.Random(7)
    samples = []
    for number in range(200):
        past = number % 2 == 0
        label = rng.random() < (0.85 if past else 0.25)
        features = {"tense:past": float(past), "log_sentence_tokens": rng.random() * 3}
        samples.append(
            TimelineFact(_entry(f"s{number}"), features, label, f"d{number % 10}", participants={"e": features})
        )
    model, c, auc = fit_model(samples)
    assert model.features == list(FEATURES) and auc > 0.65
    assert model.coef[FEATURES.index("tense:past")] > 0
    corpus = CorpusTimelines("invented", [], {"x": samples})
    apply_model(model, corpus)
    past = [s.confidence for s in samples if s.features["tense:past"]]
    present = [s.confidence for s in samples if not s.features["tense:past"]]
    assert min(past) > max(present)
