"""Redact, then cut: a secret straddling a cut, or only its long prefix left, never leaves the product."""

from __future__ import annotations

import logging

import pytest

from components.redaction import PREFIX_CHARS, REDACTED, bounded, cut, install_log_redaction, redact
from components.resilience.errors import classify_exception, first_line
from components.settings import reload_settings

KEY = "sk-zorblax-9f8e7d6c5b4a39281706"
DATABASE_URL = "postgresql://app:qwertyuiop-db-pass@db.invalid:5432/kb"


@pytest.fixture()
def secret_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("DATABASE_URL", DATABASE_URL)
    reload_settings()
    yield KEY
    monkeypatch.undo()
    reload_settings()


def leaked(text: str, key: str = KEY) -> bool:
    """Whether `text` holds PREFIX_CHARS or more characters of `key` in a row."""
    return any(key[start : start + PREFIX_CHARS] in text for start in range(len(key) - PREFIX_CHARS + 1))


@pytest.mark.parametrize("kept", [PREFIX_CHARS, 12, len(KEY) - 1])
def test_a_key_straddling_the_cut_is_redacted(secret_key, kept):
    message = "Invalid credentials: " + "x" * 170
    error = RuntimeError(message + KEY + " (and more)")
    limit = len(message) + kept  # the cut falls inside the key, leaving `kept` of its characters
    for text in (first_line(error, limit), cut(str(error), limit), classify_exception(error).message):
        assert not leaked(text), text
    assert REDACTED[: limit - len(message)] in first_line(error, limit)


def test_a_long_prefix_alone_is_redacted_and_a_short_one_is_not(secret_key):
    assert redact(f"key {KEY[: PREFIX_CHARS + 3]}") == f"key {REDACTED}"
    assert redact(f"key {KEY[: PREFIX_CHARS + 3]}…{KEY}") == f"key {REDACTED}…{REDACTED}"
    assert redact("model sk-zorb") == "model sk-zorb"  # under PREFIX_CHARS: an ordinary word could match


def test_a_connection_strings_scheme_is_not_taken_for_its_prefix(secret_key):
    assert redact("connect with postgresql://host/db") == "connect with postgresql://host/db"
    assert "qwertyuiop" not in redact(f"failed: {DATABASE_URL}")


def test_a_log_record_is_redacted_before_it_is_bounded(secret_key, caplog):
    install_log_redaction()
    message = "y" * 1995 + KEY
    assert not leaked(bounded(message))
    with caplog.at_level(logging.WARNING):
        logging.getLogger("tests.redaction").warning(message)
    assert not leaked(caplog.text)


def test_a_prefix_is_redacted_only_where_a_cut_ends_it(monkeypatch):
    """A password's first characters are often an ordinary word: only a cut leaves them to stand for the secret."""
    monkeypatch.setenv("NEO4J_PASSWORD", "password123")
    reload_settings()
    try:
        text = "The password reset of passwords was logged; the password123 is wrong."
        assert redact(text) == f"The password reset of passwords was logged; the {REDACTED} is wrong."
        assert redact("Invalid credentials: password12") == f"Invalid credentials: {REDACTED}"
        assert redact("Invalid credentials: password12… (more)") == f"Invalid credentials: {REDACTED}… (more)"
        assert redact("Invalid credentials: password12...") == f"Invalid credentials: {REDACTED}..."
        assert redact("a password") == f"a {REDACTED}"  # at the very end it may be a cut: redacted
    finally:
        monkeypatch.undo()
        reload_settings()
