"""The Ask page as a conversation, in a real headless Chromium: ask, follow up, see "Answered as", undo; a
disagreement between documents marked on the Ask page and on the entity's timeline."""

from __future__ import annotations

import time

import pytest

from tests.app.test_browser import ARTIFACTS, COLLECTION, app_url, ask, browser_page, pytestmark  # noqa: F401

DOCUMENTS = {
    "zorvan-profile.txt": "Zorvan Systems profile\n\nZorvan Systems, a sensor maker, was founded in 2016 in Corvane. "
    "Tomas Hale leads Zorvan Systems from its Corvane office.",
    "zorvan-filing.txt": "Zorvan Systems filing\n\nAccording to an old filing, Zorvan Systems was founded in 2015 by "
    "a group of engineers.",
}


@pytest.fixture(scope="module")
def zorvan(app_url):  # noqa: F811 - the app fixture, imported
    from components.knowledge_base.factory import open_knowledge_base
    from ingest.ingestor import Ingestor

    ingestor = Ingestor(store=open_knowledge_base(collection=COLLECTION))  # with the graph of that collection
    for name, text in DOCUMENTS.items():
        ingestor.ingest_bytes(text.encode(), name)
    return app_url


def test_follow_up_answered_as_and_undone_and_a_disagreement_marked(zorvan, browser_page):  # noqa: F811
    page = ask(browser_page, zorvan, "When was Zorvan Systems founded?")
    page.get_by_text("Sources disagree on", exact=False).first.wait_for()
    assert page.get_by_text("2015", exact=False).count() and page.get_by_text("2016", exact=False).count()
    page.screenshot(path=str(ARTIFACTS / "conflict.png"), full_page=True)

    page.get_by_label("Question", exact=True).fill("Who leads it?")
    page.get_by_role("button", name="Ask", exact=True).click()
    page.get_by_text("Answered as:", exact=False).first.wait_for()
    assert page.get_by_text("Who leads Zorvan Systems?", exact=False).count() >= 1
    page.get_by_text("Tomas Hale", exact=False).first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "answered-as.png"), full_page=True)

    page.get_by_role("button", name="Ask “Who leads it?” as typed").click()
    page.get_by_text("Answered as:", exact=False).first.wait_for(state="detached")
    page.get_by_role("button", name="Ask “Who leads it?” as typed").wait_for(state="detached")
    page.get_by_role("heading", name="Evidence").first.wait_for()
    page.get_by_role("heading", name="Who leads it?").first.wait_for()

    page.get_by_role("link", name="Entities").click()
    page.get_by_label("Find an entity").fill("Zorvan Systems")
    page.get_by_label("Find an entity").press("Enter")
    page.get_by_role("heading", name="Zorvan Systems").wait_for()
    page.get_by_text("Sources disagree on the date it was founded", exact=False).first.wait_for()
    # Each disputed fact on the timeline carries the mark (the page draws them after the warning: wait for both).
    page.get_by_text("sources disagree", exact=True).nth(1).wait_for()
    time.sleep(1.0)
    page.screenshot(path=str(ARTIFACTS / "timeline-conflict.png"), full_page=True)
