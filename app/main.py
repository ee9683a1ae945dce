"""Entry point of the Streamlit app: `streamlit run app/main.py` (or `research app`)."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

PAGES = Path(__file__).parent / "pages"

st.set_page_config(page_title="Research assistant", page_icon=":material/travel_explore:", layout="wide")

from components.settings import SettingsError, get_settings  # noqa: E402 - after the page config, as Streamlit asks

try:
    get_settings()
except SettingsError as exc:  # an invalid setting is one sentence on the page, not a redacted exception
    st.error(f"{exc} Correct it in the environment or `.env` and start the app again.")
    st.stop()

from pipelines.runtime import setup  # noqa: E402

# Every page of the app, not only those that run a pipeline, logs through the redaction (an ingestion's fetcher or
# the demo corpus's first load can echo a key): the process's one set-up, before any page runs.
setup()

st.navigation(
    [
        st.Page(PAGES / "ask.py", title="Ask", icon=":material/question_answer:"),
        st.Page(PAGES / "evidence.py", title="Evidence board", icon=":material/push_pin:"),
        st.Page(PAGES / "documents.py", title="Documents", icon=":material/description:"),
        st.Page(PAGES / "entities.py", title="Entities", icon=":material/hub:"),
        st.Page(PAGES / "ingest.py", title="Ingest", icon=":material/upload_file:"),
        st.Page(PAGES / "status.py", title="Status", icon=":material/monitor_heart:"),
    ]
).run()
