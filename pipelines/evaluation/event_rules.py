"""`python -m pipelines.evaluation.event_rules`: each event and date rule family of the extractor, off against on.

The extractor decides which entities take part in a sentence's event, which of the sentence's dates dates it, and
whether it is an event at all, with families of rules (`RULE_FAMILIES`: each a few functions as
`components.graph.extraction` calls them, or names of `components.graph.clause_reading` and `components.graph.dates`
read where they stand). This audit extracts the tune and the check corpus once
with every rule on, then once with each family switched off (its functions replaced by what the extractor does
without them), and prints the timelines' event recall / precision / dates right on both corpora:

- with the shipped event-confidence model at its threshold (what the product would show with that family off);
- with the model refitted and its threshold chosen on the tune corpus alone (`fit_on_tune`), since the shipped
  model was fitted on what the rules give.

A family is kept when switching it off loses on the check corpus; one whose gain is the tune corpus's alone fits that
corpus. The check corpus is only reported, never read for a choice. Parses and sentence vectors are computed once
per corpus (the shared analysis caches the parses), so every row costs one extraction.

Usage:
```
python -m pipelines.evaluation.event_rules \\
    --tune ../shared/data/semeval2015_timeline_trial --check ../shared/data/semeval2015_timeline_airbus
```
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from components.database import DatabaseUnavailable
from components.graph import clause_reading, extraction
from components.graph import dates as dates_module
from components.graph.event_confidence import EventConfidenceModel
from components.resilience.errors import first_line
from pipelines.evaluation.entity_kinds import corpus_documents
from pipelines.evaluation.event_confidence import (
    DEFAULT_FAMILIES,
    MIN_PRECISION,
    MIN_RECALL,
    CorpusTimelines,
    apply_model,
    extract_timelines,
    features_of,
    fit_on_tune,
    score_line,
)
from pipelines.evaluation.ingested import as_ingested

_NEVER = re.compile(r"(?!)")  # a pattern that matches nothing: the rule it stands for is off


def _no(*_: Any, **__: Any) -> bool:
    return False


def _none(*_: Any, **__: Any) -> list[Any]:
    return []


def _every_date(sentence: Any, dates: list[Any], participant: Any) -> list[Any]:
    return list(dates)


def _no_frame(sentence: Any, valid: Any, method: str, *_: Any, **__: Any) -> tuple[Any, str]:
    return valid, method


def _not_restated(mentions: list[Any], text: str) -> list[Any]:
    return mentions


def _untitled(document: Any, chunks: list[Any]) -> Any:
    document_id, sentences, _, anchor = _READ_DOCUMENT(document, chunks)
    return document_id, sentences, "", anchor


_READ_DOCUMENT = extraction.read_document


def _from_document(sentence: Any, anchor: Any, previous: Any = None) -> Any:
    return dates_module.sentence_validity(sentence, anchor, None)


# Each family (what it does in a comment) and the (owner, attribute, replacement) patches that switch it off.
_E, _C, _D, _X = extraction, clause_reading, dates_module, extraction.LanguageExtractor
RULE_FAMILIES: dict[str, list[tuple[Any, str, Any]]] = {
    # A headline is a clause cut short: every name in it takes part (one naming no one borrows the lead's subject),
    # and its undated event happens on the story's day.
    "headline": [(_E, "read_document", _untitled)],
    "state": [(_E, "is_state", _no)],  # an undated copula describing its subject is no event
    "supposition": [(_E, "supposed", _no)],  # a clause in or under an if/unless condition is no event
    "premodifier": [(_E, "is_premodifier", _no)],  # a name premodifying an event noun in prose takes no part
    "habit": [(_E, "habitual", _no)],  # an undated simple-present predicate is a habit, not an event
    # A name modifying another thing's noun, or completing a thing's noun, takes no part.
    "participant filters": [(_E, "modifies_other_thing", _no), (_E, "of_a_thing", _no)],
    # The dates of the entity's own clause date its event, not those of a reported or another clause.
    "own-predicate dates": [(_E, "participant_dates", _every_date)],
    # A subject shared by coordinated verbs takes part in each one's dated event.
    "conjoined verbs": [(_E, "conjoined_dates", _none)],
    # A definite event noun as subject refers back to the participants of the event it names.
    "event-noun references": [(_E, "_event_references", _none)],
    "trade words": [(_E, "_TRADE_WORDS", set())],  # a definite trade noun refers back to the last trade told
    "event-noun list": [(_C, "_EVENT_NOUNS", set())],  # a listed noun names an event (the suffix rule stays)
    # Undated past-tense news happens on the recent day the text named.
    "story's day": [(_X, "_in_frame", staticmethod(_no_frame))],
    "dateline": [(_X, "_is_dateline", staticmethod(_no))],  # a line of dates alone gives the document's date
    # "Two years later" counts from the text's previous date, not the document's.
    "steps from the previous date": [(_E, "sentence_validity", _from_document)],
    "restated dates": [(_D, "_restated", _not_restated)],  # "later, on May 3, 2010" is May 3, 2010
    "future cue": [(_D, "_speaks_of_future", _no)],  # a bare month after will/plan/expect resolves forward
    "durations and rates": [(_D, "_DURATION_RE", _NEVER), (_D, "_RATE_RE", _NEVER)],  # "for two weeks", "a year"
    "period modifiers": [(_D, "_MODIFIER_RE", _NEVER)],  # "early 2007", "the end of March" keep their period
    "ages": [(_D, "_AGE_RE", _NEVER)],  # "aged 55" is no date
}


@contextmanager
def switched_off(family: str | None) -> Iterator[None]:
    """Within the block, `family`'s rules are off (None: every rule on)."""
    patches = RULE_FAMILIES[family] if family else []
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patches]
    dates_module.resolve_date.cache_clear()  # the dates it resolved with other rules
    try:
        for owner, name, replacement in patches:
            setattr(owner, name, replacement)
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)
        dates_module.resolve_date.cache_clear()


