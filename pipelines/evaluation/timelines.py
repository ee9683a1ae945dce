"""`research eval timelines`: entity timelines scored against a SemEval-2015 TimeLine-style gold file.

The corpus is ingested into its own collection (knowledge base + graph, through the real ingestion path), every
gold entity's timeline is built with the graph's `get_entity_timeline`, and three scores are printed, next to a
baseline of plain semantic search for the entity's name in the same run:

- event recall: gold event mentions whose sentence is in the entity's timeline;
- precision: timeline entries whose sentence holds a gold event of that entity;
- date accuracy: for recalled gold events with a known date, the entry's date agrees with it to the gold's precision.

Usage:
```python
report = evaluate_timelines(Path("corpus.jsonl"), Path("entity_timelines.jsonl"), collection="eval_timelines")
print(report.table())
```
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.contracts import document_to_chunk
from components.graph.dates import FuzzyDate
from components.graph.factory import graph_store_from_settings
from components.graph.ingest_hook import GraphIngestHook
from components.graph.tools import GraphTools
from components.knowledge_base.factory import open_knowledge_base
from components.knowledge_base.search import KnowledgeBaseSearch
from components.text.dates import parse_date
from components.text.language import sentence_spans
from ingest.ingestor import IngestItem, Ingestor, document_id_for
from pipelines.evaluation.jsonl import load_jsonl
from pipelines.runtime import Runtime

DEFAULT_COLLECTION = "eval_timelines"


@dataclass
class TimelineEntry:
    """One line of a produced timeline: the document it came from, its sentence and its date."""

    document_id: str
    sentence: str
    date: FuzzyDate | None


@dataclass
class EntityScore:
    """The scores of one timeline against one gold entity."""

    entity: str
    gold_mentions: int = 0
    recalled: int = 0
    entries: int = 0
    correct_entries: int = 0
    dated_gold: int = 0
    dated_correct: int = 0

    @property
    def recall(self) -> float:
        return self.recalled / self.gold_mentions if self.gold_mentions else 0.0

    @property
    def precision(self) -> float:
        return self.correct_entries / self.entries if self.entries else 0.0

    @property
    def date_accuracy(self) -> float:
        return self.dated_correct / self.dated_gold if self.dated_gold else 0.0

    def add(self, other: EntityScore) -> None:
        for name in ("gold_mentions", "recalled", "entries", "correct_entries", "dated_gold", "dated_correct"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class TimelineReport:
    """Per-entity and overall (micro-averaged) scores of the graph timelines and the baseline."""

    systems: dict[str, list[EntityScore]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    # Per system, each entity's timeline as built (in its order), for `facts_records`.
    timelines: dict[str, dict[str, list[TimelineEntry]]] = field(default_factory=dict)
    corpus_ids: dict[str, str] = field(default_factory=dict)  # ingested document id -> corpus id

    def total(self, system: str) -> EntityScore:
        total = EntityScore("ALL")
        for score in self.systems[system]:
            total.add(score)
        return total

    def table(self) -> str:
        lines = [
            f"{'system':<10} {'entity':<24} {'recall':>7} {'precision':>9} {'date acc':>8} {'gold':>5} {'entries':>7}"
        ]
        for system, scores in self.systems.items():
            for score in [*scores, self.total(system)]:
                lines.append(
                    f"{system:<10} {score.entity[:24]:<24} {score.recall:>7.3f} {score.precision:>9.3f} "
                    f"{score.date_accuracy:>8.3f} {score.gold_mentions:>5d} {score.entries:>7d}"
                )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seconds": self.seconds}
        for system, scores in self.systems.items():
            out[system] = {
                score.entity: {
                    "recall": score.recall,
                    "precision": score.precision,
                    "date_accuracy": score.date_accuracy,
                    "gold_mentions": score.gold_mentions,
                    "entries": score.entries,
                }
                for score in [*scores, self.total(system)]
            }
        return out

    def facts_records(self) -> list[dict[str, Any]]:
        """Every timeline fact for fact, one record per system and entity: `{"system", "entity", "facts":
        [{"document" (corpus id), "sentence", "date" (ISO at its precision, or None)}]}`, in timeline order (what
        `research eval compare` compares)."""
        return [
            {
                "system": system,
                "entity": entity,
                "facts": [
                    {
                        "document": self.corpus_ids.get(entry.document_id, entry.document_id),
                        "sentence": entry.sentence,
                        "date": entry.date.iso() if entry.date is not None else None,
                    }
                    for entry in entries
                ],
            }
            for system, by_entity in self.timelines.items()
            for entity, entries in by_entity.items()
        ]


def normalise_sentence(text: str) -> str:
    """Whitespace- and case-insensitive sentence text, for matching timeline entries to gold sentences. Quotation
    marks at either end are left out: a sentence splitter may give a quotation's closing mark to the sentence
    before or after it (a gold '" We won, " said X.' is the same sentence as 'We won, " said X. "')."""
    text = text.strip().strip("\"'`“”‘’ ").strip()
    return " ".join(re.sub(r"\s+([,.;:!?'\"])", r"\1", text).lower().split())


def parse_gold_date(text: str | None) -> FuzzyDate | None:
    """A gold date ("2008-06-09", "2008-03-XX", "2008", "XXXX-XX-XX") at the precision it knows; None if unknown."""
    parts = (text or "").split("-")
    known: list[str] = []
    for part in parts:
        if not part.isdigit():
            break
        known.append(part)
    if not known or len(known[0]) != 4:
        return None
    try:
        return FuzzyDate.parse("-".join(known))
    except ValueError:
        return None


class GoldTimeline:
    """One gold entity's event mentions, keyed by (ingested document id, sentence index), and the matcher that tells
    which timeline entry holds which of them (the same sentence, or one holding the other when longer than 20
    characters). `gold_doc_ids` maps the gold's document ids to the ingested ones."""

    def __init__(self, gold: dict[str, Any], gold_doc_ids: dict[str, str]) -> None:
        self.mentions: dict[tuple[str, int], dict[str, Any]] = {}
        self.dated: list[tuple[tuple[str, int], FuzzyDate]] = []
        for event in gold.get("events", []):
            date = parse_gold_date(event.get("date"))
            for mention in event.get("mentions", []):
                if not mention.get("sentence"):
                    continue
                key = (gold_doc_ids.get(mention["doc_id"], mention["doc_id"]), int(mention["sentence_id"]))
                self.mentions.setdefault(key, mention)
                if date is not None:
                    self.dated.append((key, date))
        self.texts = {(key[0], normalise_sentence(m["sentence"])) for key, m in self.mentions.items()}

    def holding(self, key: tuple[str, int], entries: list[TimelineEntry]) -> list[TimelineEntry]:
        """The entries of `entries` holding the gold mention `key`, in their order."""
        gold_text = normalise_sentence(self.mentions[key]["sentence"])
        out = []
        for entry in entries:
            if entry.document_id != key[0]:
                continue
            text = normalise_sentence(entry.sentence)
            if text == gold_text or (len(text) > 20 and (text in gold_text or gold_text in text)):
                out.append(entry)
        return out

    def match(self, key: tuple[str, int], entries: list[TimelineEntry]) -> TimelineEntry | None:
        """The first of `entries` holding the gold mention `key`, or None."""
        found = self.holding(key, entries)
        return found[0] if found else None

    def dated_matches(
        self, matched: dict[tuple[str, int], TimelineEntry | None], entries: list[TimelineEntry] | None = None
    ) -> list[tuple[tuple[str, int], FuzzyDate, TimelineEntry, bool]]:
        """Each known gold date whose mention `matched` recalls: the mention's key, the gold date, the entry dating
        it and whether that entry's date agrees with it. A sentence telling two events at two dates ("joined in 2006
        and left in 2014") can have a fact for each: with the timeline's `entries`, a gold event is dated by the
        entry of its sentence whose date agrees with its own, when one does (else the first entry holding it), not
        always by the sentence's first fact."""
        out = []
        for key, date in self.dated:
            entry = matched.get(key)
            if entry is None:
                continue
            if entries is not None:
                agreeing = [e for e in self.holding(key, entries) if e.date is not None and e.date.agrees_with(date)]
                entry = agreeing[0] if agreeing else entry
            out.append((key, date, entry, entry.date is not None and entry.date.agrees_with(date)))
        return out

    def judge(self, entries: list[TimelineEntry]) -> list[tuple[bool, bool | None]]:
        """For each entry: whether it holds a gold event of the entity, and whether its date agrees with that
        event's known gold date (None when it holds none with a known date)."""
        matched = {key: self.match(key, entries) for key in self.mentions}
        good = {id(entry) for key in self.mentions for entry in self.holding(key, entries)}
        dates: dict[int, bool] = {}
        for _, _, entry, right in self.dated_matches(matched, entries):
            dates[id(entry)] = dates.get(id(entry), True) and right
        return [
            (
                id(entry) in good or (entry.document_id, normalise_sentence(entry.sentence)) in self.texts,
                dates.get(id(entry)),
            )
            for entry in entries
        ]


