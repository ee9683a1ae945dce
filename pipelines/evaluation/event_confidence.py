"""`python -m pipelines.evaluation.event_confidence`: fit and report the event-confidence model on gold timelines.

Each corpus is extracted with the graph's `LanguageExtractor` into its own graph collection, as ingestion stores it
(`pipelines.evaluation.ingested.as_ingested`: the text converted as a text file is, the settings' chunks with their
in-context sentence vectors), so that the model and its threshold are chosen on what the product extracts; every gold
entity's timeline (the graph's `timeline_hits`) gives samples: one per timeline fact, described by the event features
of the entity's part in it (`components.graph.event_confidence.event_features`) and labelled by the timelines
evaluation's own matcher: positive when the fact's sentence holds a gold event of the entity (the timeline's
precision). The date is not part of the label: a label that also asked for the right date fitted worse out of fold
(its errors are mostly the gold's own vagueness), and the dates right are reported beside every threshold.

- `fit` fits a logistic regression on the tune corpus over the feature families `--families` (its C chosen by
  5-fold cross-validation over whole documents) and chooses the threshold on the tune corpus too, from each fact's
  out-of-fold confidence: the threshold whose timelines meet both targets (`--min-precision`, `--min-recall`) in
  the most of 2,000 resamplings of the tune corpus's documents, ties to the higher threshold (precision first); it
  writes `components/graph/event_confidence.json` and prints the precision / recall / dates-right table at several
  thresholds; a `--check` corpus is only reported beside the tune corpus, never read for a choice;
- `curve` prints the same table for the shipped model on both corpora;
- `fit` and `curve` also say how thin the margins are: each corpus's ROC AUC of the facts' confidences, and the share
  of 2,000 resamplings of its documents (with replacement, a fixed seed) whose timelines at the threshold miss a
  target (`--min-recall`, `--min-precision`);
- `ablate` fits and chooses (on the tune corpus) the base families alone, with each other family, the shipped
  families (alone and with each family they leave out) and a forward selection by out-of-fold AUC, and reports each
  on the check corpus (with the share of resamplings of its documents that miss a target there, `missed_share`):
  the check corpus confirms a family or not. `--scoring entity` scores each timeline fact by its
  own entity's part in it instead of its surest participant's (what a confidence per participant would give);
- `losses` says where the shipped model's timelines lose recall on the tune corpus: each gold event mention is on
  its entity's timeline at the threshold, only below it, or never proposed (no fact of the entity holds its
  sentence), and a recalled one with a known gold date has its date right or wrong; it lists the tune corpus's lost
  mentions, to diagnose on (a mention below the threshold with the features that push its fact down most, a mention
  never proposed with its cause: no fact holds the sentence, or one does and the entity's name is written in it, or
  the entity is named otherwise), and gives only the counts of a `--check` corpus (never its sentences).

Usage:
```
python -m pipelines.evaluation.event_confidence fit --tune ../shared/data/semeval2015_timeline_trial
python -m pipelines.evaluation.event_confidence curve \\
    --tune ../shared/data/semeval2015_timeline_trial --check ../shared/data/semeval2015_timeline_airbus
python -m pipelines.evaluation.event_confidence losses \\
    --tune ../shared/data/semeval2015_timeline_trial --check ../shared/data/semeval2015_timeline_airbus
```
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from components.database import DatabaseUnavailable
from components.graph.event_confidence import (
    BASE_FAMILIES,
    FAMILIES,
    MODEL_PATH,
    EventConfidenceModel,
    complete_features,
    fact_confidence,
    vector,
)
from components.graph.extraction import LanguageExtractor
from components.graph.factory import graph_store_from_settings
from components.graph.model import entity_uuid
from components.graph.tools import GraphTools
from components.resilience.errors import first_line
from components.settings import get_settings
from pipelines.evaluation.entity_kinds import corpus_documents
from pipelines.evaluation.ingested import as_ingested
from pipelines.evaluation.jsonl import load_jsonl
from pipelines.evaluation.timelines import EntityScore, GoldTimeline, TimelineEntry, normalise_sentence, score_timeline

VERSION = "events-6"  # the next model `fit` writes (its threshold chosen by resampling); `events-5` is shipped
C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0)
FOLDS = 5
MIN_GAIN = 0.005  # the least out-of-fold AUC a family must add to be selected
# The feature families the shipped model uses (see `ablate`): each one kept helped out of fold on the tune set and
# was confirmed on the check set. The first model's "entity" family (the kind's confidence) is left out: with the
# `kinds-4` confidences it lowered the out-of-fold AUC on the tune set and recall on the check set.
DEFAULT_FAMILIES: tuple[str, ...] = (
    *(family for family in BASE_FAMILIES if family != "entity"),
    "participation",
    "line",
    "date_clause",
)
THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
MIN_PRECISION = 0.70
MIN_RECALL = 0.55
LOWERED_BY = 3  # the features `losses` names for each mention below the threshold
RESAMPLES = 2000  # resamplings of a corpus's documents that tell how often its timelines miss a target


@dataclass
class TimelineFact:
    """A fact on a gold entity's timeline: its entry, its features for that entity, its label, its document."""

    entry: TimelineEntry
    features: dict[str, float]
    label: bool
    document_id: str
    confidence: float = 0.0
    participants: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class CorpusTimelines:
    """A corpus's gold timelines and the facts its graph puts on them."""

    name: str
    gold: list[dict[str, Any]]
    timelines: dict[str, list[TimelineFact]]
    annotates_headlines: bool = True
    # Every fact the graph holds, of any entity, by document (None when not recorded): tells a gold mention no fact
    # of its entity holds from one whose sentence no fact holds at all.
    facts_by_document: dict[str, list[TimelineEntry]] | None = None
    documents: list[str] = field(default_factory=list)  # every document of the corpus, in order

    def samples(self) -> list[TimelineFact]:
        return [fact for facts in self.timelines.values() for fact in facts]

    def training_samples(self) -> list[TimelineFact]:
        """The samples the gold speaks for: a headline's facts only when the gold annotates some headline (one set
        leaves every title out, which says nothing of the events a headline tells)."""
        return [f for f in self.samples() if self.annotates_headlines or not f.features.get("headline")]

    def score(self, threshold: float) -> EntityScore:
        """Micro-averaged scores of the timelines keeping the facts at or above `threshold`."""
        total = EntityScore("ALL")
        for record in self.gold:
            kept = [f.entry for f in self.timelines[record["entity"]] if f.confidence >= threshold]
            total.add(score_timeline(record["entity"], kept, record, {}))
        return total

    def document_scores(self, threshold: float) -> dict[str, EntityScore]:
        """The timelines' scores at `threshold` (as `score`), document by document: each gold entity's facts and
        gold mentions of that document alone. Every document of the corpus has one, empty when it holds neither."""
        named = {f.document_id for facts in self.timelines.values() for f in facts}
        named |= {m["doc_id"] for r in self.gold for e in r.get("events", []) for m in e.get("mentions", [])}
        scores = {document: EntityScore(document) for document in [*self.documents, *sorted(named)]}
        for record in self.gold:
            facts = [f for f in self.timelines[record["entity"]] if f.confidence >= threshold]
            for document, score in scores.items():
                events = [
                    {**event, "mentions": [m for m in event.get("mentions", []) if m["doc_id"] == document]}
                    for event in record.get("events", [])
                ]
                own = {**record, "events": [event for event in events if event["mentions"]]}
                kept = [f.entry for f in facts if f.document_id == document]
                if kept or own["events"]:
                    score.add(score_timeline(record["entity"], kept, own, {}))
        return scores

    def resampled(
        self, threshold: float, resamples: int = RESAMPLES, seed: int = 0
    ) -> tuple[list[float], list[float]] | None:
        """The timelines' recall and precision at `threshold` in each of `resamples` resamplings of the corpus's
        documents (with replacement, as many as it has; the same draws for every threshold with the same seed), or
        None when the corpus has no document to resample."""
        import numpy as np

        scores = list(self.document_scores(threshold).values())
        if not scores:
            return None
        counts = _draw_counts(len(scores), resamples, seed)
        columns = np.array([[s.gold_mentions, s.recalled, s.entries, s.correct_entries] for s in scores], dtype=float)
        gold, recalled, entries, correct = (counts @ columns).T
        recall = np.divide(recalled, gold, out=np.zeros_like(gold), where=gold > 0)
        precision = np.divide(correct, entries, out=np.zeros_like(entries), where=entries > 0)
        return recall.tolist(), precision.tolist()

    def met_share(
        self, threshold: float, min_precision: float, min_recall: float, resamples: int = RESAMPLES, seed: int = 0
    ) -> float:
        """The share of `resamples` resamplings of the corpus's documents whose timelines at `threshold` meet both
        targets (recall at least `min_recall`, precision at least `min_precision`)."""
        drawn = self.resampled(threshold, resamples, seed)
        if drawn is None:
            # Nothing to resample: every resample is the empty corpus, which meets the targets as its score does.
            whole = self.score(threshold)
            return float(whole.recall >= min_recall and whole.precision >= min_precision)
        met = sum(r >= min_recall and p >= min_precision for r, p in zip(*drawn, strict=True))
        return met / resamples

    def missed_share(
        self, threshold: float, min_precision: float, min_recall: float, resamples: int = RESAMPLES, seed: int = 0
    ) -> float:
        """How thin the margins are: the share of `resamples` resamplings of the corpus's documents (with
        replacement, as many as it has) whose timelines at `threshold` miss a target (recall under `min_recall` or
        precision under `min_precision`)."""
        return 1.0 - self.met_share(threshold, min_precision, min_recall, resamples, seed)


