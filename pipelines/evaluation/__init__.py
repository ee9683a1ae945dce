"""Offline evaluation: question sets through pipeline variants (questions.py), entity timelines (timelines.py)."""
