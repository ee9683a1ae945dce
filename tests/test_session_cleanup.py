"""The test session's exit cleanup: removes its data folder unless a server still uses it, and never raises."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import conftest


class _VanishingPath(type(Path())):  # type: ignore[misc]
    def rglob(self, pattern: str):  # noqa: ANN201
        raise FileNotFoundError(2, "a file vanished while the folder was walked")


def test_removes_a_folder_no_server_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "session"
    (folder / "data").mkdir(parents=True)
    monkeypatch.setattr(conftest, "_SESSION_DIR", folder)
    conftest._remove_session_dir()
    assert not folder.exists()


def test_keeps_a_folder_a_running_server_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "session"
    (folder / "data" / "pg").mkdir(parents=True)
    (folder / "data" / "pg" / "postmaster.pid").write_text("1\n")
    monkeypatch.setattr(conftest, "_SESSION_DIR", folder)
    conftest._remove_session_dir()
    assert (folder / "data" / "pg" / "postmaster.pid").exists()


def test_a_walk_that_fails_keeps_the_folder_and_does_not_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _VanishingPath(tmp_path / "session")
    (folder / "data").mkdir(parents=True)
    monkeypatch.setattr(conftest, "_SESSION_DIR", folder)
    conftest._remove_session_dir()
    assert folder.exists()
