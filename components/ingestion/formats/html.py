"""HTML pages: the main content's headings as sections, boilerplate (scripts, navigation, footers) dropped,
title, date and canonical URL from the page's own metadata."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bs4 import BeautifulSoup, Comment, Doctype, NavigableString, Tag

from components.ingestion.formats.common import ConversionError, title_from_filename
from components.ingestion.structure import ConvertedDocument, TextBuilder
from components.text.dates import parse_date

if TYPE_CHECKING:
    from components.ingestion.limits import IngestLimits

# Elements that are never content; headings become sections; block elements end a paragraph.
_DROP = tuple("script style noscript template svg canvas nav aside footer form iframe button select head".split())
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCKS = frozenset(
    "p div section article main li ul ol dl dt dd table thead tbody tr pre blockquote figure figcaption header "
    "address details summary hr td th caption".split()
)
# The page metadata that may date it, most specific first.
_DATE_META = tuple(
    "article:published_time og:published_time datepublished date dc.date dc.date.issued dcterms.created pubdate "
    "publish-date publication_date citation_publication_date article:modified_time".split()
)


def _meta(soup: BeautifulSoup, *keys: str) -> str | None:
    for key in keys:
        for attribute in ("property", "name", "itemprop"):
            tag = soup.find("meta", attrs={attribute: lambda value, k=key: value and value.lower() == k})
            if isinstance(tag, Tag) and tag.get("content"):
                return str(tag["content"]).strip()
    return None


def convert_html(data: bytes, filename: str, limits: IngestLimits | None = None) -> ConvertedDocument:
    """Convert an HTML page (with `limits`: its elements counted first, its extraction under a deadline)."""
    deadline = limits.deadline() if limits is not None else None
    if limits is not None and deadline is not None:
        limits.check_html_elements(data, deadline)
    try:
        soup = BeautifulSoup(data, "lxml")
    except Exception as exc:  # noqa: BLE001 - lxml raises several parser errors
        raise ConversionError(f"it could not be parsed as HTML ({exc}).") from exc
    if soup.find() is None:
        raise ConversionError("it contains no HTML elements.")

    title_tag = soup.find("title")
    title = _meta(soup, "og:title") or (title_tag.get_text(" ", strip=True) if title_tag else "")
    date_text = _meta(soup, *_DATE_META)
    if not date_text:
        time_tag = soup.find("time", attrs={"datetime": True})
        date_text = str(time_tag["datetime"]) if isinstance(time_tag, Tag) else None
    canonical = soup.find("link", rel=lambda value: value and "canonical" in value)
    url = (str(canonical["href"]) if isinstance(canonical, Tag) and canonical.get("href") else None) or _meta(
        soup, "og:url"
    )
    description = _meta(soup, "description", "og:description")
    author = _meta(soup, "author", "article:author")

    for tag in soup.find_all(_DROP):
        tag.decompose()
    for tag in soup.find_all("header"):
        if tag.find("h1") is None:  # a site banner, not the article's own header
            tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.find("body") or soup

    builder = TextBuilder(limits, deadline)
    buffer: list[str] = []
    first_h1: list[str] = []

    def flush() -> None:
        if buffer:
            builder.paragraph("".join(buffer))
            buffer.clear()

    def walk(element: Tag) -> None:
        for child in element.children:
            if isinstance(child, (Comment, Doctype)):
                continue
            if isinstance(child, NavigableString):
                buffer.append(str(child))
            elif isinstance(child, Tag):
                if child.name == "br":
                    buffer.append("\n")  # a line break inside a paragraph, not a new paragraph
                elif child.name in _HEADINGS:
                    flush()
                    heading = child.get_text(" ", strip=True)
                    if child.name == "h1" and not first_h1:
                        first_h1.append(heading)
                    builder.heading(heading)
                elif child.name in _BLOCKS:
                    flush()
                    walk(child)
                    flush()
                else:
                    walk(child)

    walk(root)
    flush()
    metadata = {k: v for k, v in (("description", description), ("author", author)) if v}
    return builder.build(
        "html",
        title=title or (first_h1[0] if first_h1 else "") or title_from_filename(filename),
        date=parse_date(date_text),
        url=url if url and url.startswith(("http://", "https://")) else None,
        metadata=metadata,
    )
