"""`TokenSplitter`: chunks that fit the embedding model's window, on sentence boundaries where possible."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from haystack import Document, component, default_from_dict, logging

from components.embedding import get_embedding_model
from components.ingestion.structure import ConvertedDocument, TextBuilder, paragraphs
from components.serialization import init_parameters_to_dict
from components.settings import DEFAULT_EMBEDDING_MODEL, Settings, default_setting, get_settings
from components.text.language import language_pipeline, sentence_spans

# The defaults are the CHUNK_TOKENS and CHUNK_OVERLAP_TOKENS settings' own (the ingestion service passes the values
# in force).
CHUNK_TOKENS: int = default_setting("chunk_tokens")
CHUNK_OVERLAP_TOKENS: int = default_setting("chunk_overlap_tokens")

logger = logging.getLogger(__name__)


@dataclass
class _Unit:
    """A sentence (or a piece of an over-long one) with its word-piece count and where each piece starts."""

    start: int
    end: int
    tokens: int
    page_number: int | None
    word_starts: list[tuple[int, int]]  # (token index, char offset) of each token that begins a word


@dataclass
class TextChunk:
    """One chunk: `text` is exactly `document.text[char_start:char_end]`."""

    text: str
    chunk_index: int
    char_start: int
    char_end: int
    token_count: int
    page_number: int | None = None
    page_end: int | None = None
    section_title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # The sentences (or pieces of over-long ones) the chunk was packed from, as offsets in `text`.
    sentence_spans: list[tuple[int, int]] = field(default_factory=list)


@component
class TokenSplitter:
    """Splits converted documents into chunks of at most `chunk_tokens` word pieces of the embedding model.

    Sentences (spaCy's, from the product's one language analysis: the parse is cached, so the graph extractor
    reads the same Doc) are packed whole; a sentence longer than the window is cut between words. Neighbouring
    chunks share up to `overlap_tokens` word pieces (whole trailing sentences where they fit). Chunks never cross a
    heading, so each keeps its `section_title`, its first and last `page_number` and its character offsets. Each
    sentence is tokenised once, with the model's own fast tokenizer.

    Usage:
    ```python
    splitter = TokenSplitter(chunk_tokens=200, overlap_tokens=32)
    splitter.warm_up()
    chunks = splitter.run(documents=[Document(content=long_text)])["documents"]
    ```
    """

    def __init__(
        self,
        chunk_tokens: int = CHUNK_TOKENS,
        overlap_tokens: int = CHUNK_OVERLAP_TOKENS,
        model: str = DEFAULT_EMBEDDING_MODEL,
    ) -> None:
        if not isinstance(chunk_tokens, int) or chunk_tokens < 8:
            raise ValueError(f"chunk_tokens must be an integer of at least 8, not {chunk_tokens!r}")
        if not isinstance(overlap_tokens, int) or not 0 <= overlap_tokens <= chunk_tokens // 2:
            raise ValueError(f"overlap_tokens must be between 0 and half of chunk_tokens, not {overlap_tokens!r}")
        if not model:
            raise ValueError("model must name the embedding model whose tokenizer decides the chunk sizes")
        self.chunk_tokens = chunk_tokens
        self.overlap_tokens = overlap_tokens
        self.model = model
        self._tokenizer: Any = None
        self._limit = chunk_tokens

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> TokenSplitter:
        """The splitter ingestion uses: the settings' `CHUNK_TOKENS`, `CHUNK_OVERLAP_TOKENS` (at most half a chunk)
        and embedding model (whose tokenizer counts the word pieces), of `settings` (None: the process's)."""
        settings = settings or get_settings()
        overlap = min(settings.chunk_overlap_tokens, settings.chunk_tokens // 2)
        return cls(settings.chunk_tokens, overlap, settings.embedding_model)

    def warm_up(self) -> None:
        """Load the tokenizer and the sentence parser (both shared process-wide) and fit the limit to the window."""
        if self._tokenizer is None:
            embedding_model = get_embedding_model(self.model)
            language_pipeline()  # the sentence parser `sentence_spans` uses
            self._tokenizer = embedding_model.tokenizer
            # [CLS] and [SEP] take two places of the window.
            self._limit = min(self.chunk_tokens, embedding_model.max_tokens - 2)

    @property
    def limit(self) -> int:
        """The most word pieces a chunk holds (after `warm_up`)."""
        return self._limit

    def split(self, document: ConvertedDocument) -> list[TextChunk]:
        """The chunks of a converted document, in order, with `document_total_chunks` in their metadata."""
        self.warm_up()
        text = document.text
        groups: list[tuple[tuple[int, str | None], int | None, tuple[int, int], bool]] = []
        for block in document.blocks:
            for start, end in sentence_spans(text[block.start : block.end]):
                key = (block.section_index, block.section_title)
                groups.append((key, block.page_number, (block.start + start, block.start + end), block.is_heading))
        if not groups:
            return []
        encoded = self._tokenizer(
            [text[s:e] for _, _, (s, e), _ in groups],
            add_special_tokens=False,
            return_offsets_mapping=True,
            verbose=False,  # over-long sentences are expected here: they are cut below
        )
        chunks: list[TextChunk] = []
        current_key = groups[0][0]
        units: list[_Unit] = []
        only_headings = True
        for position, (key, page, (s, _e), is_heading) in enumerate(groups):
            if key != current_key:
                # A heading with no text of its own (a title right above a subheading) joins the next section.
                if not only_headings:
                    self._pack(units, text, current_key[1], chunks)
                    units, only_headings = [], True
                current_key = key
            units.extend(self._units(encoded["input_ids"][position], encoded["offset_mapping"][position], s, page))
            only_headings = only_headings and is_heading
        self._pack(units, text, current_key[1], chunks)
        for chunk in chunks:
            chunk.metadata["document_total_chunks"] = len(chunks)
        return chunks

    def _units(self, ids: list[int], offsets: list[tuple[int, int]], base: int, page: int | None) -> list[_Unit]:
        tokens = self._tokenizer.convert_ids_to_tokens(ids)
        word_starts = [(i, base + offsets[i][0]) for i, token in enumerate(tokens) if not token.startswith("##")]
        if not ids:
            return []
        if len(ids) <= self._limit:
            return [_Unit(base + offsets[0][0], base + offsets[-1][1], len(ids), page, word_starts)]
        # An over-long sentence: cut between words into pieces that leave room for the overlap before them.
        piece = max(1, self._limit - self.overlap_tokens)
        units: list[_Unit] = []
        first = 0
        while first < len(ids):
            last = min(first + piece, len(ids))
            if last < len(ids):
                cut = max((i for i, _ in word_starts if first < i <= last), default=last)
                last = cut
            starts = [(i - first, c) for i, c in word_starts if first <= i < last]
            units.append(_Unit(base + offsets[first][0], base + offsets[last - 1][1], last - first, page, starts))
            first = last
        return units

    def _pack(self, units: list[_Unit], text: str, section_title: str | None, chunks: list[TextChunk]) -> None:
        current: list[_Unit] = []
        fresh = 0  # units in `current` that are not overlap from the previous chunk
        for unit in units:
            if current and sum(u.tokens for u in current) + unit.tokens > self._limit:
                chunks.append(self._chunk(current, text, section_title, len(chunks)))
                current = self._overlap(current, self._limit - unit.tokens)
                fresh = 0
            current.append(unit)
            fresh += 1
        if fresh:
            chunks.append(self._chunk(current, text, section_title, len(chunks)))

    def _overlap(self, previous: list[_Unit], room: int) -> list[_Unit]:
        budget = min(self.overlap_tokens, room)
        if budget <= 0:
            return []
        tail: list[_Unit] = []
        for unit in reversed(previous):
            if sum(u.tokens for u in tail) + unit.tokens > budget:
                break
            tail.insert(0, unit)
        if tail:
            return tail
        # No whole sentence fits: share the last words of the last sentence instead.
        last = previous[-1]
        candidates = [(i, c) for i, c in last.word_starts if last.tokens - i <= budget]
        if not candidates:
            return []
        index, char = candidates[0]
        kept = [(i - index, c) for i, c in last.word_starts if i >= index]
        return [_Unit(char, last.end, last.tokens - index, last.page_number, kept)]

    def _chunk(self, units: list[_Unit], text: str, section_title: str | None, index: int) -> TextChunk:
        start, end = units[0].start, units[-1].end
        return TextChunk(
            text=text[start:end],
            chunk_index=index,
            char_start=start,
            char_end=end,
            token_count=sum(u.tokens for u in units),
            page_number=units[0].page_number,
            page_end=units[-1].page_number,
            section_title=section_title,
            sentence_spans=[(unit.start - start, unit.end - start) for unit in units],
        )

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        """Split plain-text documents (pages separated by form feeds, paragraphs by blank lines).

        :returns: `documents`: the chunks, each with the source document's meta plus `source_id`, `chunk_index`,
            `document_total_chunks`, `page_number`, `section_title`, `char_start`/`char_end` (offsets in the
            cleaned text) and `token_count`.
        """
        out: list[Document] = []
        for document in documents:
            if not document.content or not document.content.strip():
                logger.warning("Skipping document {document_id}: it has no text", document_id=document.id)
                continue
            pages = document.content.split("\f")
            builder = TextBuilder()
            for page_number, page in enumerate(pages, start=1):
                for paragraph in paragraphs(page):
                    builder.paragraph(paragraph, page_number if len(pages) > 1 else None)
            for chunk in self.split(builder.build("txt")):
                meta = {
                    **document.meta,
                    "source_id": document.id,
                    "chunk_index": chunk.chunk_index,
                    "document_total_chunks": chunk.metadata["document_total_chunks"],
                    "page_number": chunk.page_number,
                    "section_title": chunk.section_title,
                    "char_start": chunk.char_start,
                    "char_end": chunk.char_end,
                    "token_count": chunk.token_count,
                }
                out.append(Document(content=chunk.text, meta=meta))
        return {"documents": out}

    def to_dict(self) -> dict[str, Any]:
        return init_parameters_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenSplitter:
        return default_from_dict(cls, data)
