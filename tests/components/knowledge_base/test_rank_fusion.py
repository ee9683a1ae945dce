import pytest
from haystack import Document
from haystack.components.joiners import DocumentJoiner

from components.knowledge_base.rank_fusion import reciprocal_rank_fusion


class TestReciprocalRankFusion:
    def test_weighted_sum_of_reciprocal_ranks(self):
        scores = reciprocal_rank_fusion([["a", "b"], ["b", "c"]], weights=[0.75, 0.25])
        assert list(scores) == ["a", "b", "c"]
        assert scores["a"] == pytest.approx(0.75 / 61)
        assert scores["b"] == pytest.approx(0.75 / 62 + 0.25 / 61)
        assert scores["c"] == pytest.approx(0.25 / 62)

    def test_agrees_with_haystacks_document_joiner(self):
        lists = [["a", "b", "c", "d"], ["c", "e", "a"], ["e", "d"]]
        weights = [0.5, 0.3, 0.2]
        ours = reciprocal_rank_fusion(lists, weights)
        joiner = DocumentJoiner(join_mode="reciprocal_rank_fusion", weights=weights)
        theirs = joiner.run([[Document(id=key, content=key) for key in ids] for ids in lists])["documents"]
        assert {doc.id: doc.score for doc in theirs} == pytest.approx({key: 61 * score for key, score in ours.items()})

    def test_one_weight_per_list(self):
        with pytest.raises(ValueError, match="one weight per list"):
            reciprocal_rank_fusion([["a"], ["b"]], weights=[1.0])
