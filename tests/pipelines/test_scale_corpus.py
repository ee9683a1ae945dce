"""The scale benchmark's corpus and embedding cache, on an invented corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipelines import scale_corpus
from pipelines.scale_corpus import EmbeddingCache, ScaleCorpus

PARAGRAPHS = [
    (
        "Valmor Bridge",
        "The Valmor Bridge opened in 1911 over the Quistel river. It carried trams until 1950. "
        "Engineers from Brenard designed its three arches.",
    ),
    (
        "Tiravel Orchard",
        "Tiravel Orchard grows seven kinds of pears on the hills above Osk. Its cider won a prize "
        "in 1987. The orchard closes every winter for pruning.",
    ),
    (
        "Pundric Choir",
        "The Pundric Choir sings in the old church of Melsha every Sunday. It was founded by "
        "two teachers in 1932. Its recordings are kept in the town library.",
    ),
]


@pytest.fixture()
def corpus(tmp_path) -> ScaleCorpus:
    data = tmp_path / "data" / "squad_dev_a"
    data.mkdir(parents=True)
    with (data / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for number, (title, text) in enumerate(PARAGRAPHS):
            handle.write(json.dumps({"id": f"p{number}", "title": title, "text": text}) + "\n")
    (data / "questions.jsonl").write_text(json.dumps({"id": "q", "question": "When did the bridge open?"}) + "\n")
    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / "corvane-notes.md").write_text("Corvane notes list the drubbel lamps of the harbour. They date from 1890.")
    return ScaleCorpus(tmp_path / "data", demo)


def test_chunks_are_the_same_in_every_run_and_recombine_real_sentences(corpus, tmp_path):
    again = ScaleCorpus(tmp_path / "data", tmp_path / "demo")
    assert [corpus.chunk(n).text for n in range(12)] == [again.chunk(n).text for n in range(12)]
    assert corpus.questions == ["When did the bridge open?"]
    assert [corpus.chunk(n).text for n in range(len(corpus.sources))] == [s.text for s in corpus.sources]
    sentences = {source.text[s:e] for source in corpus.sources for s, e in source.spans}
    recombined = corpus.chunk(len(corpus.sources) + 3)
    assert all(recombined.text[s:e] in sentences for s, e in recombined.spans)
    assert len(recombined.spans) == len(recombined.origin) > 1


@pytest.mark.integration
def test_embeddings_resume_and_compose_the_rest(corpus, tmp_path, monkeypatch, embedding_model):
    monkeypatch.setattr(scale_corpus, "SHARD", 2)
    cache = EmbeddingCache(corpus, tmp_path / "cache")
    assert cache.embed(4, lambda line: None) == 4
    files = sorted(cache.folder.iterdir())
    assert EmbeddingCache(corpus, tmp_path / "cache").embed(4, lambda line: None) == 4  # resumed: nothing redone
    assert sorted(cache.folder.iterdir()) == files
    original = corpus.chunk(0)
    vector, spans, _, real = cache.vectors(original)
    assert real and np.allclose(vector, embedding_model.embed([original.text])[0], atol=1e-4)
    composed = corpus.chunk(9)
    vector, spans, sentence_vectors, real = cache.vectors(composed)
    assert not real and len(spans) == len(sentence_vectors) > 0
    mean = sentence_vectors.mean(axis=0)
    assert np.allclose(vector, mean / np.linalg.norm(mean), atol=1e-6)


def test_the_scale_bench_without_the_public_sets_says_so(tmp_path, monkeypatch):
    from pipelines.bench_scale import bench_scale

    monkeypatch.setenv("RESEARCH_EVAL_DATA", str(tmp_path / "absent"))
    lines: list[str] = []
    assert bench_scale(lines.append, sizes=(10,), backends=("pgvector",)) == {"skipped": "no evaluation data"}
    assert "scale benchmark needs their text" in lines[0]


def test_the_scale_bench_measures_the_backends_asked_for(monkeypatch, capsys, tmp_path):
    from pipelines import bench_scale
    from pipelines.cli import main

    asked: list[tuple] = []
    monkeypatch.setattr(bench_scale, "bench_scale", lambda out, sizes, **kwargs: asked.append(kwargs["backends"]) or {})
    report = str(tmp_path / "r.json")
    assert main(["bench", "--only", "scale", "--scale-backends", "pgvector, qdrant", "--out", report]) == 0
    assert asked == [("pgvector", "qdrant")]
    assert main(["bench", "--only", "scale", "--scale-backends", "pgvector,solr"]) == 1
    assert "--scale-backends takes pgvector, milvus and qdrant, not solr" in capsys.readouterr().err


@pytest.mark.integration
def test_the_scale_bench_reads_the_servers_cpu_for_each_keyword_search(database_url, collection_name):
    from components.knowledge_base.factory import knowledge_base_for
    from components.knowledge_base.store import ChunkRecord, DocumentRecord
    from components.text.analyzer import term_counts
    from pipelines.bench_scale import _server_cpu
    from tests.components.knowledge_base.test_pgvector_index import _store, _unit

    kb = knowledge_base_for(_store(collection_name))
    try:
        for number, (title, text) in enumerate(PARAGRAPHS):
            document = DocumentRecord(f"d{number}", title, f"files/d{number}.md", "md", "h")
            chunk = ChunkRecord(f"d{number}-0", f"d{number}", 0, text, _unit(number), term_counts=term_counts(text))
            kb.upsert_document(document, [chunk])
        questions = ["When did the bridge open?", "Which pears grow in Osk?", "Who founded the choir?"]
        spent = _server_cpu(kb.index, questions)
        assert spent is not None and len(spent) == len(questions)
        assert all(value >= 0 for value in spent) and sum(spent) > 0
    finally:
        kb.drop()
        kb.close()
