"""Fixtures for the app's AppTest tests: settings pointed at a fresh collection, and the app's caches cleared."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.components.knowledge_base.conftest import environment

APP_DIR = Path(__file__).resolve().parents[2] / "app"


def app_page(name: str) -> AppTest:
    """An AppTest of the app's page `name` (e.g. "ask.py"), not run yet."""
    return AppTest.from_file(str(APP_DIR / "pages" / name), default_timeout=180)


def run_page(name: str) -> AppTest:
    """The app's page `name`, run once; it must run without an exception."""
    at = app_page(name).run()
    assert not at.exception, at.exception
    return at


@pytest.fixture()
def app_env(collection_name: str, database_url: str) -> Iterator[str]:
    """Point the app at a fresh, empty collection for one test and clear Streamlit's resource caches (the app's
    runtime, whose catalog holds the collection it was built for, is closed with them)."""
    import streamlit as st

    with environment({"KB_COLLECTION": collection_name}):
        st.cache_resource.clear()
        yield collection_name
    st.cache_resource.clear()


@contextmanager
def chat_model_with(chat_server: Any, collection: str, records: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The chat contract server as the configured chat model and `records` (document, chunks pairs) in the
    app's collection, for the length of the block; the settings and Streamlit's caches restored after it."""
    import streamlit as st

    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import reload_settings

    monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url_v1)
    monkeypatch.setenv("OPENAI_MODEL", "contract-model")
    store = open_knowledge_base(reload_settings(), collection)
    for document, chunks in records:
        store.upsert_document(document, chunks)
    st.cache_resource.clear()
    try:
        yield chat_server
    finally:
        monkeypatch.undo()
        reload_settings()
        st.cache_resource.clear()
