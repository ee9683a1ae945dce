"""The tune and check halves of the labelled question sets, the same for every set of a kind: a set named `squad*`
splits by article (the id of the question or of its gold paragraph, `squad-AA-...`: articles 0-11 tune, the rest
check); `hotpotqa*` and `musique*` by position in their question file (0-19 tune, the rest check); any other set by
a fixed-seed half of its question ids."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

SPLIT_SEED = "answer-confidence"
_SQUAD_ID = re.compile(r"^squad-(\d+)-")
HALVES = ("tune", "check")


def has_halves(set_name: str) -> bool:
    """Whether a set is one of those split into halves: the public dev sets, the demo questions and the verdict
    questions written over a public corpus (`verdicts_*`)."""
    return set_name.lower().startswith(("squad", "hotpotqa", "musique", "demo", "verdicts", "bridges"))


def half_of(set_name: str, record: Mapping[str, Any]) -> str:
    """`tune` or `check`: the half of one captured question (see the module's docstring)."""
    name = set_name.lower()
    # A SQuAD question's article is in its gold paragraph's id (`squad-AA-PPP`); its own id is SQuAD's hash.
    article_ids = [str(record.get("id")), *(str(doc) for doc in record.get("gold_doc_ids") or ())]
    match = next((found for found in map(_SQUAD_ID.match, article_ids) if found), None)
    if name.startswith("squad") and match:
        return "tune" if int(match.group(1)) <= 11 else "check"
    if (name.startswith("hotpotqa") or name.startswith("musique")) and record.get("index") is not None:
        return "tune" if int(record["index"]) < 20 else "check"
    digest = hashlib.sha256(f"{SPLIT_SEED}:{record.get('id')}".encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "check"
