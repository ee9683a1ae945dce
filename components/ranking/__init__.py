"""Ranking: one calibrated order for the chunks every source returned."""

from components.ranking.research_ranker import ResearchRanker

__all__ = ["ResearchRanker"]
