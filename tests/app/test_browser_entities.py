"""The Entities page in a real browser (headless Chromium) on a small invented corpus ingested by the test: the
kind with its confidence, a merged name with why, facts placed only where their sentence dates them, the "undated,
from a document of DATE" list, documents named by title with a link, and each fact's event-confidence badge."""

from __future__ import annotations

import re
import time

import pytest

from tests.app.test_browser import ARTIFACTS, COLLECTION, app_url, browser_page, pytestmark  # noqa: F401

HISTORY = """---
title: "Tarvik Labs: a history"
date: 2024-01-23
url: https://example.org/tarvik-history
---

# Tarvik Labs: a history

Tarvik Labs began as a research project by Mirela Okonjo, an optical engineer from Velmora.
In 2019 Okonjo founded Tarvik Labs in Velmora with two colleagues. Okonjo led the company until 2023.
"""

NEWS = """---
title: "Tarvik Labs opens a second plant"
date: 2024-03-05
url: https://example.org/tarvik-plant
---

# Tarvik Labs opens a second plant

Tarvik Labs opened a second plant in Orlund on 4 March 2024. Mirela Okonjo said the plant would employ 80 people.
"""


@pytest.fixture(scope="module")
def tarvik(app_url):  # noqa: F811 - the app fixture, imported
    """The invented corpus, ingested with its graph into the app's collection."""
    from components.knowledge_base.factory import open_knowledge_base
    from ingest.ingestor import Ingestor

    ingestor = Ingestor(store=open_knowledge_base(collection=COLLECTION))  # with the graph of that collection
    for name, text in (("tarvik-history.md", HISTORY), ("tarvik-plant.md", NEWS)):
        report = ingestor.ingest_bytes(text.encode(), name)
        assert report.chunks_written > 0
    return app_url


def _find(page, name: str) -> None:  # noqa: ANN001 - Playwright's page
    box = page.get_by_label("Find an entity")
    box.fill(name)
    box.press("Enter")
    page.get_by_role("heading", name=name, exact=True).wait_for()


def test_entities_page_shows_kinds_merges_undated_facts_titles_and_certainty(tarvik, browser_page):  # noqa: F811
    page = browser_page
    page.goto(f"{tarvik}/entities")
    page.get_by_role("heading", name="Entities").wait_for()
    _find(page, "Mirela Okonjo")

    # The kind with its confidence, and the evidence it was decided from.
    kind = page.get_by_text(re.compile(r"Kind: person, confidence 0\.\d\d")).first
    kind.wait_for()
    page.get_by_text("Evidence:").first.wait_for()

    # The surname is merged into the full name, and the page says why.
    page.get_by_text(re.compile(r"Why these names are one entity")).first.click()
    page.get_by_text(re.compile(r"okonjo.*surname", re.IGNORECASE)).first.wait_for(state="visible")

    # A fact its sentence dates is drawn; the one only its document dates is listed as undated.
    page.locator("[data-testid='stVegaLiteChart'], [data-testid='stArrowVegaLiteChart']").first.wait_for()
    # (A drawn fact is numbered, "1. **2019** · title", which the page shows as an item of a numbered list.)
    drawn = page.locator("[data-testid='stMain'] li")
    drawn.filter(has_text=re.compile(r"^\s*2019 · Tarvik Labs: a history")).first.wait_for()
    page.get_by_text("undated, from a document of 2024-01-23").first.wait_for()
    assert drawn.filter(has_text=re.compile(r"^\s*2024-01-23")).count() == 0

    # Each fact names its document by title, linked to its address; never an internal id.
    link = page.get_by_role("link", name="Tarvik Labs: a history").first
    assert link.get_attribute("href") == "https://example.org/tarvik-history"
    assert "doc_" not in page.locator("[data-testid='stMain']").inner_text()

    # Every fact on the timeline carries its event-confidence badge (words, not a number).
    badges = page.get_by_text(re.compile(r"^(sure event|likely event|less certain)$"))
    badges.first.wait_for()
    assert badges.count() >= 2
    time.sleep(1.0)  # let the chart finish drawing before the picture
    page.screenshot(path=str(ARTIFACTS / "entities-okonjo.png"), full_page=True)

    # The company: its kind with a confidence, and the second plant dated by its sentence, from the other document.
    _find(page, "Tarvik Labs")
    page.get_by_text(re.compile(r"Kind: [a-z]+, confidence [01]\.\d\d")).first.wait_for()
    page.get_by_text(re.compile(r"2024-03-04")).first.wait_for()
    plant = page.get_by_role("link", name="Tarvik Labs opens a second plant").first
    assert plant.get_attribute("href") == "https://example.org/tarvik-plant"
    page.screenshot(path=str(ARTIFACTS / "entities-tarvik.png"), full_page=True)
