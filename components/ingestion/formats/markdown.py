"""Markdown (and Markdown from web scrapers): YAML front matter, headings as sections, inline syntax removed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import yaml

from components.ingestion.formats.common import ConversionError, decode_text, json_safe, title_from_filename
from components.ingestion.structure import ConvertedDocument, TextBuilder
from components.text.dates import parse_date

if TYPE_CHECKING:
    from components.ingestion.limits import IngestLimits

_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s+")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_INLINE = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images -> alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links -> their text
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),  # reference links
    (re.compile(r"<[^>]+>"), ""),  # inline HTML tags
    (re.compile(r"`([^`]*)`"), r"\1"),
    (re.compile(r"(\*\*|__)(.+?)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w_])"), r"\1"),
]
_URL_KEYS = ("url", "source_url", "source", "link", "canonical_url")
_DATE_KEYS = ("date", "published", "published_at", "created", "updated")


def strip_inline(text: str) -> str:
    """Markdown inline syntax removed, keeping the words."""
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return text


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML front matter (a mapping, or empty) and the rest of the text."""
    if not text.startswith("---"):
        return {}, text
    match = re.match(r"^---[ \t]*\n(.*?)\n(---|\.\.\.)[ \t]*(\n|$)", text, re.DOTALL)
    if not match:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        where = f" near line {line + 2}" if line is not None else ""
        raise ConversionError(f"its YAML front matter is not valid{where}.") from exc
    return (data if isinstance(data, dict) else {}), text[match.end() :]


def convert_markdown(data: bytes, filename: str, limits: IngestLimits | None = None) -> ConvertedDocument:
    """Convert a Markdown file."""
    front, body = split_front_matter(decode_text(data).replace("\r\n", "\n"))
    builder = TextBuilder(limits)
    first_h1: str | None = None
    buffer: list[str] = []
    in_code = False

    def flush() -> None:
        if buffer:
            builder.paragraph(strip_inline(" ".join(buffer)) if not in_code else "\n".join(buffer))
            buffer.clear()

    lines = body.split("\n")
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            flush()
            in_code = not in_code
            continue
        if in_code:
            buffer.append(line)
            continue
        heading = _ATX.match(line)
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if heading is None and line.strip() and not buffer and _SETEXT.match(following) and not _RULE.match(line):
            level = 1 if following.strip().startswith("=") else 2
            heading_text = line.strip()
        elif heading is not None:
            level, heading_text = len(heading.group(1)), heading.group(2)
        else:
            level, heading_text = 0, ""
        if level:
            flush()
            title = strip_inline(heading_text)
            if level == 1 and first_h1 is None:
                first_h1 = title
            builder.heading(title)
            continue
        if _SETEXT.match(line) and i > 0 and builder.blocks and builder.blocks[-1].is_heading and not buffer:
            continue  # the underline of a setext heading
        if not line.strip() or _RULE.match(line) or _REFERENCE.match(line):
            flush()
            continue
        if _LIST_ITEM.match(line):
            flush()
            line = _LIST_ITEM.sub("", line)
        buffer.append(re.sub(r"^\s*>\s?", "", line))
    flush()

    title = str(front.get("title") or "").strip() or first_h1 or title_from_filename(filename)
    date = next((parse_date(front[k]) for k in _DATE_KEYS if front.get(k)), None)
    url = next((str(front[k]) for k in _URL_KEYS if str(front.get(k, "")).startswith(("http://", "https://"))), None)
    extra = {k: v for k, v in front.items() if k not in ("title", *_DATE_KEYS, *_URL_KEYS)}
    return builder.build("md", title=title, date=date, url=url, metadata=json_safe(extra))