@lru_cache(maxsize=8)
def _draw_counts(documents: int, resamples: int, seed: int) -> Any:
    """How often each of `documents` documents is drawn in each of `resamples` resamplings with replacement (a
    resamples x documents matrix, read-only), drawn with `random.Random(seed)`. The same draws serve every threshold
    of a choice, so they are made once per corpus size, count and seed, not once per threshold."""
    import numpy as np

    draw = random.Random(seed)
    counts = np.zeros((resamples, documents))
    for row in range(resamples):
        for index in draw.choices(range(documents), k=documents):
            counts[row, index] += 1
    counts.setflags(write=False)
    return counts


def extract_timelines(
    folder: Path, collection: str, ingested: tuple[list[Any], list[list[Any]]] | None = None
) -> CorpusTimelines:
    """Extract `folder`'s corpus.jsonl into the graph collection `collection` (emptied first) and label every
    fact on its gold entities' timelines. Each document is extracted as ingestion stores it (`as_ingested`: its
    text converted as a text file is, its chunks with their in-context sentence vectors; `ingested`: that result
    computed before, to extract the same corpus again), in corpus order with the names of the documents before it
    known, as ingesting the corpus extracts it."""
    documents, chunks = ingested or as_ingested(corpus_documents(folder / "corpus.jsonl"))
    gold = load_jsonl(folder / "entity_timelines.jsonl", ("entity", "events"))
    store = graph_store_from_settings(collection)
    extractor = LanguageExtractor(embedding_model=get_settings().embedding_model)  # the model `as_ingested` uses
    described: dict[str, tuple[dict[str, dict[str, float]], dict[str, Any]]] = {}
    facts_by_document: dict[str, list[TimelineEntry]] = {}
    for document in documents:
        store.delete_document(str(document.document_id))
    for document, parts in zip(documents, chunks, strict=True):
        graph = extractor.extract(document, parts, known_names=store.known_names)
        mentions = {mention.key: mention for mention in graph.entities}
        for fact in graph.facts:
            facts_by_document.setdefault(fact.document_id, []).append(
                TimelineEntry(fact.document_id, fact.text, fact.valid_at)
            )
            described[fact.uuid] = (
                {entity_uuid(key): complete_features(f, mentions.get(key)) for key, f in fact.event_features.items()},
                {},
            )
        store.replace_document(graph)
    tools = GraphTools(store)
    timelines: dict[str, list[TimelineFact]] = {}
    for record in gold:
        entity = record["entity"]
        uuids = {e.uuid for e in store.find_entities(entity, limit=5)}
        _, hits = tools.timeline_hits(entity, limit=1000)
        entries = [TimelineEntry(h.fact.document_id, h.fact.text, h.fact.valid_at) for h in hits]
        labels = GoldTimeline(record, {}).judge(entries)
        facts = []
        for hit, entry, (correct, _) in zip(hits, entries, labels, strict=True):
            by_uuid = described.get(hit.fact.uuid, ({}, {}))[0]
            own = [features for uuid, features in by_uuid.items() if uuid in uuids]
            features = own[0] if own else next(iter(by_uuid.values()), {})
            facts.append(TimelineFact(entry, features, correct, hit.fact.document_id, participants=by_uuid))
        timelines[entity] = facts
    titles = {normalise_sentence(document.title) for document in documents}
    headlines = any(
        normalise_sentence(mention.get("sentence") or "") in titles
        for record in gold
        for event in record.get("events", [])
        for mention in event.get("mentions", [])
    )
    ids = [str(document.document_id) for document in documents]
    return CorpusTimelines(folder.name, gold, timelines, headlines, facts_by_document, ids)


