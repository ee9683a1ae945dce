"""Fixtures for the app's AppTest tests: settings pointed at a fresh collection, and the app's caches cleared."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.components.knowledge_base.conftest import environment

APP_DIR = Path(__file__).resolve().parents[2] / "app"


def page(name: str) -> str:
    """The path of an app page for AppTest.from_file."""
    return str(APP_DIR / "pages" / name)


@pytest.fixture()
def app_env(collection_name: str, database_url: str) -> Iterator[str]:
    """Point the app at a fresh, empty collection for one test and clear Streamlit's resource caches."""
    import streamlit as st

    with environment({"KB_COLLECTION": collection_name}):
        st.cache_resource.clear()
        yield collection_name
    st.cache_resource.clear()
