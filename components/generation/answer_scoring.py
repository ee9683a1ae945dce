"""The weights the offline answer chooses its sentence and its short answer with, fitted, and its rule families.

The extractive answer scores every candidate sentence of a question part, and every candidate span of the chosen
sentence, as a weighted sum of named features (`SENTENCE_FEATURES`, `ENTITY_FEATURES`, `PHRASE_FEATURES`). The
weights are not written in the code: they live in a small versioned JSON file (`answer_scoring.json` beside this
module by default), fitted by `research fit scoring` on the tune halves of labelled question sets (a pairwise
logistic ranking over each part's candidates: does this sentence hold a gold answer, is this span one). The file:
`{"version", "sentence": {feature: weight}, "entity_span": {...}, "phrase_span": {...}, "fitted_from", "command",
"scores", ...}`.

A sentence's score is higher for a better sentence; a span's cost is lower for a better span. The rules that read
the question and the sentences for those features come in families (`RULE_FAMILIES`); each can be switched off
(`ExtractiveAnswerGenerator(rules_off=[...])`) to measure what it adds (`docs/answer-scoring.md`).

Usage:
```python
scoring = AnswerScoring.load()  # the packaged file
scoring.sentence_score({"share": 0.6, "cosine": 0.7, "top_rank": 1.0})
scoring.without(["statement"]).on("statement")  # False
```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from components.model_files import read_json_object

SCORING_VERSION = 1
DEFAULT_SCORING_PATH = Path(__file__).with_name("answer_scoring.json")

# A candidate sentence of a part (higher scores win).
SENTENCE_FEATURES = (
    "share",  # its (rarity-weighed) share of the part's terms
    "cosine",  # its in-context cosine to the question
    "top_rank",  # 1 / (1 + its chunk's rank)
    "off_subject",  # 1 when it names none of the question's subjects, in itself, its title or the sentence before
    "kind_found",  # 1 when it holds an entity of a kind the part asks for (read for the few best only)
    "kind_rank",  # that entity's kind's position among the asked kinds (0: the most wanted; at most 2)
    "gap_found",  # a phrase part: 1 when it holds a phrase in the role the question's wh-word plays
)
# A candidate entity of the chosen sentence (lower costs win).
ENTITY_FEATURES = (
    "distance",  # words to the nearest of the question's words in the sentence (0 when it holds none)
    "position",  # its position in the sentence, when the sentence holds none of the question's words
    "label_rank",  # its kind's position among the asked kinds (+2 for a date without a digit)
    "role",  # 1 when it plays the wh-word's role, or does what the question's verb does ("who")
)
# A candidate noun phrase of the chosen sentence for a "what"/"which"/"who"/"where" part (lower costs win).
PHRASE_FEATURES = (
    "distance",  # words to the nearest of the question's words (at most 8)
    "repeated",  # share of its terms the question holds
    "words",  # its length in words
    "argument",  # 1 when it is an argument of a word the question holds
    "equated",  # 1 when it is headed by the noun asked about, or the sentence equates that noun with it
    "proper_name",  # 1 when it holds a proper noun
    "value",  # 1 when it is a date or number
    "doer",  # "who": 1 when it does what the question's verb does
    "subject",  # "who": 1 when it is the subject (and not a doer)
    "place",  # "where": 1 when it is the object of a place preposition
    "statement",  # cosine of the sentence with the question read with it in the wh-word's place (the few best)
)
GROUPS = {"sentence": SENTENCE_FEATURES, "entity_span": ENTITY_FEATURES, "phrase_span": PHRASE_FEATURES}

# The rule families: what each reads. Each can be switched off (`rules_off`) to measure what it adds.
RULE_FAMILIES = {
    "kind": "a sentence holding an entity of the asked kind gains (`kind_found`, `kind_rank`)",
    "off_subject": "a sentence naming none of the question's subjects loses (`off_subject`)",
    "gap": "the wh-word's role in the parse: the phrase that fills it (`gap_found`, entity `role`, the phrase itself)",
    "doer": "'who' asks for the doer of the question's verb (entity `role`, phrase `doer`/`subject`)",
    "equated": "the phrase headed by the asked noun, or that the sentence equates it with (`equated`)",
    "statement": "the few best phrases read back into the question, compared with the sentence (`statement`)",
    "chain": "multi-hop: follow the chosen sentence through the names it brings in to a sentence about them",
    "decompose": "a question naming what it asks about through a description is answered hop by hop, as a chain",
    "relation": "a sentence adding the relation the question asks of a second subject joins the answer",
    "verdict": "comparisons and yes/no questions answered from each subject's sentences",
    "subject": "a cited sentence about its chunk's subject answers with the full name the chunk opens with",
    "further_kind": "a further sentence holding another span of the asked kind gains",
    "graph_kind": "a name the graph knows as a product, a work or an event answers no 'who' (no headline)",
    "life_dates": "'when was X born / did X die' reads the life's bracket after the name a sentence opens with",
}
# The features a family's switch sets to nothing.
FAMILY_FEATURES = {
    "kind": {"sentence": ("kind_found", "kind_rank")},
    "off_subject": {"sentence": ("off_subject",)},
    "gap": {"sentence": ("gap_found",)},
    "equated": {"phrase_span": ("equated",)},
    "doer": {"phrase_span": ("doer", "subject")},
    "statement": {"phrase_span": ("statement",)},
}


class ScoringModelError(ValueError):
    """A scoring file that cannot be used; the message says why."""


@dataclass
class AnswerScoring:
    """The sentence and span weights, and the rule families switched off. `log`, when a list, receives each part's
    candidates with their features (for fitting; `research fit scoring`)."""

    sentence: Mapping[str, float]
    entity_span: Mapping[str, float]
    phrase_span: Mapping[str, float]
    further_bonus: float
    meta: Mapping[str, Any] = field(default_factory=dict)
    off: frozenset[str] = frozenset()
    log: list[dict[str, Any]] | None = None

    def on(self, family: str) -> bool:
        """Whether a rule family is in use."""
        return family not in self.off

    def weight(self, group: str, feature: str) -> float:
        """A feature's weight (0 when its family is off)."""
        if any(feature in FAMILY_FEATURES[family].get(group, ()) for family in self.off if family in FAMILY_FEATURES):
            return 0.0
        return float(getattr(self, group).get(feature, 0.0))

    def _sum(self, group: str, features: Mapping[str, float]) -> float:
        return sum(self.weight(group, name) * float(value) for name, value in features.items() if value)

    def sentence_score(self, features: Mapping[str, float]) -> float:
        return self._sum("sentence", features)

    def entity_cost(self, features: Mapping[str, float]) -> float:
        return self._sum("entity_span", features)

    def phrase_cost(self, features: Mapping[str, float]) -> float:
        return self._sum("phrase_span", features)

    def most_gained(self, features: Iterable[str]) -> float:
        """The most the given sentence features (each at most 1, `kind_rank` at most 2) can add to a score."""
        return sum(max(0.0, self.weight("sentence", name)) * (2.0 if name == "kind_rank" else 1.0) for name in features)

    def without(self, families: Iterable[str]) -> AnswerScoring:
        """A copy with these rule families switched off; `ScoringModelError` for an unknown family."""
        families = frozenset(families)
        unknown = sorted(families - set(RULE_FAMILIES))
        if unknown:
            raise ScoringModelError(f"unknown rule families: {', '.join(unknown)} (known: {', '.join(RULE_FAMILIES)})")
        return replace(self, off=self.off | families, log=None)

    def with_weights(self, group: str, weights: Mapping[str, float]) -> AnswerScoring:
        """A copy whose `group` weights are these."""
        return replace(self, **{group: dict(weights)}, log=None)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerScoring:
        """The weights a scoring file holds; `ScoringModelError` when it is not one this code can use."""
        if data.get("version") != SCORING_VERSION:
            raise ScoringModelError(f"the scoring file is version {data.get('version')!r}, not {SCORING_VERSION}")
        groups = {}
        for group, names in GROUPS.items():
            weights = data.get(group)
            if not isinstance(weights, dict):
                raise ScoringModelError(f"the scoring file lacks its {group!r} weights")
            unknown = sorted(set(weights) - set(names))
            if unknown:
                raise ScoringModelError(
                    f"the scoring file's {group!r} weights name unknown features: {unknown} (this version does not "
                    "compute them: fit the file again with `research fit scoring`)"
                )
            try:
                groups[group] = {name: float(value) for name, value in weights.items()}
            except (TypeError, ValueError) as exc:
                raise ScoringModelError(f"the scoring file's {group!r} weights are not numbers") from exc
        try:
            further = float(data.get("further_bonus", 0.0))
        except (TypeError, ValueError) as exc:
            raise ScoringModelError("the scoring file's further_bonus is not a number") from exc
        meta = {key: value for key, value in data.items() if key not in {*GROUPS, "further_bonus"}}
        return cls(**groups, further_bonus=further, meta=meta)

    @classmethod
    def load(cls, path: str | Path | None = None) -> AnswerScoring:
        """The weights in `path` (the packaged file when None or empty); read once per path, a fresh copy each call."""
        return replace(_load(str(Path(path) if path else DEFAULT_SCORING_PATH)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": SCORING_VERSION,
            **{key: value for key, value in self.meta.items() if key != "version"},
            **{group: dict(getattr(self, group)) for group in GROUPS},
            "further_bonus": self.further_bonus,
        }


@lru_cache(maxsize=8)
def _load(path: str) -> AnswerScoring:
    return AnswerScoring.from_dict(read_json_object(path, "scoring file", ScoringModelError))