def features_of(families: tuple[str, ...] | list[str]) -> list[str]:
    """The feature names of `families` (names of `FAMILIES`, or "base": the first model's families), in the order
    of `FAMILIES`; ValueError for an unknown one."""
    chosen = {name for family in families for name in (BASE_FAMILIES if family == "base" else (family,))}
    unknown = sorted(chosen - set(FAMILIES))
    if unknown:
        raise ValueError(f"unknown feature families {', '.join(unknown)}; known: base, {', '.join(FAMILIES)}")
    return [feature for family in FAMILIES if family in chosen for feature in FAMILIES[family]]


def _matrix(samples: list[TimelineFact], names: list[str]) -> tuple[Any, Any]:
    import numpy as np

    return np.array([vector(s.features, names) for s in samples]), np.array([int(s.label) for s in samples])


def _regression(samples: list[TimelineFact], names: list[str], c: float) -> EventConfidenceModel:
    """A logistic regression with C `c` over `names` (standardised on `samples`), as the extractor reads it."""
    from sklearn.linear_model import LogisticRegression

    x, y = _matrix(samples, names)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    fitted = LogisticRegression(C=c, max_iter=2000).fit((x - mean) / scale, y)
    return EventConfidenceModel(
        features=list(names),
        coef=[round(float(w), 6) for w in fitted.coef_[0]],
        intercept=round(float(fitted.intercept_[0]), 6),
        mean=[round(float(m), 6) for m in mean],
        scale=[round(float(v), 6) for v in scale],
        threshold=0.5,
        version=VERSION,
    )