def audit(
    tune_folder: Path,
    check_folder: Path,
    families: list[str],
    model: EventConfidenceModel,
    extract: Callable[..., CorpusTimelines] = extract_timelines,
) -> list[dict[str, Any]]:
    """One row per family (None first: every rule on): both corpora's scores with `model` at its threshold, and the
    check corpus's with a model refitted on the tune corpus."""
    folders = (tune_folder, check_folder)
    ingested = {folder: as_ingested(corpus_documents(folder / "corpus.jsonl")) for folder in folders}
    names = features_of(DEFAULT_FAMILIES)
    rows = []
    print(
        f"{'off':<30} {'tune R / P / dates':>24} {'check R / P / dates':>24} {'refit thr':>9} "
        f"{'refit check R / P / dates':>26}"
    )
    for family in [None, *families]:
        with switched_off(family):
            tune = extract(tune_folder, "eval_rules_tune", ingested[tune_folder])
            check = extract(check_folder, "eval_rules_check", ingested[check_folder])
        scores = {}
        for label, corpus in (("tune", tune), ("check", check)):
            apply_model(model, corpus)
            scores[label] = corpus.score(model.threshold)
        refit, _, _, _ = fit_on_tune(tune, names, MIN_PRECISION, MIN_RECALL)
        apply_model(refit, check)
        refitted = check.score(refit.threshold)
        rows.append({"off": family, **scores, "refit_threshold": refit.threshold, "refit_check": refitted})
        label = family or "(none: every rule on)"
        print(
            f"{label:<30} {score_line(scores['tune']):>24} {score_line(scores['check']):>24} "
            f"{refit.threshold:>9.2f} {score_line(refitted):>26}",
            flush=True,
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipelines.evaluation.event_rules")
    parser.add_argument("--tune", type=Path, required=True, help="folder with corpus.jsonl and entity_timelines.jsonl")
    parser.add_argument("--check", type=Path, required=True, help="the check set's folder: reported, never fitted on")
    parser.add_argument(
        "--families", default=",".join(RULE_FAMILIES), help=f"comma-separated, among: {', '.join(RULE_FAMILIES)}"
    )
    args = parser.parse_args(argv)
    families = [name.strip() for name in args.families.split(",") if name.strip()]
    unknown = [name for name in families if name not in RULE_FAMILIES]
    if unknown:
        print(f"unknown rule families {', '.join(unknown)}; known: {', '.join(RULE_FAMILIES)}", file=sys.stderr)
        return 2
    for folder in (args.tune, args.check):
        if not ((folder / "corpus.jsonl").exists() and (folder / "entity_timelines.jsonl").exists()):
            print(f"{folder} needs corpus.jsonl and entity_timelines.jsonl", file=sys.stderr)
            return 2
    try:
        audit(args.tune, args.check, families, EventConfidenceModel.load())
    except (ValueError, OSError, DatabaseUnavailable) as exc:
        print(first_line(exc), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
