"""The kinds the knowledge graph decided for the names in the retrieved chunks' facts, and whether a short answer
names a thing that cannot be what the question asks for.

The recogniser labels one mention of a name in one sentence; the graph decides a name's kind from all its mentions
(`components.graph.kinds`, a fitted model: "other" when unsure). A chunk the graph branch found carries its facts
(`meta["graph_facts"]`), each with the names it is about and their kinds (`entity_kinds`).

Usage:
```python
kinds = graph_kinds(documents)  # {"acmedb": "product", "ada quill": "person"}
names_no_doer("AcmeDB", ("PERSON", "ORG", "NORP"), kinds)  # True: a product founds nothing
```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from components.graph.model import normalise_name

# A question asking who did something (its first label a person or an organisation) asks for an agent: a person,
# an organisation, or a group or a place acting as one ("France signed the treaty"). A made thing, a work or an
# event is no agent, whatever the recogniser called one mention of it.
DOER_LABELS = frozenset({"PERSON", "ORG"})
NOT_DOERS = frozenset({"product", "work", "event"})


def graph_kinds(documents: Iterable[Any]) -> dict[str, str]:
    """The decided kind of each name the documents' graph facts are about (the name as the graph keys it,
    `normalise_name` -> kind); a name given two kinds, or only "other", is left out."""
    seen: dict[str, set[str]] = {}
    for document in documents:
        for fact in (getattr(document, "meta", None) or {}).get("graph_facts") or ():
            if not isinstance(fact, Mapping):
                continue
            names, kinds = fact.get("entities") or (), fact.get("entity_kinds") or ()
            for name, kind in zip(names, kinds, strict=False):
                if isinstance(name, str) and isinstance(kind, str) and name.strip():
                    seen.setdefault(normalise_name(name), set()).add(kind)
    return {name: next(iter(kinds)) for name, kinds in seen.items() if len(kinds) == 1 and "other" not in kinds}


def names_no_doer(span: str, labels: Sequence[str], kinds: Mapping[str, str]) -> bool:
    """Whether `span` is a name the graph knows as a product, a work or an event while the part (entity `labels`,
    most wanted first) asks for a person or an organisation. The span is keyed as the graph keys names, so "the
    Quillbase" or "Quillbase's" is the graph's "Quillbase"."""
    return bool(labels) and labels[0] in DOER_LABELS and kinds.get(normalise_name(span)) in NOT_DOERS
