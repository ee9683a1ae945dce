"""The scale benchmark's corpus: real text from the public evaluation sets and the demo corpus, grown to any size.

Chunk i is the same in every run: the first chunks are the sets' own paragraphs (and the demo documents, cut at
sentence ends to at most `WORDS_PER_CHUNK` words), every further chunk recombines six real sentences drawn with a
seed of its own. So the 10,000-chunk base is the first 10,000 chunks of the 100,000-chunk base, and an embedding
cached for chunk i serves every size.

Embeddings are cached in shards of `SHARD` chunks under the data folder (`bench-scale/embeddings/`), written by a
forward pass with one torch thread, resumable: a run embeds the shards that are missing, up to the number asked
for. A chunk without a real embedding gets a *composed* vector, clearly labelled as such in every report: the
normalised mean of the in-context vectors its sentences had in the paragraphs they come from (a real forward pass
each, over the same tokens; mean pooling over a chunk is close to the mean of its sentences' means). Its sentence
vectors are those same in-context vectors.

The text is read from the sets at run time (`../shared/data` beside the repository, or `RESEARCH_EVAL_DATA`) and
never copied into the repository.
"""

from __future__ import annotations

import hashlib
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from components.embedding.model import EmbeddingModel
from components.settings import get_settings
from components.text.language import sentence_spans
from pipelines.evaluation.jsonl import load_jsonl

Out = Callable[[str], None]

SETS = ("squad_dev_a", "hotpotqa_dev40", "musique_dev40", "semeval2015_timeline_trial", "semeval2015_timeline_airbus")
WORDS_PER_CHUNK = 170  # the model reads 256 word pieces; about 170 words fit
SENTENCES_PER_RECOMBINED = 6
CHUNKS_PER_DOCUMENT = 10
SHARD = 250
DIMENSION = 384
RECIPE = "v1"  # change when the corpus recipe changes: cached embeddings of another recipe are not reused


def eval_data_dir() -> Path | None:
    """The public evaluation sets: `RESEARCH_EVAL_DATA`, else `../shared/data` beside the repository; None if absent."""
    configured = os.environ.get("RESEARCH_EVAL_DATA")
    root = Path(configured) if configured else Path(__file__).resolve().parents[2] / "shared" / "data"
    return root if root.is_dir() else None


@dataclass
class Source:
    """One original chunk: a paragraph of a set (or a demo document's piece), with its sentence spans."""

    title: str
    text: str
    spans: list[tuple[int, int]]


@dataclass
class Chunk:
    """Chunk `number` of the corpus: its document, text and sentence spans, and where its sentences come from
    (`(source, span index)` pairs; for an original chunk, its own)."""

    number: int
    document: int
    title: str
    text: str
    spans: list[tuple[int, int]]
    origin: list[tuple[int, int]]


def _pieces(title: str, text: str) -> Iterator[Source]:
    """`text` cut at sentence ends into pieces of at most `WORDS_PER_CHUNK` words (a longer sentence stands alone)."""
    spans = [(s, e) for s, e in sentence_spans(text) if text[s:e].strip()]
    piece: list[str] = []
    words = 0
    for start, end in spans:
        sentence = " ".join(text[start:end].split())
        count = len(sentence.split())
        if piece and words + count > WORDS_PER_CHUNK:
            yield _source(title, piece)
            piece, words = [], 0
        piece.append(sentence)
        words += count
    if piece:
        yield _source(title, piece)


def _source(title: str, sentences: list[str]) -> Source:
    spans, start = [], 0
    for sentence in sentences:
        spans.append((start, start + len(sentence)))
        start += len(sentence) + 1
    return Source(title, " ".join(sentences), spans)


def corpus_questions(data_dir: Path) -> list[str]:
    """The questions of the sets the corpus reads, in the corpus's order."""
    found: list[str] = []
    for name in SETS:
        folder = data_dir / name
        if (folder / "corpus.jsonl").exists() and (folder / "questions.jsonl").exists():
            found.extend(str(row["question"]) for row in load_jsonl(folder / "questions.jsonl", ["question"]))
    return found


class ScaleCorpus:
    """The corpus: `sources` (original chunks) and `chunk(i)` for any i; `questions` to ask it."""

    def __init__(self, data_dir: Path, demo_dir: Path) -> None:
        self.sources: list[Source] = []
        self.questions: list[str] = []
        for name in SETS:
            folder = data_dir / name
            if not (folder / "corpus.jsonl").exists():
                continue
            for record in load_jsonl(folder / "corpus.jsonl", ()):
                self.sources.extend(_pieces(str(record.get("title") or ""), str(record.get("text") or "")))
        self.questions = corpus_questions(data_dir)
        for path in sorted(demo_dir.iterdir()):
            if path.is_file() and path.suffix in {".md", ".txt", ".html"}:
                title = path.stem.replace("-", " ").replace("_", " ")
                self.sources.extend(_pieces(title, path.read_text(encoding="utf-8")))
        if not self.sources:
            raise ValueError(f"no corpus text found under {data_dir}; the scale benchmark needs the public sets")
        # Sentences worth recombining: (source, span index) of those with at least six words.
        self.sentences = [
            (number, k)
            for number, source in enumerate(self.sources)
            for k, (start, end) in enumerate(source.spans)
            if len(source.text[start:end].split()) >= 6
        ]
        digest = hashlib.sha256(RECIPE.encode())
        for source in self.sources:
            digest.update(source.text.encode("utf-8"))
        self.fingerprint = digest.hexdigest()[:16]

    def chunk(self, number: int) -> Chunk:
        """Chunk `number`: an original piece while there are any, then six real sentences recombined (seeded)."""
        document = number // CHUNKS_PER_DOCUMENT
        if number < len(self.sources):
            source = self.sources[number]
            return Chunk(
                number,
                document,
                source.title,
                source.text,
                list(source.spans),
                [(number, k) for k in range(len(source.spans))],
            )
        rng = random.Random(f"{RECIPE}:{number}")
        origin = rng.sample(self.sentences, k=min(SENTENCES_PER_RECOMBINED, len(self.sentences)))
        sentences = [self._sentence(*item) for item in origin]
        joined = _source("", sentences)
        title = f"{self.sources[origin[0][0]].title} and more ({document})"
        return Chunk(number, document, title, joined.text, joined.spans, origin)

    def _sentence(self, source: int, k: int) -> str:
        start, end = self.sources[source].spans[k]
        return self.sources[source].text[start:end]


