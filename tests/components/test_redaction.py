"""The one redaction: known secret values and URL passwords never leave the product."""

from __future__ import annotations

import io
import logging

import pytest

from components.contracts import SourceStatus, StatusKind
from components.redaction import REDACTED, RedactingStream, bounded, install_log_redaction, redact, redact_data
from components.settings import reload_settings

MARKERS = {
    "OPENAI_API_KEY": "sk-MARKER-openai",
    "FIRECRAWL_API_KEY": "fc-MARKER-fire",
    "ZEP_API_KEY": "MARKER-zep-key",
    "MILVUS_TOKEN": "MARKER-milvus",
    "QDRANT_API_KEY": "MARKER-qdrant",
    "NEO4J_PASSWORD": "MARKER-neo4j",
    "API_TOKEN": "MARKER-api/token+x",
    "DATABASE_URL": "postgresql://app:MARKER-db%40pw@db.example:5432/kb",
}


@pytest.fixture()
def secrets_set(monkeypatch):
    for name, value in MARKERS.items():
        monkeypatch.setenv(name, value)
    reload_settings()
    yield MARKERS
    monkeypatch.undo()
    reload_settings()


def test_every_secret_and_its_echoed_forms_are_redacted(secrets_set):
    for name, value in secrets_set.items():
        assert "MARKER" not in redact(f"upstream said: bad {name} '{value}'"), name
    # URL-quoted and JSON-escaped echoes, and the password inside DATABASE_URL on its own (quoted or not).
    assert "MARKER" not in redact("key=MARKER-api%2Ftoken%2Bx")
    assert "MARKER" not in redact('{"detail": "MARKER-api\\/token+x"}'.replace("\\/", "/"))
    assert "MARKER" not in redact("password MARKER-db@pw rejected") and "MARKER" not in redact("MARKER-db%40pw")
    assert redact("sk-MARKER-openai") == REDACTED


def test_url_passwords_are_masked_whatever_the_scheme():
    assert redact("connect to http://admin:hunter22@10.0.0.1:6333/x") == "connect to http://admin:***@10.0.0.1:6333/x"
    assert redact("neo4j+s://neo4j:s3cret@graph.example") == "neo4j+s://neo4j:***@graph.example"
    assert redact("mail me at a@b.org, see http://example.org/a:b") == "mail me at a@b.org, see http://example.org/a:b"


def test_data_and_statuses_are_redacted_at_construction(secrets_set):
    status = SourceStatus(
        source="web",
        status=StatusKind.ERROR,
        execution_time_ms=1.0,
        message="request refused (HTTP 400): Invalid key fc-MARKER-fire",
    )
    assert "MARKER" not in status.message and "HTTP 400" in status.message
    # A changed report is redacted too: a message quoting what a user or an upstream sent is set after the run.
    changed = status.changed(status=StatusKind.SUCCESS, message="no document with id 'sk-MARKER-openai'")
    assert "MARKER" not in changed.message and changed.status is StatusKind.SUCCESS and changed.source == "web"
    with pytest.raises(ValueError):
        status.changed(execution_time_ms=-1.0)
    # A misspelt field is refused: model_validate would drop it and hand the report back unchanged.
    with pytest.raises(TypeError, match="'stauts'"):
        status.changed(stauts=StatusKind.SUCCESS)
    assert "MARKER" not in repr(redact_data({"a": ["sk-MARKER-openai", ("MARKER-zep-key",)], "n": 3}))


def test_log_records_of_every_kind_are_redacted_and_bounded(secrets_set):
    install_log_redaction()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        logging.getLogger("plain").warning("key %s", "sk-MARKER-openai")
        from haystack import logging as haystack_logging

        haystack_logging.getLogger("structured").warning("token {token}", token="MARKER-neo4j")
        try:
            raise RuntimeError("failed with MARKER-qdrant")
        except RuntimeError:
            logging.getLogger("plain").exception("boom")
        logging.getLogger("plain").warning("x" * 50_000)
    finally:
        root.removeHandler(handler)
    text = stream.getvalue()
    assert "MARKER" not in text and text.count(REDACTED) >= 3
    assert "more characters" in text and len(text) < 10_000


def test_loguru_messages_and_bound_values_are_redacted_and_bounded(secrets_set):
    from loguru import logger

    install_log_redaction()
    sink = io.StringIO()
    sink_id = logger.add(sink, format="{message} | {extra}")
    try:
        logger.bind(params={"question": "q" * 20_000, "key": "MARKER-zep-key"}).info("running with sk-MARKER-openai")
    finally:
        logger.remove(sink_id)
    text = sink.getvalue()
    assert "MARKER" not in text and len(text) < 2_000


def test_the_cli_stream_redacts_what_is_printed(secrets_set):
    out = io.StringIO()
    RedactingStream(out).write('{"message": "invalid key sk-MARKER-openai"}\n')
    assert "MARKER" not in out.getvalue() and REDACTED in out.getvalue()


def test_bounded_says_how_much_was_cut():
    assert bounded("abc", 10) == "abc"
    assert bounded("a" * 30, 10) == "a" * 10 + "... (20 more characters)"
