"""The app makes the process's set-up before any page runs, so a page that runs no pipeline (Documents, Ingest)
still logs through the redaction."""

from __future__ import annotations

import pytest

from tests.fresh_process import reported, run_python

# A fresh process (this test session made its own set-up already); the navigation is replaced so that no page runs.
APP_SCRIPT = """
import json, logging, types
import streamlit as st
from streamlit.testing.v1 import AppTest
from pipelines import runtime

st.navigation = lambda pages, **kwargs: types.SimpleNamespace(run=lambda: None)
before = runtime.is_set_up("logging")
app = AppTest.from_file("app/main.py", default_timeout=300).run()
print(json.dumps({"before": before, "errors": [e.value for e in app.exception], "logging": runtime.is_set_up("logging"),
                  "pipelines": runtime.is_set_up("pipelines"),
                  "records": logging.getLogRecordFactory() is not logging.LogRecord}))
"""


@pytest.mark.integration
def test_the_app_sets_the_process_up_before_any_page() -> None:
    done = reported(run_python(APP_SCRIPT, timeout=600))
    assert done["before"] is False and done["errors"] == []
    assert done["logging"] and done["records"] and done["pipelines"]