def score_timeline(
    entity: str, entries: list[TimelineEntry], gold: dict[str, Any], gold_doc_ids: dict[str, str]
) -> EntityScore:
    """Score one entity's timeline. `gold_doc_ids` maps the gold's document ids to the ingested ones."""
    score = EntityScore(entity)
    timeline = GoldTimeline(gold, gold_doc_ids)
    matched = {key: timeline.match(key, entries) for key in timeline.mentions}
    score.gold_mentions = len(timeline.mentions)
    score.recalled = sum(1 for entry in matched.values() if entry is not None)
    score.entries = len(entries)
    score.correct_entries = sum(1 for correct, _ in timeline.judge(entries) if correct)
    dated = timeline.dated_matches(matched, entries)
    score.dated_gold = len(dated)
    score.dated_correct = sum(1 for *_, right in dated if right)
    return score


def _open_stores(collection: str, fresh: bool) -> tuple[Any, Any]:
    kb = open_knowledge_base(collection=collection)
    graph = graph_store_from_settings(collection)
    if fresh:
        for document_id in _all_document_ids(kb):
            kb.delete_document(
                document_id,
                also=lambda connection, d=document_id: graph.delete_document(
                    d, connection=connection if graph.backend == "postgres" else None
                ),
            )
    return kb, graph


