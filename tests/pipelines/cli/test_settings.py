import re
from pathlib import Path

from pipelines.cli import main
from pipelines.cli.settings import effective_settings, settings_table

README = Path(__file__).resolve().parents[3] / "README.md"


class TestSettingsCommand:
    def test_readme_table_matches_the_settings_model(self):
        text = README.read_text(encoding="utf-8")
        found = re.search(r"<!-- settings-table:start -->\n(.*)\n<!-- settings-table:end -->", text, re.S)
        assert found, "the README lost its settings table markers"
        assert found.group(1).strip() == settings_table(), "run `research settings --markdown` and paste it in"

    def test_secrets_are_masked(self, monkeypatch):
        from components.settings import reload_settings

        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-123456")
        reload_settings()
        try:
            values = effective_settings()
            assert values["OPENAI_API_KEY"] == "set"
            assert "sk-test" not in str(values)
        finally:
            monkeypatch.delenv("OPENAI_API_KEY")
            reload_settings()

    def test_cli_prints_every_setting_without_secrets(self, capsys, monkeypatch):
        from components.settings import reload_settings

        monkeypatch.setenv("ZEP_API_KEY", "zep-secret-value-98765")
        reload_settings()
        try:
            assert main(["settings"]) == 0
            out = capsys.readouterr().out
            assert "KB_BACKEND" in out and "zep-secret-value" not in out
        finally:
            monkeypatch.delenv("ZEP_API_KEY")
            reload_settings()

    def test_an_invalid_setting_is_one_sentence_naming_it_not_a_validation_dump(self, capsys, monkeypatch):
        from components.settings import SettingsError, reload_settings

        monkeypatch.setenv("KB_BACKEND", "bogus-backend-value")
        monkeypatch.setenv("EMBEDDING_THREADS", "many")
        get_settings_error = None
        try:
            reload_settings()
        except SettingsError as exc:
            get_settings_error = str(exc)
        try:
            assert get_settings_error is not None and get_settings_error.startswith("Invalid setting: ")
            assert "KB_BACKEND" in get_settings_error and "EMBEDDING_THREADS" in get_settings_error
            assert main(["ask", "Who founded Neo4j?"]) == 1
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and err.startswith("research: Invalid setting: KB_BACKEND")
            assert "bogus-backend-value" not in err and "pydantic" not in err
        finally:
            monkeypatch.delenv("KB_BACKEND")
            monkeypatch.delenv("EMBEDDING_THREADS")
            reload_settings()
