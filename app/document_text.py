"""Document text on every page is shown as text, never rendered.

A document may hold Markdown or HTML (`![x](http://tracker/pixel.png)`, links, `:red[...]` directives, LaTeX):
rendered, it would load images from any URL it names and restyle the page. Every page shows document text
(chunks, titles, facts, answers built from document sentences) through these two functions, and nothing else.

Usage:
```python
from app.document_text import plain, show_text

st.expander(f"[1] {plain(chunk.source_title)}")  # a label or a Markdown line: every Markdown character escaped
show_text(chunk.text, highlights=["the sentence the answer cites"])  # the text itself, line breaks kept
```
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import streamlit as st

# Every ASCII punctuation character Markdown (and Streamlit's directives, emoji and LaTeX) gives a meaning to.
_MARKDOWN_CHARACTERS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$=&\"'])")
# Streamlit turns bare URLs, www. names and e-mail addresses into links even when their punctuation is escaped; an
# invisible word joiner inside the pattern keeps them text.
_AUTOLINKS = re.compile(r"(?<=:)(?=//)|(?<=\bwww)(?=\.)|(?<=@)(?=\w)", re.IGNORECASE)
_WORD_JOINER = "\u2060"


def plain(text: str | None) -> str:
    """`text` for a Markdown string, a widget label or an expander label: shown as written, never rendered."""
    text = _AUTOLINKS.sub(_WORD_JOINER, " ".join(str(text or "").split()))
    return _MARKDOWN_CHARACTERS.sub(r"\\\1", text)


def text_html(text: str, highlights: Iterable[str] = ()) -> str:
    """The HTML that shows `text` as text (escaped, line breaks kept), with each of `highlights` marked."""
    body = html.escape(text)
    for sentence in highlights:
        escaped = html.escape(sentence.strip())
        if len(escaped) > 12 and escaped in body:
            body = body.replace(escaped, f"<mark>{escaped}</mark>")
    return f"<div class='document-text' style='white-space: pre-wrap'>{body}</div>"


def show_text(text: str, highlights: Iterable[str] = ()) -> None:
    """Show document text as text (no Markdown, no HTML of its own, no images), `highlights` marked."""
    st.html(text_html(text, highlights))
