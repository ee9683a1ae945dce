"""The per-hop retrieval of a chain question: the later hop is asked again with the bridge an earlier hop found, and
only when the ranked chunks leave it unanswered. The sources are stand-ins counting what they are asked."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from haystack import Document

from components.contracts import SourceStatus, StatusKind
from components.contracts.chunk import RankedDocuments
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from components.generation.hop_retriever import HopRetriever
from pipelines.catalog import PipelineCatalog, build_pipeline
from tests.components.ranking.chunks import kb_document
from tests.pipelines.knowledge import REPO_CATALOG

SHOT = kb_document(
    "brindlemoor",
    "Brindlemoor is a market town on the river Oss. Several films, such as Pale Orchard (1979), have been shot in "
    "or around Brindlemoor.",
    0.6,
    title="Brindlemoor",
    ranks={"ranked": 1},
)
FILM = kb_document(
    "pale-orchard",
    "Pale Orchard is a 1979 drama film written and directed by Ilsa Varga.",
    0.4,
    title="Pale Orchard",
    ranks={"hops_kb": 1},
)
QUESTION = "Who directed the film that was shot in or around Brindlemoor in 1979?"


class Source:
    """A knowledge base or graph stand-in: what it was asked, and what it answers (or raises)."""

    def __init__(self, name: str, found: list[Document] | None = None, fails: str = "", raises: bool = False):
        self.name, self.found, self.fails, self.raises = name, found or [], fails, raises
        self.asked: list[str] = []

    def run(self, query: str, **_: Any) -> dict[str, Any]:
        self.asked.append(query)
        if self.raises:
            raise RuntimeError("the connection was reset")
        kind = StatusKind.ERROR if self.fails else StatusKind.SUCCESS
        status = SourceStatus(source=self.name, status=kind, execution_time_ms=1.0, message=self.fails)
        return {"documents": [] if self.fails else list(self.found), "status": status}


def hops_with(kb: Source, graph: Source | None = None, **parameters: Any) -> HopRetriever:
    hops = HopRetriever(**parameters)
    hops._kb, hops._graph = kb, graph or Source("graph")
    return hops


class TestHopRetriever:
    def test_the_later_hops_chunk_only_the_hop_retrieval_finds_is_read(self):
        kb = Source("hops_kb", [FILM, SHOT])
        hops = hops_with(kb)
        out = hops.run(query=QUESTION, documents=RankedDocuments((SHOT,)))
        # Asked with the bridge in the description's place; the chunk already ranked is not added again.
        assert kb.asked == ["Who directed Pale Orchard?"]
        assert [document.id for document in out["ranked"].documents] == ["brindlemoor", "pale-orchard"]
        added = out["ranked"].documents[1]
        assert added.meta["hop"] == {"question": "Who directed Pale Orchard?", "bridge": "Pale Orchard"}
        assert added.meta["ranks"] == {"hops_kb": 1, "hop": 1, "ranked": 2}
        assert added.meta["source_title"] == "Pale Orchard" and added.meta["source_url"].endswith("pale-orchard")
        assert out["status"].status is StatusKind.SUCCESS and out["status"].total_found == 1
        generator = ExtractiveAnswerGenerator()
        before = generator.run(query=QUESTION, documents=[SHOT])
        after = generator.run(query=QUESTION, documents=out["ranked"].documents)
        assert "Ilsa Varga" not in before["replies"][0]
        assert "directed by Ilsa Varga [2]." in after["replies"][0]
        assert after["parts"][0]["short_answer"] == "Ilsa Varga"

    def test_a_chunk_found_for_a_hop_carries_no_sentence_terms_on(self):
        # What ingestion stored for the ranker is not handed to the answer (nor recorded with what it read), as for
        # the ranked chunks.
        stored = Document(id=FILM.id, content=FILM.content, meta={**FILM.meta, "sentence_terms": "pale orchard|"})
        out = hops_with(Source("hops_kb", [stored])).run(query=QUESTION, documents=RankedDocuments((SHOT,)))
        added = out["ranked"].documents[1]
        assert added.id == "pale-orchard" and "sentence_terms" not in added.meta
        assert added.meta["source_title"] == "Pale Orchard"

    @pytest.mark.parametrize(
        ("kb", "graph", "kind"),
        [
            (Source("hops_kb", fails="the knowledge base is unreachable"), None, StatusKind.ERROR),
            (Source("hops_kb", raises=True), None, StatusKind.ERROR),
            (Source("hops_kb", [FILM]), Source("graph", fails="the graph timed out"), StatusKind.PARTIAL),
        ],
    )
    def test_a_failed_search_leaves_the_ranked_chunks_and_says_so(self, kb, graph, kind):
        hops = hops_with(kb, graph)
        ranked = RankedDocuments((SHOT,))
        out = hops.run(query=QUESTION, documents=ranked)
        assert out["status"].status is kind and out["status"].source == "hops"
        if kind is StatusKind.ERROR:
            assert out["ranked"] is ranked
            assert "the answer reads the ranked chunks" in out["status"].message
        else:
            assert [document.id for document in out["ranked"].documents] == ["brindlemoor", "pale-orchard"]
            assert "the graph timed out" in out["status"].message

    @pytest.mark.parametrize(
        ("question", "documents"),
        [
            ("Which river does Brindlemoor stand on?", [SHOT]),
            ("When was Pale Orchard released?", [FILM]),
            ("Who directed Pale Orchard?", [FILM, SHOT]),
            ("Is Brindlemoor a market town?", [SHOT]),
        ],
    )
    def test_a_question_that_is_no_chain_asks_no_source(self, question, documents):
        kb, graph = Source("hops_kb", [FILM]), Source("graph", [FILM])
        ranked = RankedDocuments(tuple(documents))
        out = hops_with(kb, graph).run(query=question, documents=ranked)
        assert kb.asked == graph.asked == []
        # The chunks pass on as they came, and no status joins the sources'.
        assert out["ranked"] is ranked and "status" not in out

    def test_a_chain_the_ranked_chunks_answer_surely_asks_no_source(self):
        kb = Source("hops_kb", [FILM])
        out = hops_with(kb, confidence_threshold=0.0).run(query=QUESTION, documents=RankedDocuments((SHOT, FILM)))
        assert kb.asked == [] and "status" not in out

    def test_only_the_selected_sources_are_asked(self):
        kb, graph = Source("hops_kb", [FILM]), Source("graph", [FILM])
        hops_with(kb, graph).run(query=QUESTION, documents=[SHOT], sources=["kb"])
        assert kb.asked == ["Who directed Pale Orchard?"] and graph.asked == []

    def test_it_round_trips_through_its_dict(self):
        hops = HopRetriever(kb_limit=3, graph_top_k=0, max_rounds=1, confidence_threshold=0.4)
        data = hops.to_dict()
        assert data["init_parameters"]["kb_limit"] == 3 and data["init_parameters"]["graph_top_k"] == 0
        data["init_parameters"]["graph_store"] = None  # the settings' store again (it is not on the allowlist here)
        again = HopRetriever.from_dict(data)
        assert (again.kb_limit, again.graph_top_k, again.max_rounds, again.confidence_threshold) == (3, 0, 1, 0.4)

    def test_the_chunks_found_for_a_hop_are_read_by_the_chain_alone(self):
        # Appended after the ranked chunks, a hop's chunk never changes the direct reading of the question.
        out = hops_with(Source("hops_kb", [FILM])).run(query=QUESTION, documents=RankedDocuments((SHOT,)))
        found = out["ranked"].documents[1]
        generator = ExtractiveAnswerGenerator()
        direct = "Who directed Pale Orchard?"
        assert generator.run(query=direct, documents=[SHOT, found]) == generator.run(query=direct, documents=[SHOT])
        assert "Ilsa Varga" in generator.run(query=direct, documents=[SHOT, FILM])["replies"][0]

    def test_a_sure_direct_reading_of_the_last_bridge_gives_way_to_the_chain_a_hop_chunk_completes(self):
        # Every reading sure (threshold 0): alone, the film's chunk is read as the answer, the description's own; with
        # the chunk that names the film's director, the chain through the film answers what was asked.
        generator = ExtractiveAnswerGenerator(confidence_threshold=0.0)
        assert generator.run(query=QUESTION, documents=[SHOT])["parts"][0]["short_answer"] == "Pale Orchard"
        out = hops_with(Source("hops_kb", [FILM])).run(query=QUESTION, documents=RankedDocuments((SHOT,)))
        part = generator.run(query=QUESTION, documents=out["ranked"].documents)["parts"][0]
        assert (part["short_answer"], part["sure"]) == ("Ilsa Varga", True)

    def test_closing_it_closes_both_sources_it_opened(self):
        # The runtime closes each component with a close(): the stage's own knowledge base and graph connections go too.
        closed: list[str] = []

        class Closing(Source):
            def close(self) -> None:
                closed.append(self.name)

        hops_with(Closing("hops_kb"), Closing("graph")).close()
        assert closed == ["hops_kb", "graph"]

    def test_bad_settings_are_refused_with_their_name(self):
        with pytest.raises(ValueError, match="kb_limit"):
            HopRetriever(kb_limit=-1)
        with pytest.raises(ValueError, match="max_rounds"):
            HopRetriever(max_rounds=5)


def test_the_research_pipeline_holds_the_hop_retrieval_and_round_trips_through_yaml():
    catalog = PipelineCatalog(REPO_CATALOG)
    built = build_pipeline(catalog.spec("research"))
    hops = built.get_component("hops")
    assert isinstance(hops, HopRetriever)
    dumped = catalog.dumps()
    written = yaml.safe_load(dumped)["pipelines"]["research"]["pipeline"]["components"]["hops"]["init_parameters"]
    assert written["kb_limit"] == 5 and written["document_store"]["type"].endswith("PgvectorDocumentStore")
    again = build_pipeline(PipelineCatalog.loads(dumped).spec("research"))
    assert again.to_dict()["components"]["hops"] == built.to_dict()["components"]["hops"]
