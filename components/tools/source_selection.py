"""`auto` source selection: which sources a question is worth asking, and why.

Rules read the question the way an analyst would: recency words send it to the web, papers and methods to
arXiv, references to earlier conversation to memory, entities the graph knows to the graph. The knowledge base
is always asked (it is the analyst's own material). Every chosen source carries its reasons.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from haystack import component, logging

from components.contracts.selection import SOURCE_NAMES
from components.redaction import cut
from components.serialization import InitParameterSerialization
from components.text.phrases import capitalised_phrases

logger = logging.getLogger(__name__)


_RECENCY = re.compile(
    r"\b(latest|recent(ly)?|newest|current(ly)?|today|yesterday|this (week|month|year|quarter)|last (week|month|"
    r"year|quarter)|now|breaking|news|announced?|upcoming|20[2-9]\d)\b",
    re.IGNORECASE,
)
_RESEARCH = re.compile(
    r"\b(papers?|preprints?|arxiv|stud(y|ies)|research|methods?|methodolog(y|ies)|algorithms?|benchmarks?|"
    r"state[- ]of[- ]the[- ]art|sota|literature|survey|architectures?|models?|experiments?|ablations?|"
    r"datasets?|theorem|proofs?)\b",
    re.IGNORECASE,
)
_MEMORY = re.compile(
    r"\b(we (discuss(ed)?|talk(ed)?( about)?|covered|looked at|found|said)|(you|i) (said|told|mentioned|asked)|"
    r"earlier|previous(ly)?|last time|remind me|as (we|you) (said|mentioned)|our (conversation|discussion|chat))\b",
    re.IGNORECASE,
)
# The product's one vocabulary of questions about how entities relate (source and tool selection both read it).
RELATIONS = re.compile(
    r"\b(relationships?|related|connected|connections?|links?|owns?|owned|acquired?|acquisitions?|partners?|"
    r"subsidiar(y|ies)|works? (for|at)|founders?|founded|ceo|between)\b",
    re.IGNORECASE,
)
# Besides relations, who-questions and histories of named entities are the graph's to answer.
_WHO_AND_HISTORY = re.compile(r"\b(who|timeline|history of)\b", re.IGNORECASE)


@dataclass
class SourceSelection:
    """The sources worth asking for a question, with the reasons for each (and for what was left out)."""

    sources: list[str]
    reasons: dict[str, list[str]] = field(default_factory=dict)
    entities: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def matched_words(pattern: re.Pattern[str], text: str) -> list[str]:
    """The distinct matches of `pattern` in `text`, lower-cased, in order: the words behind a reason."""
    return list(dict.fromkeys(match.group(0).lower().strip() for match in pattern.finditer(text)))


def select_sources(
    question: str,
    known_entities: Callable[[str], list[str]] | None = None,
    available: list[str] | tuple[str, ...] = SOURCE_NAMES,
) -> SourceSelection:
    """Decide from `question` which of `available` sources to ask; `known_entities(question)` names graph entities.

    A failing entity lookup is logged and treated as "none known": selection never raises on a bad lookup.
    """
    text = (question or "").strip()
    reasons: dict[str, list[str]] = {}  # the chosen sources', in the order they were chosen

    def choose(source: str, reason: str) -> None:
        if source in available:
            reasons.setdefault(source, []).append(reason)

    if not text:
        return SourceSelection(sources=[], reasons={"*": ["the question is empty"]})
    choose("kb", "the knowledge base is always searched")
    if recency := matched_words(_RECENCY, text):
        choose("web", "recency words: " + ", ".join(recency))
    if research := matched_words(_RESEARCH, text):
        choose("arxiv", "papers or methods: " + ", ".join(research))
    if memory := matched_words(_MEMORY, text):
        choose("memory", "refers to earlier conversation: " + ", ".join(memory))
    entities: list[str] = []
    if known_entities is not None:
        try:
            entities = [str(entity) for entity in (known_entities(text) or [])]
        except Exception as exc:  # noqa: BLE001 - a broken lookup must not stop the question
            logger.warning("Entity lookup failed during source selection: {reason}", reason=cut(str(exc), 200))
    if entities:
        choose("graph", "entities known to the graph: " + ", ".join(entities[:10]))
    elif (
        (relations := matched_words(_WHO_AND_HISTORY, text) + matched_words(RELATIONS, text))
        and known_entities is None
        and capitalised_phrases(text)
    ):
        choose("graph", "asks about relations between named entities: " + ", ".join(relations))
    chosen = list(reasons)
    for source in available:
        reasons.setdefault(source, ["not selected: nothing in the question calls for it"])
    return SourceSelection(sources=chosen, reasons=reasons, entities=entities or capitalised_phrases(text))


@component
class AutoSourceSelector(InitParameterSerialization):
    """Resolves `sources=["auto"]` into the sources worth asking, with reasons; explicit lists pass through.

    Usage:
    ```python
    selector = AutoSourceSelector()
    selector.run(query="What are the latest papers on retrieval?", sources=["auto"])["sources"]
    # ['kb', 'web', 'arxiv']
    ```
    """

    def __init__(self, available: list[str] | None = None) -> None:
        available = list(available or SOURCE_NAMES)
        unknown = [source for source in available if source not in SOURCE_NAMES]
        if unknown:
            raise ValueError(f"unknown sources {unknown}; choose from {', '.join(SOURCE_NAMES)}.")
        self.available = available

    @component.output_types(sources=list[str], reasons=dict[str, list[str]])
    def run(self, query: str, sources: list[str] | None = None) -> dict[str, Any]:
        """Select sources for `query`.

        :returns: `sources`: the sources to ask; `reasons`: for each source, why it was (not) chosen.
        """
        requested = [source for source in (sources or ["auto"]) if source]
        if "auto" not in requested:
            chosen = [source for source in requested if source in self.available]
            return {"sources": chosen, "reasons": {source: ["requested explicitly"] for source in chosen}}
        selection = select_sources(query, available=self.available)
        return {"sources": selection.sources, "reasons": selection.reasons}
