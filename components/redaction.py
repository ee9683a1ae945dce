"""Secret redaction: the one place that keeps known secret values and URL passwords out of everything we emit.

`redact(text)` replaces every known secret value (the settings' `SecretStr` values: OPENAI_API_KEY,
FIRECRAWL_API_KEY, ZEP_API_KEY, MILVUS_TOKEN, QDRANT_API_KEY, NEO4J_PASSWORD, API_TOKEN, DATABASE_URL and the
password inside it) with `[redacted]`, also where only a long prefix of one is left at the end of a text or before
an ellipsis (a message cut in the middle of a key), and the password of any `scheme://user:password@host` URL with
`***`. Text is redacted before it is cut (`cut`), so that a secret straddling the cut is not left as all but its last
characters. It is applied where text leaves the product: status messages are redacted when a `SourceStatus` is made,
`install_log_redaction()` redacts every log record (stdlib, Haystack's and Hayhooks' loguru), the HTTP server
redacts every response body, and the CLI writes through `RedactingStream`.

Usage:
```python
from components.redaction import redact

redact("upstream said: invalid key sk-abc123")  # -> "upstream said: invalid key [redacted]"
```
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from typing import Any, TextIO
from urllib.parse import quote, unquote, urlsplit

from components.settings import get_settings

REDACTED = "[redacted]"
# A log line quotes at most this much of any message or bound value (a 10 MB request must not become a log line).
MAX_LOG_CHARS = 2000

# Settings whose values are secrets (environment variable names, lower case as in `Settings`).
SECRET_SETTINGS = (
    "openai_api_key",
    "firecrawl_api_key",
    "zep_api_key",
    "milvus_token",
    "qdrant_api_key",
    "neo4j_password",
    "api_token",
    "database_url",
)
# Values this short would redact ordinary words; no real key is this short.
_MIN_SECRET_CHARS = 4
# A secret's first characters, this many or more, are redacted where a cut ends them (what a cut leaves of a key).
PREFIX_CHARS = 8
_URL_CREDENTIALS = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\"'<>]*):(?P<password>[^\s@/\"'<>]+)@")
# The end of a streamed text that may still become a URL's credentials ("postgres://user:pa" before "ss@host"): a
# scheme and what may follow it up to the "@", with nothing yet that ends the credentials. At most this many
# characters are held back for it.
_OPEN_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*:(?://[^\s/@\"'<>]*|/)?$")
_OPEN_URL_CHARS = 1024


def _values_of(raw: str) -> list[str]:
    """A secret value and the forms it takes when it is echoed (URL-quoted, JSON-escaped, a URL's password)."""
    values = {raw, quote(raw, safe=""), json.dumps(raw)[1:-1]}
    if "://" in raw:
        try:
            password = urlsplit(raw).password
        except ValueError:
            password = None
        if password:
            values |= {password, unquote(password), quote(unquote(password), safe="")}
    return [value for value in values if len(value) >= _MIN_SECRET_CHARS]


_SETTINGS_SECRETS: list[frozenset[str]] = []  # the settings' secret values, as last read


def remember_settings_secrets() -> None:
    """Read the settings' secret values (a `.env` file's included) for redaction: when a process sets up (the
    catalog does, as it is made) and after the settings change; the first redaction reads them if nobody did."""
    found: set[str] = set()
    try:
        settings = get_settings()
        for name in SECRET_SETTINGS:
            secret = getattr(settings, name, None)
            if secret is not None:
                found.update(_values_of(secret.get_secret_value()))
    except Exception:  # noqa: BLE001 - invalid settings must not stop redaction of what the environment holds
        pass
    _SETTINGS_SECRETS[:] = [frozenset(found)]


def secret_values() -> list[str]:
    """Every known secret value in force (the settings' as last read, and the environment's now), longest first."""
    if not _SETTINGS_SECRETS:
        remember_settings_secrets()
    found: set[str] = set(_SETTINGS_SECRETS[0])
    for name in SECRET_SETTINGS:
        value = os.environ.get(name.upper())
        if value:
            found.update(_values_of(value))
    return sorted(found, key=len, reverse=True)


# What a cut leaves after the text it cut: nothing, or an ellipsis saying text was left out.
_CUT_MARKS = ("…", "...")


def _redact_prefixes(text: str, value: str) -> str:
    """`text` with `value` replaced, and with a run of its first characters (`PREFIX_CHARS` or more) replaced where
    a cut ends it: at the end of `text` or before an ellipsis. Elsewhere such a run is an ordinary word ("password"
    of the password "password123"), left alone."""
    text = text.replace(value, REDACTED)
    head = value[:PREFIX_CHARS]
    parts: list[str] = []
    start = searched = 0
    while (found := text.find(head, searched)) != -1:
        end, matched = found + len(head), len(head)
        while end < len(text) and matched < len(value) and text[end] == value[matched]:
            end += 1
            matched += 1
        if end == len(text) or text.startswith(_CUT_MARKS, end):
            parts += [text[start:found], REDACTED]
            start = end
        searched = found + 1
    parts.append(text[start:])
    return "".join(parts)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """`text` with every known secret value (and a long prefix of one where a cut ends it) and every URL password
    replaced; `secrets` (longest first) instead of the settings' and environment's values when given."""
    if not text:
        return text
    for value in secret_values() if secrets is None else secrets:
        # A connection string's first characters are its scheme ("postgresql://"), not a secret: whole values only.
        if len(value) < PREFIX_CHARS or "://" in value or "%3A%2F%2F" in value.upper():
            text = text.replace(value, REDACTED)
        else:
            text = _redact_prefixes(text, value)
    if "://" in text and "@" in text:
        text = _URL_CREDENTIALS.sub(lambda match: f"{match['head']}:***@", text)
    return text


class StreamRedactor:
    """Redacts a text that arrives in pieces, so that a secret split across pieces is caught whole.

    `feed` returns the redacted text that is safe to pass on and holds back the end of what it was given that could
    still be the start of a secret (at most the longest secret less one character) or of a URL's credentials (from
    its scheme, until the "@" or anything that ends them arrives); `flush` returns what is held once the text ends.
    """

    def __init__(self, secrets: list[str] | None = None) -> None:
        self._secrets = secret_values() if secrets is None else sorted(secrets, key=len, reverse=True)
        self._longest = max((len(value) for value in self._secrets), default=0)
        self._held = ""

    def _unsafe_from(self, text: str) -> int:
        """Where the held-back end of `text` starts: the first position, among its last (longest secret - 1)
        characters, from which the rest could still grow into a secret, moved back over any secret spanning it."""
        cut = len(text)
        for start in range(max(0, len(text) - self._longest + 1), len(text)):
            rest = text[start:]
            if any(len(value) > len(rest) and value.startswith(rest) for value in self._secrets):
                cut = start
                break
        moved = True
        while moved:
            moved = False
            for value in self._secrets:
                found = text.find(value, max(0, cut - len(value) + 1))
                if found != -1 and found < cut < found + len(value):
                    cut, moved = found, True
        window = max(0, len(text) - _OPEN_URL_CHARS)
        if opened := _OPEN_URL.search(text, window):
            cut = min(cut, opened.start())
        return cut

    def feed(self, piece: str) -> str:
        text = self._held + piece
        cut = self._unsafe_from(text)
        self._held = text[cut:]
        return redact(text[:cut], self._secrets)

    def flush(self) -> str:
        text, self._held = self._held, ""
        return redact(text, self._secrets)


def cut(text: str, limit: int) -> str:
    """`text` redacted, then cut to `limit` characters: the one order in which a secret at the cut cannot leak."""
    return redact(text)[:limit]


def bounded(text: str, limit: int = MAX_LOG_CHARS) -> str:
    """`text` redacted and cut to `limit` characters, saying how much was left out."""
    text = redact(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def redact_data(value: Any) -> Any:
    """`redact` applied to every string inside JSON-like data (dicts, lists, tuples)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_data(item) for item in value)
    return value


_INSTALLED = threading.Lock()
_installed = False


def install_log_redaction() -> None:
    """Redact and bound every log record from now on, whichever logger or handler it goes to (idempotent).

    A record factory (not a handler filter) is used so records of loggers and handlers created later are covered,
    including Haystack's structured records; Hayhooks' loguru logger gets a patcher doing the same to the message
    and to the values bound to it (Hayhooks binds each request's parameters). Messages and bound values are cut at
    `MAX_LOG_CHARS`.
    """
    global _installed
    with _INSTALLED:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logged as it is
            return record
        record.msg, record.args = bounded(message), None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return record

    logging.setLogRecordFactory(factory)
    try:
        from loguru import logger as loguru_logger
    except ImportError:
        return

    def patch(record: dict[str, Any]) -> None:
        record["message"] = bounded(record["message"])
        for key, value in list(record["extra"].items()):
            if not isinstance(value, (int, float, bool)) and value is not None:
                text = value if isinstance(value, str) else repr(value)
                record["extra"][key] = bounded(text, MAX_LOG_CHARS // 4)

    loguru_logger.configure(patcher=patch)


class RedactingStream:
    """A text stream that redacts what is written to it (the CLI's stdout and stderr)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