class EmbeddingCache:
    """Real embeddings of the corpus's first chunks, in resumable shards of `SHARD` chunks (see the module doc)."""

    def __init__(self, corpus: ScaleCorpus, folder: Path) -> None:
        self.corpus = corpus
        self.folder = folder / "embeddings" / corpus.fingerprint
        self.folder.mkdir(parents=True, exist_ok=True)
        self._shards: dict[int, dict[str, np.ndarray]] = {}

    def _path(self, shard: int) -> Path:
        return self.folder / f"shard-{shard:05d}.npz"

    def embedded(self) -> int:
        """How many leading chunks have a real embedding (shards are written in order, a gap ends the count)."""
        shard = 0
        while self._path(shard).exists():
            shard += 1
        return shard * SHARD

    def embed(self, upto: int, out: Out, deadline: float | None = None) -> int:
        """Embed the missing shards below chunk `upto` (one torch thread), stopping at `deadline` (monotonic) if
        given; returns how many leading chunks are embedded."""
        start = self.embedded()
        if start >= upto:
            return start
        model = EmbeddingModel(get_settings().embedding_model, threads=1)
        began, done = time.monotonic(), 0
        for shard in range(start // SHARD, (upto + SHARD - 1) // SHARD):
            if deadline is not None and time.monotonic() > deadline:
                break
            chunks = [self.corpus.chunk(n) for n in range(shard * SHARD, (shard + 1) * SHARD)]
            vectors, sentence_vectors, kept = model.embed_with_sentence_spans(
                [c.text for c in chunks], [c.spans for c in chunks], batch_size=16
            )
            offsets = np.cumsum([0] + [len(rows) for rows in sentence_vectors])
            flat = np.concatenate([rows for rows in sentence_vectors if len(rows)] or [np.zeros((0, DIMENSION))])
            kept_index = [[c.spans.index(span) for span in spans] for c, spans in zip(chunks, kept, strict=True)]
            temporary = self._path(shard).with_suffix(".tmp.npz")
            np.savez(
                temporary,
                vectors=vectors.astype(np.float32),
                sentences=flat.astype(np.float32),
                offsets=offsets.astype(np.int64),
                kept=np.asarray([k for row in kept_index for k in row], dtype=np.int32),
            )
            temporary.rename(self._path(shard))
            done += len(chunks)
            rate = done / max(time.monotonic() - began, 1e-9)
            out(f"  embedded {(shard + 1) * SHARD:,}/{upto:,} chunks ({rate:.1f} chunks/s)")
        return self.embedded()

    def _shard(self, shard: int) -> dict[str, np.ndarray] | None:
        if shard not in self._shards:
            path = self._path(shard)
            if not path.exists():
                return None
            with np.load(path) as data:
                self._shards[shard] = {key: data[key] for key in data.files}
        return self._shards[shard]

    def real(self, number: int) -> tuple[np.ndarray, list[int], np.ndarray] | None:
        """Chunk `number`'s real vector, the indexes of its spans that have sentence vectors, and those vectors."""
        data = self._shard(number // SHARD)
        if data is None:
            return None
        row = number % SHARD
        first, last = int(data["offsets"][row]), int(data["offsets"][row + 1])
        return data["vectors"][row], [int(k) for k in data["kept"][first:last]], data["sentences"][first:last]

    def vectors(self, chunk: Chunk) -> tuple[np.ndarray, list[tuple[int, int]], np.ndarray, bool]:
        """Chunk vector, sentence spans with vectors, their vectors, and whether the chunk vector is real (else
        composed from its sentences' in-context vectors in their source paragraphs)."""
        found = self.real(chunk.number)
        if found is not None:
            vector, kept, sentence_vectors = found
            return vector, [chunk.spans[k] for k in kept], sentence_vectors, True
        spans, rows = [], []
        for span, (source, k) in zip(chunk.spans, chunk.origin, strict=True):
            original = self.real(source)
            if original is None:
                raise ValueError(f"source paragraph {source} has no embedding yet; embed the original chunks first")
            if k in original[1]:
                spans.append(span)
                rows.append(original[2][original[1].index(k)])
        if rows:
            stacked = np.asarray(rows, dtype=np.float32)
            vector = stacked.mean(axis=0)
        else:  # no sentence of it fitted the model's window in its paragraph: the paragraphs' vectors stand in
            stacked = np.zeros((0, DIMENSION), dtype=np.float32)
            vector = np.mean([self.real(source)[0] for source, _ in chunk.origin], axis=0)  # type: ignore[index]
        return (vector / max(float(np.linalg.norm(vector)), 1e-12)).astype(np.float32), spans, stacked, False
