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

available = [
    ("ask.py", "Ask", ":material/question_answer:"),
    ("evidence.py", "Evidence board", ":material/push_pin:"),
    ("documents.py", "Documents", ":material/description:"),
    ("entities.py", "Entities", ":material/hub:"),
    ("ingest.py", "Ingest", ":material/upload_file:"),
    ("status.py", "Status", ":material/monitor_heart:"),
]
pages = [st.Page(PAGES / file, title=title, icon=icon) for file, title, icon in available if (PAGES / file).exists()]
st.navigation(pages).run()