def _all_document_ids(kb: Any) -> list[str]:
    ids: list[str] = []
    offset = 0
    while True:
        page, total = kb.list_documents(limit=200, offset=offset)
        ids.extend(summary.document.document_id for summary in page)
        offset += len(page)
        if not page or offset >= total:
            return ids


def _ingest(corpus: list[dict[str, Any]], kb: Any, graph: Any) -> dict[str, str]:
    items, ids = [], {}
    for record in corpus:
        source = f"{record.get('corpus', 'corpus')}:{record['id']}"
        ids[str(record["id"])] = document_id_for(source)
        date = parse_date(record.get("date"))
        items.append(
            IngestItem(
                source=source,
                filename=f"{record['id']}.txt",
                data=record["text"].encode("utf-8"),
                doc_type="txt",
                title=record.get("title") or str(record["id"]),
                date=date,
                url=record.get("url"),
            )
        )
    report = Ingestor(store=kb, hooks=[GraphIngestHook(store=graph)]).ingest_items(items)
    failed = getattr(report, "failed", None)
    if failed:
        raise ValueError(f"{len(failed)} corpus documents could not be ingested: {failed[:3]}")
    return ids


def graph_timeline(graph: Any, entity: str, min_event_confidence: float | None = None) -> list[TimelineEntry]:
    """The graph's timeline of `entity` as entries: the facts the timeline draws, at or above `min_event_confidence`
    (None: the fitted threshold, as the app and the `entity_timeline` pipeline use by default)."""
    tools = GraphTools(graph)
    _, hits = tools.timeline_hits(entity, limit=1000)
    certain, _ = tools.split_certain(hits, min_event_confidence)
    return [TimelineEntry(hit.fact.document_id, hit.fact.text, hit.fact.valid_at) for hit in certain]


def baseline_timeline(kb: Any, entity: str, k: int, collection: str) -> list[TimelineEntry]:
    """Plain semantic search for the entity's name: every sentence of the top-k chunks, dated by its document."""
    search = KnowledgeBaseSearch(mode="dense", collection=collection, limit=k)
    output = search.run(query=entity, limit=k)
    entries = []
    seen: set[tuple[str, str]] = set()
    for chunk in (document_to_chunk(document) for document in output["documents"]):
        document_id = chunk.metadata.get("document_id") or chunk.source_id
        date = FuzzyDate(chunk.source_date, "day") if chunk.source_date else None
        for start, end in sentence_spans(chunk.text):
            sentence = chunk.text[start:end]
            key = (document_id, normalise_sentence(sentence))
            if key not in seen:
                seen.add(key)
                entries.append(TimelineEntry(document_id, sentence, date))
    return entries


