"""Reciprocal rank fusion of id lists: the project's one RRF, for fusion before there are Documents to join.

A hybrid knowledge-base search fuses its dense and keyword hit lists with it before they become Documents, keeping
each chunk's rank in both lists; `ResearchRanker` uses it when it is given only the branches' lists (in the research
pipeline Haystack's `DocumentJoiner` fuses the sources' Documents in front of it). Same formula as Haystack's
`DocumentJoiner(join_mode="reciprocal_rank_fusion")`: k=60 with 1-based ranks is its k=61 with 0-based ones (its
scores are these times 61, over the number of lists when it weighs them equally).

Usage:
```python
scores = reciprocal_rank_fusion([dense_ids, keyword_ids], weights=[0.7, 0.3])
order = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))
```
"""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60  # damps the top ranks' lead


def reciprocal_rank_fusion(
    ranked_lists: Sequence[Sequence[str]], weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Each id's weighted sum of 1 / (`RRF_K` + rank) over the lists that hold it (rank 1 is a list's first).

    :param ranked_lists: ids, best first, one list per ranking.
    :param weights: one weight per list; None weighs every list 1.
    :returns: id -> fused score, in order of first appearance.
    """
    weights = [1.0] * len(ranked_lists) if weights is None else list(weights)
    if len(weights) != len(ranked_lists):
        raise ValueError("reciprocal_rank_fusion needs one weight per list")
    scores: dict[str, float] = {}
    for ids, weight in zip(ranked_lists, weights, strict=True):
        for rank, key in enumerate(ids, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (RRF_K + rank)
    return scores
