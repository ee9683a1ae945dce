"""A fault's message is redacted before it is cut: the part of a key left at the cut never reaches the log."""

from __future__ import annotations

import logging

import pytest

from components.generation.follow_up import FollowUpRewriter
from components.memory.recall import MemoryRecall
from components.memory.store import MemoryStore
from components.settings import reload_settings
from tests.components.test_redaction_cut import leaked

KEY = "sk-quellmar-5a4b3c2d1e0f99887766"
HISTORY = [{"question": "When was Drovane Works founded?", "answer": "Drovane Works was founded in 2011 [1]."}]
# The key starts 190 characters in: a cut at 200 leaves 10 of its characters.
MESSAGE = "upstream refused: " + "x" * 172 + KEY


@pytest.fixture()
def secret_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    reload_settings()
    yield KEY
    monkeypatch.undo()
    reload_settings()


def _leaked(text: str) -> bool:
    return leaked(text, KEY)


class _Failing:
    def run(self, **_: object) -> dict:
        raise RuntimeError(MESSAGE)


class _FailingStore(MemoryStore):
    backend = "embedded"

    def add(self, interaction, embedding):  # noqa: ANN001
        raise RuntimeError(MESSAGE)

    def search(self, query):  # noqa: ANN001
        raise RuntimeError(MESSAGE)


def test_the_chat_models_fault_is_logged_without_the_key(secret_key, caplog) -> None:
    rewriter = FollowUpRewriter(generator="extractive")
    rewriter.warm_up()
    rewriter._chat = _Failing()
    with caplog.at_level(logging.WARNING):
        result = rewriter.run(question="Who leads it?", history=HISTORY)
    assert result["answered_as"] == "Who leads Drovane Works?"
    assert "could not rewrite" in caplog.text and not _leaked(caplog.text)


def test_the_memorys_fault_is_logged_without_the_key(secret_key, caplog) -> None:
    recall = MemoryRecall(memory_store=_FailingStore())
    with caplog.at_level(logging.WARNING):
        assert recall.session_turns("s-quellmar", 3) == []
    assert "could not be read" in caplog.text and not _leaked(caplog.text)
