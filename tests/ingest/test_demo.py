"""The demo corpus: every file converts with a title and a date, and it is ingested once into an empty base."""

from __future__ import annotations

import pytest

from components.ingestion.formats import convert_bytes
from ingest.demo import demo_files, ensure_demo_corpus
from pipelines.cli import main


class TestDemoCorpus:
    def test_every_file_converts_with_title_date_and_length(self) -> None:
        files = demo_files()
        assert len(files) >= 14
        assert {p.suffix for p in files} >= {".md", ".html", ".txt"}
        for path in files:
            document = convert_bytes(path.read_bytes(), path.name)
            words = len(document.text.split())
            assert document.title and document.title != path.stem, path.name
            assert document.date is not None, path.name
            assert 300 <= words <= 900, (path.name, words)
            assert sum(1 for b in document.blocks if b.is_heading) >= 2 or path.suffix == ".txt", path.name

    def test_is_package_data(self) -> None:
        import tomllib
        from pathlib import Path

        pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
        patterns = pyproject["tool"]["setuptools"]["package-data"]["*"]
        assert {f"*{p.suffix}" for p in demo_files()} <= set(patterns)


@pytest.mark.integration
class TestEnsureDemoCorpus:
    def test_ingests_into_an_empty_base_only(self, monkeypatch, collection_name, database_url, capsys) -> None:
        from components.knowledge_base.factory import open_knowledge_base
        from components.settings import reload_settings

        monkeypatch.setenv("KB_COLLECTION", collection_name)
        store = open_knowledge_base(reload_settings())
        try:
            report = ensure_demo_corpus(store)
            assert report is not None and report.ok and len(report.added) == len(demo_files())
            assert store.count_documents() == len(demo_files()) and store.count_chunks() == report.chunks_written
            assert ensure_demo_corpus(store) is None

            summaries, total = store.list_documents(limit=50, search="Streamlit")
            streamlit = next(s.document for s in summaries if s.document.source == "demo:streamlit.md")
            assert str(streamlit.date) == "2022-03-02" and streamlit.url == "https://streamlit.io/"

            assert main(["ingest", "--demo"]) == 0
            assert capsys.readouterr().out.startswith(f"0 added, 0 replaced, {len(demo_files())} unchanged, 0 failed")
        finally:
            store.drop()
            monkeypatch.delenv("KB_COLLECTION")
            reload_settings()
