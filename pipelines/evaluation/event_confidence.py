"""`python -m pipelines.evaluation.event_confidence`: fit and report the event-confidence model on gold timelines.

Each corpus is extracted with the graph's `LanguageExtractor` into its own graph collection; every gold entity's
timeline (the graph's `timeline_hits`) gives samples: one per timeline fact, described by the event features of the
entity's part in it (`components.graph.event_confidence.event_features`) and labelled by the timelines evaluation's
own matcher: positive when the fact's sentence holds a gold event of the entity (the timeline's precision). The
date is not part of the label: a label that also asked for the right date fitted worse out of fold (its errors are
mostly the gold's own vagueness), and the dates right are reported beside every threshold.

- `fit` fits a logistic regression on the tune corpus (its C chosen by 5-fold cross-validation grouped by
  document), chooses the threshold on the check corpus (precision first within the target: the highest recall
  whose precision reaches `--min-precision` with recall at least `--min-recall`; without one, the highest precision
  at that recall), writes `components/graph/event_confidence.json` and prints the
  precision / recall / dates-right table at several thresholds on both corpora;
- `curve` prints the same table for the shipped model.

Usage:
```
python -m pipelines.evaluation.event_confidence fit \\
    --tune ../shared/data/semeval2015_timeline_trial --check ../shared/data/semeval2015_timeline_airbus
```
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.graph.event_confidence import (
    FEATURES,
    MODEL_PATH,
    EventConfidenceModel,
    complete_features,
    fact_confidence,
    vector,
)
from components.graph.extraction import LanguageExtractor
from components.graph.model import entity_uuid
from pipelines.evaluation.entity_kinds import corpus_documents
from pipelines.evaluation.jsonl import load_jsonl
from pipelines.evaluation.timelines import EntityScore, GoldTimeline, TimelineEntry, normalise_sentence, score_timeline

VERSION = "events-1"
C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0)
THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
MIN_PRECISION = 0.70
MIN_RECALL = 0.55


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


def extract_timelines(folder: Path, collection: str) -> CorpusTimelines:
    """Extract `folder`'s corpus.jsonl into the graph collection `collection` (emptied first) and label every
    fact on its gold entities' timelines."""
    from components.graph.factory import graph_store_from_settings
    from components.graph.tools import GraphTools

    documents = corpus_documents(folder / "corpus.jsonl")
    gold = load_jsonl(folder / "entity_timelines.jsonl", ())
    store = graph_store_from_settings(collection)
    extractor = LanguageExtractor()
    described: dict[str, tuple[dict[str, dict[str, float]], dict[str, Any]]] = {}
    for document in documents:
        store.delete_document(str(document.document_id))
    for document in documents:
        graph = extractor.extract(document, [], known_names=store.known_names)
        mentions = {mention.key: mention for mention in graph.entities}
        for fact in graph.facts:
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
    return CorpusTimelines(folder.name, gold, timelines, headlines)


def _matrix(samples: list[TimelineFact]) -> tuple[Any, Any]:
    import numpy as np

    return np.array([vector(s.features) for s in samples]), np.array([int(s.label) for s in samples])


def fit_model(samples: list[TimelineFact], threshold: float = 0.5) -> tuple[EventConfidenceModel, float, float]:
    """A logistic regression over `samples`, its C the best mean out-of-fold ROC AUC (5 folds grouped by
    document); returns the model, its C and that AUC."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold

    x, y = _matrix(samples)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    groups = [s.document_id for s in samples]
    best = (-1.0, C_GRID[0])
    for c in C_GRID:
        predicted = np.zeros(len(y))
        for train, test in GroupKFold(n_splits=5).split(z, y, groups):
            model = LogisticRegression(C=c, max_iter=2000).fit(z[train], y[train])
            predicted[test] = model.predict_proba(z[test])[:, 1]
        auc = float(roc_auc_score(y, predicted))
        if auc > best[0]:
            best = (auc, c)
    auc, c = best
    fitted = LogisticRegression(C=c, max_iter=2000).fit(z, y)
    model = EventConfidenceModel(
        features=list(FEATURES),
        coef=[round(float(w), 6) for w in fitted.coef_[0]],
        intercept=round(float(fitted.intercept_[0]), 6),
        mean=[round(float(m), 6) for m in mean],
        scale=[round(float(s), 6) for s in scale],
        threshold=threshold,
        version=VERSION,
    )
    return model, c, auc


def apply_model(model: EventConfidenceModel, corpus: CorpusTimelines) -> None:
    """Each timeline fact's confidence as the extractor computes it (its surest participant)."""
    for fact in corpus.samples():
        fact.confidence = fact_confidence(model, list(fact.participants.values()))


