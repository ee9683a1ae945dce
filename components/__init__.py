"""Haystack components of the research assistant: the data model, the tool contract and every source."""
