"""Invented facts for the tests of event confidence: the graph's timelines and the Entities page read the same ones."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from components.graph.dates import FuzzyDate
from components.graph.model import Fact


def halvard_fact(number: int, text: str, confidence: float | None, year: int) -> Fact:
    """Fact `number` of the invented "Halvard Mills" document, dated to `year`, with an event confidence."""
    document = SimpleNamespace(document_id="doc-halvard", url="https://example.org/halvard")
    fact = Fact.of_sentence(
        document,
        number,
        text,
        None,
        ["halvard mills"],
        ["Halvard Mills"],
        (FuzzyDate(dt.date(year, 1, 1), "year"), None, "stated"),
        title="Halvard Mills through the years",
        anchor=dt.date(2023, 4, 2),
    )
    fact.confidence = confidence
    return fact
