import re
from pathlib import Path

from pipelines.cli import main
from pipelines.cli.settings import effective_settings, settings_table

CONFIGURATION = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


class TestSettingsCommand:
    def test_documented_table_matches_the_settings_model(self):
        text = CONFIGURATION.read_text(encoding="utf-8")
        found = re.search(r"<!-- settings-table:start -->\n(.*)\n<!-- settings-table:end -->", text, re.S)
        assert found, "docs/configuration.md lost its settings table markers"
        assert found.group(1).strip() == settings_table(), "run `research settings --markdown` and paste it in"

    def test_settings_the_readme_names_exist(self):
        from components.settings import Settings

        readme = (CONFIGURATION.parents[1] / "README.md").read_text(encoding="utf-8")
        section = readme.split("## Settings", 1)[1].split("\n## ", 1)[0]
        known = {name.upper() for name in Settings.model_fields} | {"ALL_PROXY", "NO_PROXY"}  # the standard proxies
        named = set(re.findall(r"`([A-Z][A-Z0-9_]+)(?:_\*)?`", section))
        unknown = {
            name for name in named if name not in known and not any(setting.startswith(f"{name}_") for setting in known)
        }
        assert named and not unknown, f"the README names settings that do not exist: {sorted(unknown)}"

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