def _folds(samples: list[TimelineFact]) -> list[set[str]]:
    """The documents held out by each of (at most) `FOLDS` folds of whole documents."""
    from sklearn.model_selection import GroupKFold

    documents = sorted({s.document_id for s in samples})
    if len(documents) < 2:
        raise ValueError("fitting the event-confidence model needs labelled facts of at least 2 documents")
    folds = GroupKFold(n_splits=min(FOLDS, len(documents))).split(documents, groups=documents)
    return [{documents[i] for i in held} for _, held in folds]


def fit_model(
    samples: list[TimelineFact], names: list[str] | None = None, threshold: float = 0.5
) -> tuple[EventConfidenceModel, float, float]:
    """A logistic regression over `samples` and the features `names` (the default families' by default), its C the
    best mean out-of-fold ROC AUC (folds of whole documents); returns the model, its C and that AUC."""
    from sklearn.metrics import roc_auc_score

    names = list(names or features_of(DEFAULT_FAMILIES))
    folds = _folds(samples)
    best = (-1.0, C_GRID[0])
    for c in C_GRID:
        predicted: dict[int, float] = {}
        for held in folds:
            model = _regression([s for s in samples if s.document_id not in held], names, c)
            predicted.update({id(s): model.probability(s.features) for s in samples if s.document_id in held})
        auc = float(roc_auc_score([int(s.label) for s in samples], [predicted[id(s)] for s in samples]))
        if auc > best[0]:
            best = (auc, c)
    auc, c = best
    model = _regression(samples, names, c)
    model.threshold = threshold
    return model, c, auc


def _confidence(model: EventConfidenceModel, fact: TimelineFact, scoring: str) -> float:
    """A timeline fact's confidence: its surest participant's ("fact", as the extractor stores it) or its own
    entity's ("entity": each (entity, sentence) pair scored alone, a scoring the store does not keep)."""
    if scoring == "entity":
        return round(model.probability(fact.features), 4)
    return fact_confidence(model, list(fact.participants.values()))


def out_of_fold(corpus: CorpusTimelines, names: list[str], c: float, scoring: str = "fact") -> None:
    """Each timeline fact's confidence as a model fitted without its document would give it (the folds of
    `fit_model`): what the tune set says of a text not fitted on, to choose the threshold from."""
    samples = corpus.training_samples()
    for held in _folds(corpus.samples()):
        model = _regression([s for s in samples if s.document_id not in held], names, c)
        for fact in corpus.samples():
            if fact.document_id in held:
                fact.confidence = _confidence(model, fact, scoring)


def auc_of(corpus: CorpusTimelines) -> float:
    """The ROC AUC of the facts' confidences against their labels (0.5 when one class is missing)."""
    from sklearn.metrics import roc_auc_score

    labels = [int(f.label) for f in corpus.samples()]
    if len(set(labels)) < 2:
        return 0.5
    return float(roc_auc_score(labels, [f.confidence for f in corpus.samples()]))


def apply_model(model: EventConfidenceModel, corpus: CorpusTimelines, scoring: str = "fact") -> None:
    """Each timeline fact's confidence as the extractor computes it (its surest participant; `scoring` "entity":
    its own entity's, see `_confidence`)."""
    for fact in corpus.samples():
        fact.confidence = _confidence(model, fact, scoring)


def choose_threshold(
    corpus: CorpusTimelines, min_precision: float, min_recall: float, resamples: int = RESAMPLES, seed: int = 0
) -> float:
    """The threshold (steps of 0.01) on `corpus` whose timelines meet both targets (precision `min_precision`,
    recall `min_recall`) in the most resamplings of its documents (`CorpusTimelines.met_share`: `resamples` draws
    with replacement, the same draws for every threshold); ties to the higher threshold (precision first). A
    threshold whose precision reaches the target only on the whole corpus, at its edge, meets it in about half of
    them, so a flat precision curve no longer sends the threshold to the lowest one. When no resample meets both
    targets at any threshold: the highest precision at `min_recall` or more; without that, the best F0.5 (precision
    weighs twice recall)."""
    thresholds = [t / 100 for t in range(0, 96)]
    shares = [(corpus.met_share(t, min_precision, min_recall, resamples, seed), t) for t in thresholds]
    best = max(shares)
    if best[0] > 0:
        return best[1]
    scored = [(t, corpus.score(t)) for t in thresholds]
    floor = [(t, s) for t, s in scored if s.recall >= min_recall and s.entries]
    if floor:
        return max((s.precision, s.recall, -t, t) for t, s in floor)[3]

    def f05(s: EntityScore) -> float:
        p, r = s.precision, s.recall
        return 1.25 * p * r / (0.25 * p + r) if p + r else 0.0

    return max(scored, key=lambda item: (f05(item[1]), -item[0]))[0]