def choose_threshold(corpus: CorpusTimelines, min_precision: float, min_recall: float) -> float:
    """The threshold (steps of 0.01) on `corpus` that puts precision first within the target: the highest recall
    whose precision reaches `min_precision` while recall stays at `min_recall` or more; without one, the highest
    precision at `min_recall` or more; without that, the best F0.5 (precision weighs twice recall)."""
    scored = [(t / 100, corpus.score(t / 100)) for t in range(0, 96)]
    floor = [(t, s) for t, s in scored if s.recall >= min_recall and s.entries]
    reaching = [(s.recall, -t, t) for t, s in floor if s.precision >= min_precision]
    if reaching:
        return max(reaching)[2]
    if floor:
        return max((s.precision, s.recall, -t, t) for t, s in floor)[3]

    def f05(s: EntityScore) -> float:
        p, r = s.precision, s.recall
        return 1.25 * p * r / (0.25 * p + r) if p + r else 0.0

    return max(scored, key=lambda item: (f05(item[1]), -item[0]))[0]


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


def print_curve(rows: list[dict[str, Any]], names: list[str], labels: list[str]) -> None:
    head = "threshold " + " ".join(f"{label + ' R / P / dates (entries)':>38}" for label in labels)
    print(head)
    for row in rows:
        cells = []
        for name in names:
            c = row[name]
            cells.append(f"{c['recall']:.3f} / {c['precision']:.3f} / {c['dates']:.3f} ({c['entries']:>4d})".rjust(38))
        print(f"{row['threshold']:>9.2f} " + " ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipelines.evaluation.event_confidence")
    parser.add_argument("command", choices=("fit", "curve"))
    parser.add_argument("--tune", type=Path, required=True, help="folder with corpus.jsonl and entity_timelines.jsonl")
    parser.add_argument("--check", type=Path, required=True, help="the check set's folder, same files")
    parser.add_argument("--min-precision", type=float, default=MIN_PRECISION)
    parser.add_argument("--min-recall", type=float, default=MIN_RECALL)
    parser.add_argument("--out", type=Path, default=MODEL_PATH, help="where `fit` writes the model")
    args = parser.parse_args(argv)
    for folder in (args.tune, args.check):
        if not (folder / "corpus.jsonl").exists() or not (folder / "entity_timelines.jsonl").exists():
            print(f"{folder} needs corpus.jsonl and entity_timelines.jsonl", file=sys.stderr)
            return 2
    tune = extract_timelines(args.tune, "eval_event_tune")
    check = extract_timelines(args.check, "eval_event_check")
    if args.command == "fit":
        model, c, auc = fit_model(tune.training_samples())
    else:
        model = EventConfidenceModel.load(args.out)
    for corpus in (tune, check):
        apply_model(model, corpus)
    if args.command == "fit":
        model.threshold = choose_threshold(check, args.min_precision, args.min_recall)
    rows = curve([tune, check], tuple(sorted({*THRESHOLDS, model.threshold})))
    print_curve(rows, [tune.name, check.name], ["tune", "check"])
    at = {name: corpus.score(model.threshold) for name, corpus in (("tune", tune), ("check", check))}
    print(
        f"threshold {model.threshold:.2f}: "
        + "; ".join(
            f"{name} recall {s.recall:.3f}, precision {s.precision:.3f}, dates {s.date_accuracy:.3f}"
            for name, s in at.items()
        )
    )
    if args.command == "fit":
        tune_labels = [s.label for s in tune.training_samples()]
        data = {
            "version": VERSION,
            "command": "python -m pipelines.evaluation.event_confidence fit --tune "
            f"{args.tune.name} --check {args.check.name} --min-precision {args.min_precision} "
            f"--min-recall {args.min_recall}",
            "sets": {"tune": args.tune.name, "check": args.check.name},
            "samples": {"tune": len(tune_labels), "tune_positive": sum(tune_labels)},
            "C": c,
            "cross_validated_auc": round(auc, 4),
            "threshold": model.threshold,
            "scores": {
                name: {
                    "recall": round(s.recall, 3),
                    "precision": round(s.precision, 3),
                    "dates": round(s.date_accuracy, 3),
                }
                for name, s in at.items()
            },
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
