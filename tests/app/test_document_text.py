"""`app.document_text`: document text is shown as written on every page, never rendered as Markdown or HTML."""

from __future__ import annotations

from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from app.document_text import plain, text_html

HOSTILE = (
    "See ![a pixel](http://127.0.0.1:9/p.png) and [a link](http://127.0.0.1:9/x) <img src=x onerror=alert(1)> "
    ":red[alarm] **bold** `code` $x^2$ # not a heading | a | b |\n- not a list & 'quotes' \"too\" \\ back"
)


def _rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").enable("strikethrough").render(markdown)


class TestPlain:
    def test_markdown_renders_the_text_as_written_and_nothing_else(self):
        html = _rendered(plain(HOSTILE)).replace("\u2060", "")  # the word joiner that keeps URLs from linking
        assert "<img" not in html and "<a " not in html and "<strong>" not in html and "<code>" not in html
        assert "<h1>" not in html and "<table>" not in html and "<li>" not in html
        assert "![a pixel](http://127.0.0.1:9/p.png)" in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html

    def test_urls_and_addresses_are_kept_from_becoming_links(self):
        shown = plain("see https://example.org/a, www.example.org and ana@example.org")
        assert "https\\:\u2060//" in shown and "www\u2060\\." in shown and "ana@\u2060example" in shown

    def test_empty_and_none(self):
        assert plain(None) == "" and plain("  ") == ""


class TestTextHtml:
    def test_escapes_everything_and_marks_highlights(self):
        body = text_html(HOSTILE, highlights=["and [a link](http://127.0.0.1:9/x)", "tiny"])
        assert "<img" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body
        assert "<mark>and [a link](http://127.0.0.1:9/x)</mark>" in body
        assert body.count("<mark>") == 1  # too short to highlight: "tiny"
        assert body.startswith("<div") and "white-space: pre-wrap" in body


def _page() -> None:
    import streamlit as st

    from app.document_text import plain, show_text

    text = "See ![a pixel](http://127.0.0.1:9/p.png) and [a link](http://127.0.0.1:9/x)."
    with st.expander(f"[1] {plain(text)}"):
        show_text(text)


def test_a_page_shows_document_text_through_html_not_markdown():
    at = AppTest.from_function(_page).run()
    assert not at.exception
    assert (
        at.expander[0].label
        == f"[1] {plain('See ![a pixel](http://127.0.0.1:9/p.png) and [a link](http://127.0.0.1:9/x).')}"
    )
    assert not [element for element in at.markdown if "pixel" in element.value]
    shown = [element for element in at.get("html") if "pixel" in element.proto.body]
    assert shown and "![a pixel](http://127.0.0.1:9/p.png)" in shown[0].proto.body