def evaluate_timelines(
    corpus_path: Path,
    gold_path: Path,
    collection: str = DEFAULT_COLLECTION,
    baseline_k: int = 10,
    fresh: bool = True,
    progress: Any = None,
    min_event_confidence: float | None = None,
) -> TimelineReport:
    """Ingest the corpus into `collection`, build every gold entity's timeline (its facts at or above
    `min_event_confidence`, None: the fitted threshold) and score it and the baseline."""
    corpus = load_jsonl(corpus_path, ())
    gold = load_jsonl(gold_path, ())
    for record in corpus:
        if not {"id", "text"} <= set(record):
            raise ValueError(f"corpus record {record.get('id', '?')} needs an id and a text")
    for record in gold:
        if not {"entity", "events"} <= set(record):
            raise ValueError(f"gold record {record.get('id', '?')} needs an entity and events")
    say = progress or (lambda line: None)
    kb, graph = _open_stores(collection, fresh)
    started = time.perf_counter()
    say(f"ingesting {len(corpus)} documents into {collection!r}")
    ids = _ingest(corpus, kb, graph)
    report = TimelineReport()
    report.seconds["ingest"] = round(time.perf_counter() - started, 3)
    report.systems = {"graph": [], "baseline": []}
    report.timelines = {"graph": {}, "baseline": {}}
    report.corpus_ids = {ingested: corpus_id for corpus_id, ingested in ids.items()}
    for system in ("graph", "baseline"):
        started = time.perf_counter()
        for record in gold:
            entity = record["entity"]
            if system == "graph":
                entries = graph_timeline(graph, entity, min_event_confidence)
            else:
                entries = baseline_timeline(kb, entity, baseline_k, collection)
            report.timelines[system][entity] = entries
            report.systems[system].append(score_timeline(entity, entries, record, ids))
        report.seconds[system] = round(time.perf_counter() - started, 3)
    return report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `research eval timelines`."""
    parser.add_argument("--corpus", type=Path, required=True, help="corpus JSONL (id, title, text, date, url)")
    parser.add_argument("--gold", type=Path, required=True, help="gold timelines JSONL (entity, events)")
    parser.add_argument("--collection", default=DEFAULT_COLLECTION, help="collection to ingest into (emptied first)")
    parser.add_argument("--baseline-k", type=int, default=10, help="chunks the semantic-search baseline reads (1-50)")
    parser.add_argument("--keep", action="store_true", help="do not empty the collection before ingesting")
    parser.add_argument("--json", type=Path, help="also write the scores as JSON to this file")
    parser.add_argument(
        "--min-confidence",
        type=float,
        default=None,
        help="event confidence (0-1) a fact needs to be on the timeline (default: the fitted threshold; 0: all)",
    )
    parser.add_argument(
        "--facts", type=Path, help="also write every timeline fact for fact (JSONL, for `research eval compare`)"
    )


def main(args: argparse.Namespace) -> int:
    """Run the evaluation the parsed arguments describe and print the table."""
    if not 1 <= args.baseline_k <= 50:
        raise ValueError("--baseline-k must be between 1 and 50")
    if args.min_confidence is not None and not 0 <= args.min_confidence <= 1:
        raise ValueError("--min-confidence must be between 0 and 1")
    with Runtime():  # the process's set-up, and the database closed after the run
        report = evaluate_timelines(
            args.corpus,
            args.gold,
            args.collection,
            args.baseline_k,
            fresh=not args.keep,
            progress=lambda line: print(line, flush=True),
            min_event_confidence=args.min_confidence,
        )
    print(report.table())
    for system in report.systems:
        total = report.total(system)
        print(
            f"{system}: event recall {total.recall:.3f}, precision {total.precision:.3f}, "
            f"date accuracy {total.date_accuracy:.3f}"
        )
    if args.json:
        args.json.write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")
    if args.facts:
        args.facts.parent.mkdir(parents=True, exist_ok=True)
        with args.facts.open("w", encoding="utf-8") as handle:
            for record in report.facts_records():
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0
