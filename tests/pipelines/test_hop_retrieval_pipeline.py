"""The research pipeline retrieves again for a chain question's later hop (`HopRetriever`), on a real knowledge base:
the ranker keeps one chunk, the one that answers the first hop, and the chunk about the bridge comes from the hop's
own search, cited with its full attribution."""

from __future__ import annotations

import pytest
import yaml

from components.contracts import StatusKind
from pipelines.catalog import PipelineCatalog
from tests.pipelines.knowledge import PARAGRAPHS, catalog_yaml_for, fill_collection, fresh_collection_name

pytestmark = pytest.mark.integration

CHAIN = [
    (
        "brindlemoor",
        "Brindlemoor",
        "2020-05-01",
        "Brindlemoor is a market town on the river Oss. Several films, such as Pale Orchard (1979), have been shot "
        "in or around Brindlemoor.",
    ),
    (
        "pale-orchard",
        "Pale Orchard",
        "2020-05-02",
        "Pale Orchard is a 1979 drama film written and directed by Ilsa Varga.",
    ),
]
QUESTION = "Who directed the film that was shot in or around Brindlemoor in 1979?"


@pytest.fixture(scope="module")
def catalog(settings, database_url, embedding_model) -> PipelineCatalog:
    collection = fresh_collection_name()
    fill_collection(collection, settings, embedding_model, [*PARAGRAPHS, *CHAIN])
    data = yaml.safe_load(catalog_yaml_for(collection))
    components = data["pipelines"]["research"]["pipeline"]["components"]
    # A threshold no reading reaches: the direct reading is never sure, so the chain is read (and stated, unsure).
    for name in ("generator", "hops"):
        components[name]["init_parameters"]["confidence_threshold"] = 0.999
    return PipelineCatalog.loads(yaml.safe_dump(data, sort_keys=False))


def test_the_bridges_chunk_is_found_by_the_hop_retrieval_and_cited(catalog):
    result = catalog.research(QUESTION, sources=["kb"], top_k=1)
    ids = [chunk.id for chunk in result.chunks]
    assert ids == ["brindlemoor-0", "pale-orchard-0"]
    added = result.chunks[1]
    assert added.source_title == "Pale Orchard" and added.ranks["ranked"] == 2 and added.ranks["hop"] == 1
    assert "directed by Ilsa Varga [2]." in result.answer
    statuses = {status.source: status for status in result.statuses}
    assert statuses["hops"].status is StatusKind.SUCCESS and statuses["hops"].total_found >= 1


def test_a_single_hop_question_adds_no_chunk_and_no_status(catalog):
    result = catalog.research("Which river does Warsaw stand on?", sources=["kb"], top_k=1)
    assert [chunk.id for chunk in result.chunks] == ["warsaw-0"]
    assert "hops" not in {status.source for status in result.statuses}


# The hop stage decides whether a link is answered with the answer's own reader: each of these, if it differed from
# the generator's, would let the stage search for a link the answer reads as answered, or skip one it does not.
SHARED_WITH_THE_ANSWER = ("confidence_model", "confidence_threshold", "scoring_model", "embedding_model")


def test_every_hop_stage_of_the_catalog_reads_links_as_its_pipelines_answer_does() -> None:
    from tests.pipelines.knowledge import REPO_CATALOG

    pipelines = yaml.safe_load(REPO_CATALOG.read_text(encoding="utf-8"))["pipelines"]
    checked = 0
    for name, entry in pipelines.items():
        components = entry["pipeline"]["components"]
        by_type = {part["type"].rsplit(".", 1)[-1]: part["init_parameters"] for part in components.values()}
        if "HopRetriever" not in by_type:
            continue
        hops = by_type["HopRetriever"]
        answer = by_type.get("ResearchGenerator") or by_type["ExtractiveAnswerGenerator"]
        assert {key: hops[key] for key in SHARED_WITH_THE_ANSWER} == {
            key: answer[key] for key in SHARED_WITH_THE_ANSWER
        }, name
        checked += 1
    assert checked >= 1  # the research pipeline has one
