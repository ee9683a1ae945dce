"""Splitting fetched text (page Markdown, paper full text) into chunks that fit the embedding model's window.

Paragraphs are packed together up to `max_tokens` word pieces; a heading stays with the paragraph after it; a
paragraph too long for one chunk is cut at sentence ends, and a sentence too long at word boundaries. Query terms
pick the chunks worth embedding when a page is long, so a search never embeds a whole site.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from components.text.analyzer import STOP_WORDS, sentence_spans

_WORD = re.compile(r"[a-z0-9]+")
_MARKDOWN_NOISE = re.compile(r"!\[[^\]]*\]\([^)]*\)")  # images carry no text worth citing


def query_terms(text: str) -> list[str]:
    """The content words of `text`, lower case, stopwords and one-letter words removed, in order, unique."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if len(word) > 1 and word not in STOP_WORDS:
            seen.setdefault(word, None)
    return list(seen)


def clean_markdown(text: str) -> str:
    """Markdown without images, link targets or runs of blank lines; the words a reader sees."""
    text = _MARKDOWN_NOISE.sub("", text)
    text = re.sub(r"\[([^\]]*)\]\((?:[^()]|\([^)]*\))*\)", r"\1", text)  # [label](target) -> label
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def split_sections(text: str) -> list[tuple[str | None, str]]:
    """(heading, body) pairs of Markdown, in order; the body is the text under the heading, without it."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        match = _HEADING.match(line)
        if match:
            sections.append((match.group(2).strip() or None, []))
        else:
            sections[-1][1].append(line)
    out = []
    for title, lines in sections:
        body = "\n".join(lines).strip()
        if body:
            out.append((title, body))
    return out


def _pieces(paragraph: str, max_tokens: int, count: Callable[[str], int]) -> list[str]:
    if count(paragraph) <= max_tokens:
        return [paragraph]
    out: list[str] = []
    for start, end in sentence_spans(paragraph):
        sentence = paragraph[start:end]
        if count(sentence) <= max_tokens:
            out.append(sentence)
            continue
        words = sentence.split()
        current: list[str] = []
        for word in words:
            current.append(word)
            if count(" ".join(current)) > max_tokens and len(current) > 1:
                current.pop()
                out.append(" ".join(current))
                current = [word]
        if current:
            out.append(" ".join(current))
    return out


def split_text(text: str, max_tokens: int, count_tokens: Callable[[str], int]) -> list[str]:
    """Chunks of `text` of at most `max_tokens` word pieces (as `count_tokens` counts them), in reading order."""
    if max_tokens < 8:
        raise ValueError("max_tokens must be at least 8")
    blocks = [block.strip() for block in re.split(r"\n\s*\n", text) if block.strip()]
    chunks: list[str] = []
    current: list[str] = []
    current_tokens = 0
    for block in blocks:
        for piece in _pieces(block, max_tokens, count_tokens):
            tokens = count_tokens(piece)
            if current and current_tokens + tokens > max_tokens:
                carried: list[str] = []
                # A heading belongs with the text under it, not at the end of the previous chunk.
                if current[-1].lstrip().startswith("#") and count_tokens(current[-1]) + tokens <= max_tokens:
                    carried = [current.pop()]
                if current:
                    chunks.append("\n\n".join(current))
                current = carried
                current_tokens = sum(count_tokens(item) for item in current)
            current.append(piece)
            current_tokens += tokens
    if current:
        chunks.append("\n\n".join(current))
    # A chunk that is only a heading says nothing a reader can cite.
    return [chunk for chunk in chunks if not re.fullmatch(r"(#+[^\n]*\n*)+", chunk)]


def pick_chunks(chunks: list[str], terms: list[str], limit: int) -> list[int]:
    """Indexes of the `limit` chunks that mention the query terms most (ties: earlier first), in reading order."""
    if len(chunks) <= limit:
        return list(range(len(chunks)))
    wanted = set(terms)

    def overlap(index: int) -> tuple[int, int, int]:
        words = _WORD.findall(chunks[index].lower())
        return (len(wanted.intersection(words)), sum(1 for word in words if word in wanted), -index)

    best = sorted(range(len(chunks)), key=overlap, reverse=True)[:limit]
    return sorted(best)
