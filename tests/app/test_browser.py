"""The app in a real headless Chromium: ask the demo corpus, open a citation, open entities' timelines.

Screenshots go to test-artifacts/browser/ (kept out of git). Runs when Debian's chromium and Playwright are
installed (`make test` installs both) and is skipped, saying so, otherwise.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.contract_servers import free_port
from tests.contract_servers.pages import PageServer

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts" / "browser"
COLLECTION = f"browser_{uuid.uuid4().hex[:8]}"  # the app's knowledge base; tests add documents to it

pytestmark = [
    pytest.mark.browser,
    pytest.mark.integration,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make test installs it)"
    ),
]


@pytest.fixture(scope="module")
def app_url(database_url):
    """The real app (streamlit run) on a free 127.0.0.1 port, on its own collection; stopped by its own pid."""
    port = free_port()
    env = dict(os.environ, KB_COLLECTION=COLLECTION, PYTHONUNBUFFERED="1")
    log = ARTIFACTS / "streamlit.log"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with log.open("w") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(ROOT / "app" / "main.py"),
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--server.headless",
                "true",
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail(f"the app did not start; see {log}")
        yield url
    finally:
        process.send_signal(signal.SIGTERM)  # streamlit exits cleanly, releasing its use of the database
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def browser_page():
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-quic",
            ],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(120_000)
        yield page
        browser.close()


def ask(page, app_url: str, question: str):  # noqa: ANN001, ANN201 - Playwright's page
    """Open the app's Ask page, ask `question`, and wait for the evidence."""
    page.goto(app_url)
    page.get_by_role("heading", name="Ask").wait_for()
    page.get_by_label("Question", exact=True).fill(question)
    page.get_by_role("button", name="Ask").click()
    page.get_by_role("heading", name="Evidence").wait_for()
    return page


def test_ask_open_a_citation_and_an_entity_timeline(app_url, browser_page):
    page = ask(browser_page, app_url, "When did pgvector add the HNSW index type?")
    page.get_by_text("Why it is here").first.wait_for()
    answer = page.locator("[data-testid='stMarkdownContainer']").filter(has_text="[1]").first
    assert "[1]" in answer.inner_text()
    page.screenshot(path=str(ARTIFACTS / "ask.png"), full_page=True)

    # Open a citation: its chunk panel opens, with the source's attribution.
    page.get_by_text("Open a citation").wait_for()
    pill = page.get_by_role("radiogroup", name="Open a citation").get_by_role("radio").last
    number = pill.inner_text().strip()  # e.g. "[2]"
    pill.click()
    panel = page.locator("[data-testid='stExpander']").filter(has_text=f"{number} ").first
    panel.get_by_text("Semantic relevance").wait_for(state="visible")
    panel.get_by_text("Why it is here").wait_for(state="visible")
    page.screenshot(path=str(ARTIFACTS / "citation.png"), full_page=True)

    # Open an entity's timeline from the Entities page.
    page.get_by_role("link", name="Entities").click()
    page.get_by_label("Find an entity").fill("PostgreSQL")
    page.get_by_label("Find an entity").press("Enter")
    page.get_by_role("heading", name="PostgreSQL").wait_for()
    page.locator("[data-testid='stVegaLiteChart'], [data-testid='stArrowVegaLiteChart']").first.wait_for()
    time.sleep(1.0)  # let the chart finish drawing before the picture
    page.screenshot(path=str(ARTIFACTS / "entity-timeline.png"), full_page=True)
    assert page.get_by_text("1996").count() + page.get_by_text("1986").count() > 0

    # Qdrant: an organisation or a product (never "other"), with the engine's 2020 start ("He started writing the
    # engine in Rust in 2020": "the engine" is Qdrant) and the company's 2021 founding on its timeline.
    page.get_by_label("Find an entity").fill("Qdrant")
    page.get_by_label("Find an entity").press("Enter")
    page.get_by_role("heading", name="Qdrant", exact=True).wait_for()
    kinds = page.get_by_text("Qdrant · organization").count() + page.get_by_text("Qdrant · product").count()
    assert kinds > 0
    page.get_by_text("He started writing the engine in Rust in 2020").first.wait_for()
    page.get_by_text("founded Qdrant Solutions GmbH").first.wait_for()
    time.sleep(1.0)
    page.screenshot(path=str(ARTIFACTS / "qdrant-timeline.png"), full_page=True)
    assert page.get_by_text("2020").count() > 0 and page.get_by_text("2021").count() > 0


@pytest.fixture()
def pixel_server():
    """A server on 127.0.0.1 that records every request: any request means the page loaded a URL a document names."""
    with PageServer() as server:
        yield server


def test_markdown_in_a_document_is_shown_as_text(app_url, browser_page, pixel_server):
    from components.knowledge_base.factory import open_knowledge_base
    from ingest.ingestor import Ingestor

    base = pixel_server.base_url
    text = (
        "Ferry terminal notes\n\n"
        f"The Lindqvist ferry terminal opened in October 2023 ![a tracking pixel]({base}/pixel.png) after a "
        f"[vote of the harbour board]({base}/board) in March 2021.\n\n"
        f'The harbour board paid for the Lindqvist terminal <img src="{base}/raw.png"> with a bond.'
    )
    store = open_knowledge_base(collection=COLLECTION)
    report = Ingestor(store=store, hooks=[]).ingest_bytes(text.encode(), "lindqvist-ferry.txt")
    assert report.added or report.replaced or report.skipped

    page = ask(browser_page, app_url, "When did the Lindqvist ferry terminal open?")
    # The Markdown is on the page as the characters the document holds, in the answer and in the evidence panel.
    page.get_by_text("![a tracking pixel](", exact=False).first.wait_for(state="visible")
    assert page.get_by_text("[vote of the harbour board](", exact=False).count() >= 1
    time.sleep(1.0)  # give any image the page might load time to be requested
    page.screenshot(path=str(ARTIFACTS / "markdown-as-text.png"), full_page=True)
    assert page.locator(f"img[src^='{base}']").count() == 0
    assert page.locator(f"a[href^='{base}']").count() == 0  # no link either, not even a bare URL made one
    assert pixel_server.requests == []


# Two demo questions whose short answers the packaged confidence rates on either side of its threshold.
SURE_QUESTION = "When did Neo Technology bring out the Cypher query language?"
UNSURE_QUESTION = "Who heads Qdrant Solutions as chief executive?"


def test_a_sure_and_an_unsure_short_answer_look_different(app_url, browser_page):
    page = ask(browser_page, app_url, SURE_QUESTION)
    page.get_by_text("Sure of the short answer").first.wait_for()
    page.get_by_role("heading", name="2011", exact=True).wait_for()  # the headline
    assert page.get_by_text("Not sure of the short answer").count() == 0
    page.screenshot(path=str(ARTIFACTS / "sure-answer.png"), full_page=True)

    page = ask(browser_page, app_url, UNSURE_QUESTION)
    warning = page.locator("[data-testid='stAlert']").filter(has_text="Not sure of the short answer")
    warning.first.wait_for()
    assert page.get_by_text("Sure of the short answer:").count() == 0
    assert page.get_by_role("heading", name="Vasnetsov and André Zayarni").count() == 0  # no headline
    page.screenshot(path=str(ARTIFACTS / "unsure-answer.png"), full_page=True)
