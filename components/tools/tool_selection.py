"""The tool manager's choice: which registered tools a question (and the conversation before it) calls for, and why.

It generalises the `auto` source selection (`select_sources`) to tools: the sources the question is worth asking
bring their research tools (the knowledge base its searches, the graph its fact search, timeline and
relationships, ...), and the question's own words add the rest (document browsing, the calculator, workspace
files, a page to fetch, Wikipedia). Only tools in `available` (the profile's grants) are chosen; every tool gets
its reasons, chosen or not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from components.tools.registry import tool_names
from components.tools.source_selection import RELATIONS, matched_words, select_sources

_TIMELINE = re.compile(
    r"\b(when|timeline|chronolog\w*|history|happened|over time|since|until|before|after|dates?|years?|"
    r"(19|20)\d\d)\b",
    re.IGNORECASE,
)
_DOCUMENTS = re.compile(
    r"\b(documents?|files? in the (knowledge )?base|reports?|which sources|what sources|list|read( the)?|"
    r"summari[sz]e|papers? we have|our (notes|documents))\b",
    re.IGNORECASE,
)
_BOOKS = re.compile(r"\b(books?|chapters?|pages?|sections?|manual|handbook|textbook)\b", re.IGNORECASE)
_EXACT = re.compile(r"\"[^\"]+\"|\b\d[\d.,]*\b|\b[A-Z]{2,}[\w-]*\b")
_ARITHMETIC = re.compile(
    r"\d\s*[-+*/^]\s*\d|\d\s*%(\s*of)?\s*\d|\b(percent(age)?|how much is|sum of|average of|ratio of)\b"
)
_FILES = re.compile(r"\b(workspace|my (files?|notes|folder)|folder|directory|\w+\.(md|txt|csv|json))\b", re.I)
_WRITE = re.compile(
    r"\b(save|write|store) (it|this|that|the \w+|a \w+)?\s*(to|into|in|as) (a )?(file|\w+\.\w+)\b", re.I
)
_URL = re.compile(r"https?://\S+", re.IGNORECASE)
_DEFINE = re.compile(r"\b(who (is|was)|what (is|was|are) an? |wikipedia|define|definition of)\b", re.IGNORECASE)
_FOLLOW_UP = re.compile(r"\b(it|its|they|them|their|that|those|this|these|he|she|his|her|the same|more)\b", re.I)

# The research tools each source brings, the first always, the others when the question's words call for them.
SOURCE_TOOLS: dict[str, list[str]] = {
    "kb": ["rag_search", "hybrid_search", "list_documents", "get_document", "retrieve_book_content"],
    "graph": ["graph_search", "get_entity_timeline", "get_entity_relationships", "perform_comprehensive_search"],
    "web": ["firecrawl_search"],
    "arxiv": ["arxiv_search"],
    "memory": ["memory_recall"],
}


@dataclass
class ToolSelection:
    """The tools chosen for a question, with the reasons for each (and for what was left out)."""

    tools: list[str]
    reasons: dict[str, list[str]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def conversation_text(conversation: Iterable[Any] | None, turns: int = 4) -> str:
    """The last `turns` messages of a conversation (dicts with `content`, or Haystack `ChatMessage`s), as text."""
    texts: list[str] = []
    for message in list(conversation or [])[-turns:]:
        text = message.get("content") if isinstance(message, dict) else getattr(message, "text", None)
        if isinstance(text, str) and text.strip():
            texts.append(text.strip())
    return "\n".join(texts)


def select_tools(
    question: str,
    conversation: Iterable[Any] | None = None,
    available: Iterable[str] | None = None,
    known_entities: Callable[[str], list[str]] | None = None,
) -> ToolSelection:
    """Choose, from `available` tools (default: every registered one), those `question` calls for.

    `conversation` is the chat so far: a follow-up question ("and when did it happen?") borrows the earlier turns'
    words for the choice, and brings `memory_recall`. `known_entities(text)` names the graph's entities in a text
    (a failing lookup counts as none). Never raises on a bad lookup.
    """
    allowed = list(available) if available is not None else tool_names()
    text = (question or "").strip()
    if not text:
        return ToolSelection(tools=[], reasons={"*": ["the question is empty"]})
    history = conversation_text(conversation)
    follow_up = bool(history) and bool(_FOLLOW_UP.search(text))
    # A follow-up is read together with what came before it, so "when did it happen?" still finds its entity.
    context = f"{history}\n{text}" if follow_up else text
    sources = select_sources(context, known_entities=known_entities)
    chosen: list[str] = []
    reasons: dict[str, list[str]] = {}

    def choose(tool: str, reason: str) -> None:
        reasons.setdefault(tool, []).append(reason)
        if tool in allowed and tool not in chosen:
            chosen.append(tool)

    for source in sources.sources:
        why = "; ".join(sources.reasons.get(source, [])) or f"{source} selected"
        choose(SOURCE_TOOLS[source][0], f"source {source}: {why}")
    if "kb" in sources.sources:
        if exact := matched_words(_EXACT, text):
            choose("hybrid_search", "exact terms, names or numbers: " + ", ".join(exact[:6]))
        if documents := matched_words(_DOCUMENTS, text):
            choose("list_documents", "asks about the documents themselves: " + ", ".join(documents))
            choose("get_document", "a listed document may need reading in full")
        if books := matched_words(_BOOKS, text):
            choose("retrieve_book_content", "books, pages or sections: " + ", ".join(books))
    if matched_words(_TIMELINE, context) and sources.entities:
        choose("get_entity_timeline", "asks when about " + ", ".join(sources.entities[:3]))
    if (relations := matched_words(RELATIONS, context)) and sources.entities:
        choose("get_entity_relationships", "asks how entities relate: " + ", ".join(relations))
    if "graph" in sources.sources and "kb" in sources.sources:
        choose("perform_comprehensive_search", "both the documents and the graph know about it")
    if follow_up:
        choose("memory_recall", "follows up the conversation")
    if _ARITHMETIC.search(text):
        choose("calculator", "asks for a computation")
    if urls := _URL.findall(text):
        choose("fetch_page", "names a page: " + ", ".join(urls[:3]))
    if _FILES.search(text):
        choose("list_directory", "mentions the workspace's files")
        choose("read_file", "mentions the workspace's files")
    if _WRITE.search(text):
        choose("write_file", "asks to save a file")
    if _DEFINE.search(text):
        choose("wikipedia_summary", "asks what or who something is")
    for tool in allowed:
        if tool not in chosen:
            reasons.setdefault(tool, ["not selected: nothing in the question calls for it"])
    for tool, why in reasons.items():
        if tool not in allowed:
            why.append("not granted to this profile")
    return ToolSelection(tools=chosen, reasons=reasons, sources=sources.sources, entities=sources.entities)
