"""Fixtures of the tool tests: the chat and MediaWiki contract servers, and a private workspace per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contract_servers.chat import chat_server, chat_server_session  # noqa: F401 - fixtures
from tests.contract_servers.wikipedia import wikipedia_server, wikipedia_server_session  # noqa: F401 - fixtures


@pytest.fixture()
def workspace(work_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh workspace folder, also set as WORKSPACE_DIR for tools built from the registry."""
    from components.settings import reload_settings

    folder = work_dir / "workspace"
    folder.mkdir()
    monkeypatch.setenv("WORKSPACE_DIR", str(folder))
    reload_settings()
    yield folder.resolve()
    monkeypatch.delenv("WORKSPACE_DIR")
    reload_settings()
