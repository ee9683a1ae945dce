"""`research`'s command modules: every one is loaded, and a broken one is an error, not a missing command."""

from __future__ import annotations

import importlib

import pytest

from pipelines import cli


class TestCommandModules:
    def test_every_command_module_registers_a_command(self) -> None:
        parser = cli.build_parser()
        commands = next(action for action in parser._actions if action.dest == "command").choices
        for name in cli.COMMAND_MODULES:
            assert hasattr(importlib.import_module(name), "register"), name
        assert {"ask", "ingest", "kb", "eval", "serve", "settings"} <= set(commands)

    def test_a_missing_command_module_is_an_error(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, "pipelines.cli.no_such_command"))
        with pytest.raises(ModuleNotFoundError, match="no_such_command"):
            cli.build_parser()
