"""Conversation memory: recall earlier interactions as citable evidence, and remember each new one."""

from components.memory.recall import MemoryRecall
from components.memory.store import Interaction, MemoryStore, MemoryUnavailable, RecallQuery
from components.memory.writer import MemoryWriter

__all__ = ["Interaction", "MemoryRecall", "MemoryStore", "MemoryUnavailable", "MemoryWriter", "RecallQuery"]