def fit_on_tune(
    tune: CorpusTimelines, names: list[str], min_precision: float, min_recall: float, scoring: str = "fact"
) -> tuple[EventConfidenceModel, float, float, EntityScore]:
    """The model fitted on the tune corpus and its threshold chosen there, out of fold: returns the model (threshold
    set), its C, its out-of-fold AUC and the tune set's out-of-fold scores at that threshold. Nothing of another
    corpus is read."""
    model, c, auc = fit_model(tune.training_samples(), names)
    out_of_fold(tune, names, c, scoring)
    model.threshold = choose_threshold(tune, min_precision, min_recall)
    return model, c, auc, tune.score(model.threshold)


def curve(corpora: list[CorpusTimelines], thresholds: tuple[float, ...]) -> list[dict[str, Any]]:
    rows = []
    for threshold in thresholds:
        row: dict[str, Any] = {"threshold": threshold}
        for corpus in corpora:
            s = corpus.score(threshold)
            row[corpus.name] = {
                "recall": round(s.recall, 3),
                "precision": round(s.precision, 3),
                "dates": round(s.date_accuracy, 3),
                "entries": s.entries,
            }
        rows.append(row)
    return rows


@dataclass
class LostMention:
    """A gold event mention a timeline loses: "below" (only facts below the threshold hold it; `confidence` is the
    surest of them), "never" (no fact of the entity holds its sentence) or "date" (on the timeline with a date that
    disagrees with the gold's known one)."""

    entity: str
    document_id: str
    sentence_id: int
    sentence: str
    loss: str
    confidence: float | None = None
    gold_date: str | None = None
    fact_date: str | None = None
    lowered_by: list[tuple[str, float, float]] = field(default_factory=list)
    cause: str = ""


@dataclass
class RecallLosses:
    """Where a corpus's timelines lose its gold event mentions at one threshold. `score` is the timelines' own score
    there (`CorpusTimelines.score`): its gold mentions are `kept` + `below` + `never`; `dated` the known gold dates of
    recalled mentions (one per gold event: a sentence holding two dated events counts twice, so `dated` can exceed
    `kept`), `date_wrong` of them dated otherwise."""

    threshold: float
    score: EntityScore
    below: int = 0
    never: int = 0
    lost: list[LostMention] = field(default_factory=list)
    never_causes: Counter[str] = field(default_factory=Counter)

    @property
    def mentions(self) -> int:
        return self.score.gold_mentions

    @property
    def kept(self) -> int:
        return self.score.recalled

    @property
    def dated(self) -> int:
        return self.score.dated_gold

    @property
    def date_wrong(self) -> int:
        return self.score.dated_gold - self.score.dated_correct


def lowered_by(
    model: EventConfidenceModel, fact: TimelineFact, count: int = LOWERED_BY
) -> list[tuple[str, float, float]]:
    """The features that push `fact` down most, each with its value and its share of the log-odds: the `count` most
    negative shares (`EventConfidenceModel.contributions`) of the participant its confidence comes from (its
    surest). A share is against an average fact, so a missing feature the right facts mostly have ("tense:past" 0)
    pushes down too."""
    if not fact.participants:
        return []
    surest = max(fact.participants.values(), key=model.probability)
    shares = sorted(model.contributions(surest).items(), key=lambda item: item[1])
    return [(name, surest.get(name, 0.0), round(share, 2)) for name, share in shares[:count] if share < 0]


NEVER_CAUSES = {
    "no fact": "no fact holds the sentence",
    "name not linked": "a fact holds it, the entity's name is written in it but not linked",
    "named otherwise": "a fact holds it, the entity is named otherwise: a reference, a variant",
}


def never_cause(corpus: CorpusTimelines, entity: str, key: tuple[str, int], timeline: GoldTimeline) -> str:
    """Why no fact of `entity` holds the gold mention `key` (a key of `NEVER_CAUSES`, "" when the corpus did not
    record its facts): no fact of any entity holds its sentence, or one does and the entity's name is written in
    it, or is not (the entity referred to by a pronoun, a description or another form of its name)."""
    if corpus.facts_by_document is None:
        return ""
    if timeline.match(key, corpus.facts_by_document.get(key[0], [])) is None:
        return "no fact"
    written = normalise_sentence(entity) in normalise_sentence(timeline.mentions[key]["sentence"])
    return "name not linked" if written else "named otherwise"


