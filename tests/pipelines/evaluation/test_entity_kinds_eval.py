"""The entity-kind evaluation: the coarse inventory, the share of real entities kept, and a fixed part of a corpus."""

from __future__ import annotations

import json
from types import SimpleNamespace

from pipelines.evaluation.entity_kinds import coarse, documents_of, score


def sample(document_id: str, key: str, kind: str, confidence: float = 0.9):
    return (document_id, key, None, SimpleNamespace(kind=kind, confidence=confidence))


def test_the_coarse_inventory_folds_products_works_and_events_into_other():
    assert [coarse(k) for k in ("person", "organization", "place", "product", "work", "event", "other", "junk")] == [
        "person",
        "organization",
        "place",
        "other",
        "other",
        "other",
        "other",
        "junk",
    ]
    labels = {"talia brennick": "person", "zorvex": "product", "quorra": "junk", "ostby": "place"}
    found = [sample("d1", "talia brennick", "person"), sample("d1", "zorvex", "other"), sample("d2", "quorra", "place")]
    result = score(found, labels)
    assert result["kinds_correct"] == round(1 / 3, 3)  # zorvex is a product, not "other"
    assert result["kinds_correct_4"] == round(2 / 3, 3)  # ... which the coarse inventory counts as right
    assert result["junk"] == round(1 / 3, 3)
    assert result["real_kept"] == round(2 / 3, 3)  # ostby, a real entity, is not kept


def test_a_corpus_part_is_chosen_by_id_and_a_fixed_seed(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    text = "Orla Fenn met Tavi Ronn."
    rows = [{"id": f"{part}-{n:02d}", "title": "t", "text": text} for part in "ab" for n in range(20)]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    chosen = [d.document_id for d in documents_of(str(corpus), ids="b-", sample=5)]
    assert len(chosen) == 5 and all(i.startswith("b-") for i in chosen)
    assert chosen == [d.document_id for d in documents_of(str(corpus), ids="b-", sample=5)]  # the same every run
    assert len(documents_of(str(corpus))) == 40
    assert [d.document_id for d in documents_of(f"{corpus}?ids=b-&sample=5")] == chosen  # one corpus's own part
