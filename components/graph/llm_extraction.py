"""`LLMGraphExtractor`: entities and dated facts read by an OpenAI-compatible chat model, behind the same
`GraphExtractor` interface as the offline rules.

The document's sentences (from the same spaCy analysis as the offline extractor, so facts keep their sentence
and chunk) are sent in numbered batches; the model answers JSON naming each sentence's entities and dates. Names
are normalised like the offline extractor's; a sentence the model gives no date is dated by `components.graph.dates`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from components.graph.dates import FuzzyDate, find_dates, sentence_validity
from components.graph.extraction import ChunkLocator, GraphExtractor
from components.graph.layout import read_document
from components.graph.model import ENTITY_KINDS, DocumentGraph, EntityMention, Fact, normalise_name
from components.resilience.transport import capped_client_kwargs
from components.settings import default_setting
from components.text.dates import iso_date
from components.validation import positive, within

UPSTREAM_MAX_BYTES: int = default_setting("upstream_max_bytes")

_INSTRUCTIONS = (
    "You extract a knowledge graph from numbered sentences of one document dated {date}. Answer with JSON only: "
    '{{"entities": [{{"name": str, "kind": one of ' + " | ".join(ENTITY_KINDS) + ', "aliases": [str]}}], '
    '"facts": [{{"sentence": int, "entities": [entity names], "valid_at": "YYYY" | "YYYY-MM" | "YYYY-MM-DD" | null, '
    '"invalid_at": same or null}}]}}. '
    "Give a fact for every sentence that states something about a named entity; resolve pronouns and relative "
    'dates ("last March", "on Tuesday") against the document date; invalid_at only when the text says the '
    "fact ended."
)


class LLMGraphExtractor(GraphExtractor):
    """Extraction by a chat model on an OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp).

    Usage:
    ```python
    extractor = LLMGraphExtractor(model="llama3.1", api_base_url="http://127.0.0.1:11434/v1")
    graph = extractor.extract(document_record, chunk_records)
    ```
    """

    name = "llm"

    def __init__(
        self,
        model: str,
        api_base_url: str | None = None,
        batch_sentences: int = 40,
        timeout_s: float = 60.0,
        api_key_env: str = "OPENAI_API_KEY",
        kind_confidence: float = 0.7,
        max_response_bytes: int = UPSTREAM_MAX_BYTES,
    ) -> None:
        """`kind_confidence` is the confidence stored with a kind the chat model names (not "other"): across
        documents the most confident kind of an entity stays, so the default 0.7 lets a named kind replace an offline
        kind the fitted model gave less than that (its "other" included), and not a surer one."""
        if not model:
            raise ValueError("model must name the chat model")
        within("batch_sentences", batch_sentences, 1, 200)
        positive("timeout_s", timeout_s)
        self.model = model
        self.api_base_url = api_base_url
        self.batch_sentences = batch_sentences
        self.timeout_s = timeout_s
        self.api_key_env = api_key_env
        self.kind_confidence = within("kind_confidence", kind_confidence, 0.0, 1.0)
        self.max_response_bytes = max_response_bytes
        self._generator: Any = None

    @classmethod
    def from_settings(cls, settings: Any) -> LLMGraphExtractor:
        if not settings.openai_base_url and settings.openai_api_key is None:
            raise ValueError(
                "GRAPH_EXTRACTOR is llm but no chat model is configured (OPENAI_BASE_URL / OPENAI_API_KEY)"
            )
        return cls(
            model=settings.openai_model,
            api_base_url=settings.openai_base_url,
            max_response_bytes=settings.upstream_max_bytes,
        )

    def _chat(self, prompt: str, sentences: str) -> str:
        if self._generator is None:
            from haystack.components.generators.chat import OpenAIChatGenerator
            from haystack.utils import Secret

            # Local servers need no key; the client still wants one, so a placeholder stands in (given to this
            # client only: the process's environment is not changed). This generator is never serialised.
            api_key = Secret.from_env_var(self.api_key_env, strict=False)
            if api_key.resolve_value() is None:
                api_key = Secret.from_token("not-needed")
            self._generator = OpenAIChatGenerator(
                api_key=api_key,
                model=self.model,
                api_base_url=self.api_base_url,
                timeout=self.timeout_s,
                max_retries=1,
                generation_kwargs={"temperature": 0},
                http_client_kwargs=capped_client_kwargs(self.max_response_bytes, "the chat model"),
            )
        from haystack.dataclasses import ChatMessage

        reply = self._generator.run(messages=[ChatMessage.from_system(prompt), ChatMessage.from_user(sentences)])
        return reply["replies"][0].text or ""

    @staticmethod
    def _parse(text: str) -> dict[str, Any]:
        match = re.search(r"\{.*\}", text, re.S)
        if not match:
            raise ValueError("the chat model did not answer with JSON")
        return json.loads(match.group())  # from "{" to "}": an object when it is JSON at all

    @staticmethod
    def _date(value: Any) -> FuzzyDate | None:
        found = iso_date(value) if isinstance(value, str) else None
        return FuzzyDate(*found) if found else None

    def extract(
        self, document: Any, chunks: list[Any], known_names: Callable[[set[str]], set[str]] | None = None
    ) -> DocumentGraph:
        document_id, sentences, title, anchor = read_document(document, chunks)
        # The last date stated before each sentence, for "two years later" when the model gives no date.
        previous: list[FuzzyDate | None] = []
        last: FuzzyDate | None = None
        for sentence in sentences:
            previous.append(last)
            stated = [m.date for m in find_dates(sentence.span, anchor, last) if not m.relative]
            last = stated[-1] if stated else last
        prompt = _INSTRUCTIONS.format(date=anchor.isoformat() if anchor else "unknown")
        mentions: dict[str, EntityMention] = {}
        facts: list[Fact] = []
        locate = ChunkLocator(chunks)
        for begin in range(0, len(sentences), self.batch_sentences):
            batch = sentences[begin : begin + self.batch_sentences]
            numbered = "\n".join(f"{begin + i}: {sentence.text}" for i, sentence in enumerate(batch))
            data = self._parse(self._chat(prompt, numbered))
            for item in data.get("entities") or []:
                if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                    continue
                key = normalise_name(item["name"])
                if not key:
                    continue
                kind = item.get("kind") if item.get("kind") in ENTITY_KINDS else "other"
                named = kind != "other"
                mention = mentions.setdefault(
                    key,
                    EntityMention(
                        key=key,
                        name=item["name"].strip(),
                        kind=kind,
                        confidence=self.kind_confidence if named else 0.0,
                        evidence="kind named by the chat model" if named else "",
                    ),
                )
                aliases = {normalise_name(alias) for alias in item.get("aliases") or [] if isinstance(alias, str)}
                mention.aliases |= aliases - {"", key}
            alias_to_key = {alias: m.key for m in mentions.values() for alias in m.aliases}
            for item in data.get("facts") or []:
                if not isinstance(item, dict) or not isinstance(item.get("sentence"), int):
                    continue
                index = item["sentence"]
                if not begin <= index < begin + len(batch):
                    continue
                keys = []
                for name in item.get("entities") or []:
                    key = normalise_name(str(name))
                    key = alias_to_key.get(key, key)
                    if key and key not in keys:
                        keys.append(key)
                        mentions.setdefault(key, EntityMention(key=key, name=str(name).strip()))
                if not keys:
                    continue
                sentence = sentences[index]
                valid, invalid = self._date(item.get("valid_at")), self._date(item.get("invalid_at"))
                method = "llm"
                if valid is None:
                    valid, rule_invalid, method, _ = sentence_validity(sentence.span, anchor, previous[index])
                    invalid = invalid or rule_invalid
                chunk = locate.find(sentence.offset, sentence.text)
                names = [mentions[k].name for k in keys]
                when = (valid, invalid, method)
                facts.append(
                    Fact.of_sentence(
                        document, index, sentence.text, chunk, keys, names, when, title=title, anchor=anchor
                    )
                )
        used = {key for fact in facts for key in fact.entity_keys}
        return DocumentGraph(document_id, [m for k, m in mentions.items() if k in used], facts)