def recall_losses(corpus: CorpusTimelines, threshold: float, model: EventConfidenceModel | None = None) -> RecallLosses:
    """The timelines' scores at `threshold` (their facts at or above it), and each gold event mention they miss:
    only below the threshold or never proposed; and each known gold date of a recalled mention dated otherwise.
    With the `model` that scored the facts, a mention below the threshold names the features that push its surest
    fact down most."""
    losses = RecallLosses(threshold, corpus.score(threshold))
    for record in corpus.gold:
        entity = record["entity"]
        facts = corpus.timelines.get(entity, [])
        kept = [fact.entry for fact in facts if fact.confidence >= threshold]
        timeline = GoldTimeline(record, {})
        matched = {key: timeline.match(key, kept) for key in timeline.mentions}
        for key, entry in matched.items():
            if entry is not None:
                continue
            lost = LostMention(entity, key[0], key[1], timeline.mentions[key]["sentence"], "never")
            holding = [fact for fact in facts if timeline.match(key, [fact.entry]) is not None]
            if holding:
                losses.below += 1
                surest = max(holding, key=lambda fact: fact.confidence)
                lost.loss, lost.confidence = "below", surest.confidence
                lost.lowered_by = lowered_by(model, surest) if model is not None else []
            else:
                losses.never += 1
                lost.cause = never_cause(corpus, entity, key, timeline)
                losses.never_causes[lost.cause] += 1
            losses.lost.append(lost)
        for key, date, entry, right in timeline.dated_matches(matched, kept):
            if not right:
                losses.lost.append(
                    LostMention(
                        entity,
                        key[0],
                        key[1],
                        timeline.mentions[key]["sentence"],
                        "date",
                        gold_date=date.iso(),
                        fact_date=entry.date.iso() if entry.date is not None else None,
                    )
                )
    return losses


def print_losses(named: list[tuple[str, RecallLosses]], listed: RecallLosses | None) -> None:
    """The counts of each corpus's losses, then the mentions `listed` loses (the tune corpus's), by kind of loss."""
    print(f"recall losses at threshold {named[0][1].threshold:.2f} (gold event mentions)")
    print(
        f"{'set':<6} {'mentions':>8} {'kept':>5} {'below threshold':>15} {'never proposed':>14} "
        f"{'dated':>6} {'date wrong':>10}"
    )
    for label, losses in named:
        print(
            f"{label:<6} {losses.mentions:>8} {losses.kept:>5} {losses.below:>15} {losses.never:>14} "
            f"{losses.dated:>6} {losses.date_wrong:>10}"
        )
    for label, losses in named:
        if losses.never_causes:
            causes = "; ".join(f"{losses.never_causes[c]} {text}" for c, text in NEVER_CAUSES.items())
            print(f"{label} never proposed: {causes}")
    if listed is None:
        return
    titles = {"never": "never proposed", "below": "below the threshold", "date": "on the timeline, date wrong"}
    for loss, title in titles.items():
        lost = [mention for mention in listed.lost if mention.loss == loss]
        print(f"\n{title} ({len(lost)}):")
        for mention in lost:
            detail = f" confidence {mention.confidence:.2f}" if mention.confidence is not None else ""
            if loss == "date":
                detail = f" gold {mention.gold_date}, timeline {mention.fact_date}"
            if mention.cause:
                detail = f" ({NEVER_CAUSES[mention.cause]})"
            print(f"  {mention.entity} | {mention.document_id} sentence {mention.sentence_id}{detail}")
            print(f"    {' '.join(mention.sentence.split())[:300]}")
            if mention.lowered_by:
                shares = (f"{name}={value:g} {share:+.2f}" for name, value, share in mention.lowered_by)
                print("    lowered by " + ", ".join(shares))
        pushing = Counter(name for mention in lost for name, _, _ in mention.lowered_by)
        if pushing:
            counts = ", ".join(f"{name} {count}" for name, count in pushing.most_common())
            print(f"  features lowering them most (mentions): {counts}")


def print_curve(rows: list[dict[str, Any]], names: list[str], labels: list[str]) -> None:
    head = "threshold " + " ".join(f"{label + ' R / P / dates (entries)':>38}" for label in labels)
    print(head)
    for row in rows:
        cells = []
        for name in names:
            c = row[name]
            cells.append(f"{c['recall']:.3f} / {c['precision']:.3f} / {c['dates']:.3f} ({c['entries']:>4d})".rjust(38))
        print(f"{row['threshold']:>9.2f} " + " ".join(cells))


