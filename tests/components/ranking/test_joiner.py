import asyncio
import threading

import pytest
from haystack import Document, Pipeline, component
from haystack.components.joiners import DocumentJoiner

from components.contracts import FusedDocuments, documents_of
from components.ranking import ResearchRanker
from components.ranking.joiner import LoopDocumentJoiner

DENSE = [Document(id="a", content="Alder", score=0.9), Document(id="b", content="Birch", score=0.5)]
KEYWORD = [Document(id="b", content="Birch", score=7.0), Document(id="c", content="Cedar", score=3.0)]


def test_it_fuses_as_haystacks_joiner_and_serialises_as_itself():
    joiner = LoopDocumentJoiner(join_mode="reciprocal_rank_fusion", top_k=2)
    expected = DocumentJoiner(join_mode="reciprocal_rank_fusion", top_k=2).run(documents=[DENSE, KEYWORD])
    assert joiner.run(documents=[DENSE, KEYWORD]) == expected
    assert asyncio.run(joiner.run_async(documents=[DENSE, KEYWORD])) == expected
    data = joiner.to_dict()
    assert data["type"] == "components.ranking.joiner.LoopDocumentJoiner"
    assert LoopDocumentJoiner.from_dict(data).to_dict() == data


def test_a_pipeline_runs_it_on_the_event_loop_not_in_a_worker_thread():
    threads = []
    pipeline = Pipeline()
    pipeline.add_component("joiner", LoopDocumentJoiner(join_mode="reciprocal_rank_fusion"))
    joiner = pipeline.get_component("joiner")
    fuse = joiner.join_mode_function

    def watched(document_lists: list[list[Document]]) -> list[Document]:
        threads.append(threading.current_thread())
        return fuse(document_lists)

    joiner.join_mode_function = watched

    async def ask() -> tuple[dict, threading.Thread]:
        return await pipeline.run_async({"joiner": {"documents": DENSE}}), threading.current_thread()

    result, loop_thread = asyncio.run(ask())
    assert [document.id for document in result["joiner"]["documents"]] == ["a", "b"]
    assert threads == [loop_thread]


def _outputs(joiner: LoopDocumentJoiner) -> dict:
    """The output sockets a joiner declares, as a pipeline holding it reports them."""
    pipeline = Pipeline()
    pipeline.add_component("joiner", joiner)
    return pipeline.outputs()["joiner"]


def test_with_a_fused_view_it_hands_the_same_fusion_on_as_one_read_only_value():
    listed = LoopDocumentJoiner(join_mode="reciprocal_rank_fusion", absent_lists=1)
    viewed = LoopDocumentJoiner(join_mode="reciprocal_rank_fusion", absent_lists=1, fused_view=True)
    fused = viewed.run(documents=[DENSE, KEYWORD])
    assert list(fused) == ["fused"]
    assert isinstance(fused["fused"], FusedDocuments)
    assert list(fused["fused"].documents) == listed.run(documents=[DENSE, KEYWORD])["documents"]
    assert set(_outputs(viewed)) == {"fused"}
    assert set(_outputs(listed)) == {"documents"}
    data = viewed.to_dict()
    assert data["init_parameters"]["fused_view"] is True
    assert LoopDocumentJoiner.from_dict(data).to_dict() == data
    with pytest.raises(ValueError, match="fused_view"):
        LoopDocumentJoiner(fused_view="yes")


def test_the_ranker_gets_the_fused_view_as_it_is_and_ranks_as_from_the_list():
    received = []

    @component
    class Watcher:
        @component.output_types(documents=list[Document])
        def run(self, documents: list[Document] | FusedDocuments) -> dict:
            received.append(documents)
            return {"documents": documents_of(documents)}

    pipeline = Pipeline()
    pipeline.add_component("joiner", LoopDocumentJoiner(join_mode="reciprocal_rank_fusion", fused_view=True))
    pipeline.add_component("watcher", Watcher())
    pipeline.connect("joiner.fused", "watcher.documents")
    result = asyncio.run(pipeline.run_async({"joiner": {"documents": KEYWORD}}, include_outputs_from={"joiner"}))
    # Haystack hands the view on without copying its chunks: the watcher reads the joiner's own documents.
    assert received[0] is result["joiner"]["fused"]
    query = "birch"
    listed = LoopDocumentJoiner(join_mode="reciprocal_rank_fusion").run(documents=[KEYWORD])["documents"]
    ranker = ResearchRanker(use_store_evidence=False)
    from_view = ranker.run(query=query, documents=received[0], branch_documents=[KEYWORD])
    from_list = ranker.run(query=query, documents=listed, branch_documents=[KEYWORD])
    assert from_view["documents"] == from_list["documents"]
    assert from_view["ranked"].documents == from_list["ranked"].documents  # two views (compared by identity)
