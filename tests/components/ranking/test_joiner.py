import asyncio
import threading

from haystack import Document, Pipeline
from haystack.components.joiners import DocumentJoiner

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