def _scores(score: EntityScore) -> dict[str, float]:
    return {
        "recall": round(score.recall, 3),
        "precision": round(score.precision, 3),
        "dates": round(score.date_accuracy, 3),
    }


def score_line(score: EntityScore) -> str:
    """Recall / precision / dates right (entries) of `score`, as the tables print them."""
    return f"{score.recall:.3f} / {score.precision:.3f} / {score.date_accuracy:.3f} ({score.entries})"


def select_families(
    samples: list[TimelineFact], min_gain: float = MIN_GAIN, candidates: tuple[str, ...] | None = None
) -> list[tuple[list[str], float]]:
    """Forward selection of feature families (`candidates`, all of `FAMILIES` by default) on the tune samples alone:
    starting from none, add the family whose addition gives the best out-of-fold ROC AUC (`fit_model`'s folds and
    C), while it gains at least `min_gain`. Returns each step's families and AUC."""
    candidates = tuple(candidates or FAMILIES)
    chosen: list[str] = []
    steps: list[tuple[list[str], float]] = []
    best = 0.5
    while len(chosen) < len(candidates):
        left = [family for family in candidates if family not in chosen]
        trials = [(fit_model(samples, features_of([*chosen, family]))[2], family) for family in left]
        auc, family = max(trials)
        if auc < best + min_gain:
            break
        chosen.append(family)
        best = auc
        steps.append((list(chosen), auc))
    return steps


