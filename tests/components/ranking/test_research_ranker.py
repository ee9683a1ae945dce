from __future__ import annotations

import time

import pytest
from haystack.components.joiners import DocumentJoiner

from components.ranking import ResearchRanker
from components.text.analyzer import stem, terms
from tests.components.ranking.chunks import kb_document
from tests.fixture_texts import SUPER_BOWL_TEXT

SUPER_BOWL = kb_document(
    "sb",
    SUPER_BOWL_TEXT,
    0.55,
    ranks={"kb_dense": 2},
)
PANTHERS = kb_document(
    "cp",
    "Charlotte, North Carolina, is home to the Carolina Panthers, a professional football team.",
    0.6,
    ranks={"kb_dense": 1},
)
PARIS = kb_document("pa", "Paris is the French capital and its most populous city.", 0.1, ranks={"kb_dense": 3})


class TestEvidence:
    def test_terms_are_the_analyzers(self):
        assert stem("defeated") == stem("defeat")
        assert terms("Who won the games?") == ["win", "game"]  # "won" is an irregular form of "win"


class TestResearchRanker:
    def test_init_validates(self):
        with pytest.raises(ValueError, match="top_k"):
            ResearchRanker(top_k=0)
        with pytest.raises(ValueError, match="weights"):
            ResearchRanker(dense_weight=-1)
        with pytest.raises(ValueError, match="weights"):
            ResearchRanker(bm25_weight=0, dense_weight=0, sentence_weight=0, coverage_weight=0, best_sentence_weight=0)

    def test_to_dict_from_dict_round_trip(self):
        ranker = ResearchRanker(top_k=4, recency_weight=0.2, recency_half_life_days=30)
        data = ranker.to_dict()
        assert data["type"] == "components.ranking.research_ranker.ResearchRanker"
        assert data["init_parameters"]["top_k"] == 4
        restored = ResearchRanker.from_dict(data)
        assert restored.to_dict() == data

    def test_sentence_evidence_lifts_the_answering_chunk_over_a_closer_embedding(self):
        ranker = ResearchRanker(top_k=3)
        documents = DocumentJoiner(join_mode="reciprocal_rank_fusion").run([[PANTHERS, SUPER_BOWL, PARIS]])["documents"]
        ranked = ranker.run(query="Which team defeated the Carolina Panthers in Super Bowl 50?", documents=documents)
        ids = [document.id for document in ranked["documents"]]
        assert ids == ["sb", "cp", "pa"]
        assert ranked["documents"][0].meta["ranks"] == {"kb_dense": 2, "fused": 2, "ranked": 1}
        assert ranked["documents"][0].score > ranked["documents"][1].score

    def test_branch_ranks_survive_fusion(self):
        dense = [PANTHERS, SUPER_BOWL]
        keyword = [
            kb_document("sb", SUPER_BOWL.content, 0.55, ranks={"kb_keyword": 1}),
            kb_document("pa", PARIS.content, 0.1, ranks={"kb_keyword": 2}),
        ]
        fused = DocumentJoiner(join_mode="reciprocal_rank_fusion").run([dense, keyword])["documents"]
        ranked = ResearchRanker().run(query="Super Bowl 50 winner", documents=fused, branch_documents=[dense, keyword])
        by_id = {document.id: document.meta["ranks"] for document in ranked["documents"]}
        assert by_id["sb"]["kb_dense"] == 2 and by_id["sb"]["kb_keyword"] == 1
        assert by_id["sb"]["fused"] == 1
        assert by_id["cp"] == {"kb_dense": 1, "fused": by_id["cp"]["fused"], "ranked": by_id["cp"]["ranked"]}
        assert sorted(ranks["ranked"] for ranks in by_id.values()) == [1, 2, 3]

    def test_a_sources_branch_output_ranks_as_its_list_does(self):
        from components.contracts import BranchDocuments

        dense = [PANTHERS, kb_document("sb", SUPER_BOWL.content, 0.55, ranks={"kb_dense": 2})]
        keyword = [kb_document("sb", SUPER_BOWL.content, 0.55, ranks={"kb_keyword": 1})]
        fused = DocumentJoiner(join_mode="reciprocal_rank_fusion").run([dense, keyword])["documents"]
        as_lists = ResearchRanker().run(query="Super Bowl", documents=fused, branch_documents=[dense, keyword])
        shared = [BranchDocuments(tuple(dense)), BranchDocuments(tuple(keyword)), BranchDocuments()]
        as_branches = ResearchRanker().run(query="Super Bowl", documents=fused, branch_documents=shared)
        assert as_branches["documents"] == as_lists["documents"]
        assert as_branches["ranked"].documents == as_lists["ranked"].documents  # two views, compared by identity
        assert dense[1].meta["ranks"] == {"kb_dense": 2}  # the shared documents are read, never changed

    def test_the_ranked_chunks_also_come_as_one_read_only_value(self):
        from components.contracts import RankedDocuments

        dense = [PANTHERS, SUPER_BOWL]
        out = ResearchRanker().run(query="Super Bowl 50 winner", branch_documents=[dense])
        assert isinstance(out["ranked"], RankedDocuments) and out["documents"]
        assert list(out["ranked"].documents) == out["documents"]
        assert all(shared is listed for shared, listed in zip(out["ranked"].documents, out["documents"], strict=True))
        empty = ResearchRanker().run(query="Super Bowl", branch_documents=[])
        assert empty["documents"] == [] and isinstance(empty["ranked"], RankedDocuments)
        assert empty["ranked"].documents == ()

    def test_without_documents_it_fuses_the_branches_as_the_joiner_would_whatever_order_they_arrive_in(self):
        dense = [PANTHERS, kb_document("sb", SUPER_BOWL.content, 0.55, ranks={"kb_dense": 2})]
        keyword = [
            kb_document("sb", SUPER_BOWL.content, 0.55, ranks={"kb_keyword": 1}),
            kb_document("pa", PARIS.content, 0.1, ranks={"kb_keyword": 2}),
        ]
        dense[1].meta["found_by"], keyword[0].meta["found_by"] = "dense", "keyword"
        query = "Super Bowl 50 winner"
        fused = DocumentJoiner(join_mode="reciprocal_rank_fusion").run([dense, keyword])["documents"]
        joined = ResearchRanker().run(query=query, documents=fused, branch_documents=[dense, keyword])["documents"]
        for branches in ([dense, keyword], [keyword, dense]):
            own = ResearchRanker().run(query=query, branch_documents=branches)["documents"]
            assert [d.id for d in own] == [d.id for d in joined]
            assert [d.meta["ranks"] for d in own] == [d.meta["ranks"] for d in joined]
            assert [d.score for d in own] == pytest.approx([d.score for d in joined])
            # The copy kept is the same whichever branch finished first (the dense one: branches by name).
            assert next(d for d in own if d.id == "sb").meta["found_by"] == "dense"
        assert ResearchRanker().run(query=query, branch_documents=[[], []])["documents"] == []

    def test_the_joiners_output_ranks_the_same_whichever_branch_arrived_first(self):
        # Two copies of "sb" that differ (as a dense and a keyword hit do), and "cp" / "pa" tied at rank 1 of one
        # branch each: the joiner keeps the first-arrived copy and orders the tie by arrival.
        dense = [PANTHERS, kb_document("sb", SUPER_BOWL.content, 0.55, ranks={"kb_dense": 2})]
        keyword = [
            kb_document("pa", PARIS.content, 0.1, ranks={"kb_keyword": 1}),
            kb_document("sb", SUPER_BOWL.content, 0.61, ranks={"kb_keyword": 2}),
        ]
        query = "Super Bowl 50 winner"
        joiner = DocumentJoiner(join_mode="reciprocal_rank_fusion")
        runs = []
        for arrived in ([dense, keyword], [keyword, dense]):
            fused = joiner.run(arrived)["documents"]
            runs.append(ResearchRanker().run(query=query, documents=fused, branch_documents=arrived)["documents"])
        assert [d.id for d in runs[0]] == [d.id for d in runs[1]]
        assert [d.meta for d in runs[0]] == [d.meta for d in runs[1]]
        assert [d.score for d in runs[0]] == [d.score for d in runs[1]]
        assert next(d for d in runs[1] if d.id == "sb").meta["semantic_relevance"] == 0.55  # the dense copy

    def test_top_k_limits_and_is_clamped(self):
        documents = [PANTHERS, SUPER_BOWL, PARIS]
        assert len(ResearchRanker(top_k=2).run(query="football", documents=documents)["documents"]) == 2
        assert len(ResearchRanker(top_k=2).run(query="football", documents=documents, top_k=500)["documents"]) == 3

    def test_empty_input_gives_no_documents(self):
        assert ResearchRanker().run(query="anything", documents=[])["documents"] == []

    def test_recency_prefers_the_newer_of_equal_chunks(self):
        old = kb_document("old", "The central bank raised interest rates.", 0.5, date="2015-01-01")
        new = kb_document("new", "The central bank raised interest rates.", 0.5, date="2024-01-01")
        ranker = ResearchRanker(recency_weight=0.3, recency_half_life_days=365)
        ranked = ranker.run(query="interest rates", documents=[old, new], as_of="2024-06-01")["documents"]
        assert [document.id for document in ranked] == ["new", "old"]

    def test_graph_weight_lifts_the_passages_the_graph_walk_reached(self):
        # The second hop of a question: the walk reached the founder's passage, whose words barely match.
        company = kb_document("co", "Nordvik Aviation was founded by Marta Olsen in 1994.", 0.6, ranks={"kb_dense": 1})
        founder = kb_document("fo", "Marta Olsen was born in Trondheim in 1961.", 0.2, ranks={"kb_dense": 3})
        other = kb_document("ot", "Aviation companies build aircraft and train pilots.", 0.5, ranks={"kb_dense": 2})
        walked = [
            kb_document("co", company.content, 0.6, ranks={"graph": 1}),
            kb_document("fo", founder.content, 0.2, ranks={"graph": 2}),
        ]
        walked[0].meta["graph_facts"] = [{"fact": company.content}]
        branches = [[company, other, founder], walked]
        fused = DocumentJoiner(join_mode="reciprocal_rank_fusion").run(branches)["documents"]
        query = "Where was the founder of Nordvik Aviation born?"
        plain = ResearchRanker(top_k=2).run(query=query, documents=fused, branch_documents=branches)["documents"]
        assert [document.id for document in plain] == ["co", "ot"]
        ranker = ResearchRanker(top_k=2, graph_weight=1.0)
        lifted = ranker.run(query=query, documents=fused, branch_documents=branches)["documents"]
        assert [document.id for document in lifted] == ["co", "fo"]
        assert lifted[1].meta["ranks"]["graph"] == 2
        assert lifted[1].meta["evidence"]["graph_walk"] == pytest.approx(2**-0.5, abs=1e-6)
        assert "graph_walk" not in plain[1].meta["evidence"]
        # The graph's facts about a passage survive fusion whichever branch's copy the joiner kept.
        assert lifted[0].meta["graph_facts"] == [{"fact": company.content}]
        assert ResearchRanker.from_dict(ranker.to_dict()).graph_weight == 1.0

    def test_missing_relevance_is_computed_with_the_local_model(self, embedding_model):
        no_relevance = kb_document("x", "The Denver Broncos won Super Bowl 50.", None)
        unrelated = kb_document("y", "Photosynthesis turns light into chemical energy.", None)
        ranked = ResearchRanker().run(query="Who won Super Bowl 50?", documents=[unrelated, no_relevance])["documents"]
        assert ranked[0].id == "x"
        assert ranked[0].meta["semantic_relevance"] > 0.4 > ranked[1].meta["semantic_relevance"]

    def test_ranking_forty_chunks_takes_milliseconds(self):
        documents = [
            kb_document(f"c{i}", f"{SUPER_BOWL.content} Paragraph {i} adds a few more words about season {i}.", 0.5)
            for i in range(40)
        ]
        ranker = ResearchRanker()
        ranker.run(query="Who won Super Bowl 50?", documents=documents)
        started, cpu_started = time.perf_counter(), time.process_time()
        ranker.run(query="Who won Super Bowl 50?", documents=documents)
        # CPU time is what ranking costs, whatever else loads the machine; the loose wall-clock bound catches waiting.
        assert (time.process_time() - cpu_started) < 0.05
        assert (time.perf_counter() - started) < 0.05 * 10