def ablate(
    tune: CorpusTimelines, check: CorpusTimelines, min_precision: float, min_recall: float, scoring: str = "fact"
) -> list[dict[str, Any]]:
    """The families chosen on the tune set by forward selection, then, for the first model's families, each step of
    the selection and the selection without each of its families: the model and threshold fitted and chosen on the
    tune set (out of fold) and what they give on the check set, which confirms (or not) each family. Prints one row
    each."""
    steps = select_families(tune.training_samples())
    print("forward selection on the tune set (out-of-fold AUC): " + ", ".join(f"+{f[-1]} {a:.3f}" for f, a in steps))
    added = [family for family in FAMILIES if family not in BASE_FAMILIES]
    variants: list[tuple[str, list[str]]] = [("base (events-1)", ["base"])]
    variants += [(f"base +{family}", ["base", family]) for family in added]
    variants += [("shipped", list(DEFAULT_FAMILIES))]
    variants += [
        (f"shipped +{family}", [*DEFAULT_FAMILIES, family])
        for family in ("entity", *added)
        if family not in DEFAULT_FAMILIES
    ]
    variants += [(f"forward selection: {'+'.join(steps[-1][0])}", steps[-1][0])] if steps else []
    rows = []
    print(
        f"{'families':<34} {'C':>5} {'tune AUC':>8} {'thr':>5} {'tune R / P / dates (oof)':>28} {'check AUC':>9} "
        f"{'check R / P / dates':>28} {'missed':>6}"
    )
    for label, families in variants:
        names = features_of(families)
        model, c, auc, tuned = fit_on_tune(tune, names, min_precision, min_recall, scoring)
        apply_model(model, check, scoring)
        checked = check.score(model.threshold)
        row = {
            "label": label,
            "families": families,
            "C": c,
            "tune_auc": round(auc, 3),
            "threshold": model.threshold,
            "tune": _scores(tuned),
            "check_auc": round(auc_of(check), 3),
            "check": _scores(checked),
            "check_missed": round(check.missed_share(model.threshold, min_precision, min_recall), 3),
        }
        rows.append(row)
        print(
            f"{label:<34} {c:>5} {auc:>8.3f} {model.threshold:>5.2f} {score_line(tuned):>28} "
            f"{row['check_auc']:>9.3f} {score_line(checked):>28} {row['check_missed']:>6.0%}"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipelines.evaluation.event_confidence")
    parser.add_argument("command", choices=("fit", "curve", "ablate", "losses"))
    parser.add_argument("--tune", type=Path, required=True, help="folder with corpus.jsonl and entity_timelines.jsonl")
    parser.add_argument(
        "--check", type=Path, help="the check set's folder, same files: reported beside the tune set, never fitted on"
    )
    parser.add_argument("--min-precision", type=float, default=MIN_PRECISION)
    parser.add_argument("--min-recall", type=float, default=MIN_RECALL)
    parser.add_argument(
        "--families",
        default=",".join(DEFAULT_FAMILIES),
        help=f"feature families `fit` uses, comma-separated, among {', '.join(FAMILIES)} (default: the shipped ones)",
    )
    parser.add_argument(
        "--scoring",
        choices=("fact", "entity"),
        default="fact",
        help="`ablate`: score a timeline fact by its surest participant, as the extractor stores it (fact), or by "
        "its own entity's part in it (entity)",
    )
    parser.add_argument("--out", type=Path, default=MODEL_PATH, help="where `fit` writes the model")
    args = parser.parse_args(argv)
    if args.command in ("curve", "ablate") and args.check is None:
        print(f"{args.command} needs --check", file=sys.stderr)
        return 2
    if args.scoring != "fact" and args.command != "ablate":
        # The extractor stores one confidence per fact: `fit` and `curve` measure only what it can draw.
        print(
            f"--scoring {args.scoring} is for ablate only: {args.command} scores facts as the extractor does",
            file=sys.stderr,
        )
        return 2
    for folder in (args.tune, args.check):
        if folder is not None and not (
            (folder / "corpus.jsonl").exists() and (folder / "entity_timelines.jsonl").exists()
        ):
            print(f"{folder} needs corpus.jsonl and entity_timelines.jsonl", file=sys.stderr)
            return 2
    families = list(dict.fromkeys(name.strip() for name in args.families.split(",") if name.strip()))
    try:
        names = features_of(families)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    tuned: EntityScore | None = None
    try:
        # A corpus or gold file that cannot be read is one sentence naming its file and line.
        tune = extract_timelines(args.tune, "eval_event_tune")
        check = extract_timelines(args.check, "eval_event_check") if args.check is not None else None
        if args.command == "ablate":
            ablate(tune, check, args.min_precision, args.min_recall, args.scoring)
            return 0
        if args.command == "losses":
            # The shipped model's threshold; the check corpus only counted, so that no rule is written against it.
            model = EventConfidenceModel.load(args.out)
            named = []
            for label, corpus in (("tune", tune), ("check", check)):
                if corpus is not None:
                    apply_model(model, corpus)
                    named.append((label, recall_losses(corpus, model.threshold, model)))
            print_losses(named, named[0][1])
            return 0
        if args.command == "fit":
            # Everything is chosen on the tune set: C and the threshold out of fold; the check set is only reported.
            model, c, auc, tuned = fit_on_tune(tune, names, args.min_precision, args.min_recall)
        else:
            model = EventConfidenceModel.load(args.out)
    except (ValueError, OSError, DatabaseUnavailable) as exc:  # an unreadable file, a missing model, no database
        print(first_line(exc), file=sys.stderr)
        return 2
    corpora = [tune, *([check] if check is not None else [])]
    for corpus in corpora:
        apply_model(model, corpus)
    rows = curve(corpora, tuple(sorted({*THRESHOLDS, model.threshold})))
    print_curve(rows, [corpus.name for corpus in corpora], ["tune", "check"][: len(corpora)])
    at = {name: corpus.score(model.threshold) for name, corpus in zip(("tune", "check"), corpora, strict=False)}
    print(f"threshold {model.threshold:.2f}: " + "; ".join(f"{name} {score_line(s)}" for name, s in at.items()))
    margins = [
        f"{name} {corpus.missed_share(model.threshold, args.min_precision, args.min_recall):.0%} "
        f"(AUC {auc_of(corpus):.3f})"
        for name, corpus in zip(("tune", "check"), corpora, strict=False)
    ]
    print(f"resamples of the documents missing a target at {model.threshold:.2f}: " + "; ".join(margins))
    if args.command == "fit":
        met = tune.met_share(model.threshold, args.min_precision, args.min_recall)
        print(
            f"tune out of fold at {model.threshold:.2f}: {score_line(tuned)}; resamples meeting both targets {met:.0%}"
        )
        tune_labels = [s.label for s in tune.training_samples()]
        command = f"python -m pipelines.evaluation.event_confidence fit --tune {args.tune.name}"
        if args.check is not None:
            command += f" --check {args.check.name}"
        command += f" --families {','.join(families)}"  # the families fitted, so the command gives this model again
        command += f" --min-precision {args.min_precision} --min-recall {args.min_recall}"
        data = {
            "version": VERSION,
            "command": command,
            "sets": {"tune": args.tune.name, **({"check": args.check.name} if args.check is not None else {})},
            "samples": {"tune": len(tune_labels), "tune_positive": sum(tune_labels)},
            "C": c,
            "cross_validated_auc": round(auc, 4),
            "threshold": model.threshold,
            "threshold_chosen_on": "tune, out of fold",
            "threshold_rule": f"most of {RESAMPLES} document resamples meeting both targets, ties to the higher",
            "tune_out_of_fold_resamples_meeting_targets": round(met, 3),
            "scores": {"tune_out_of_fold": _scores(tuned), **{name: _scores(s) for name, s in at.items()}},
            "curve": rows,
            "features": model.features,
            "coef": model.coef,
            "intercept": model.intercept,
            "mean": model.mean,
            "scale": model.scale,
        }
        args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out} (C {c}, cross-validated AUC {auc:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
