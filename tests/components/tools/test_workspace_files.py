"""ReadFile, WriteFile, ListDirectory: confined to the workspace (no `..`, absolute paths or symlinks)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from components.resilience import SourceError
from components.tools.list_directory import ListDirectory
from components.tools.read_file import ReadFile
from components.tools.write_file import WriteFile

ESCAPES = ["../outside.txt", "a/../../outside.txt", "/etc/passwd", "..\\outside.txt", "C:\\Windows\\win.ini"]


@pytest.fixture()
def outside(workspace: Path) -> Path:
    path = workspace.parent / "outside.txt"
    path.write_text("secret outside the workspace")
    return path


class TestReadFile:
    def test_serialisation(self) -> None:
        tool = ReadFile(workspace_dir="ws", max_bytes=10)
        assert ReadFile.from_dict(tool.to_dict()).to_dict() == tool.to_dict()
        with pytest.raises(ValueError):
            ReadFile(max_bytes=0)

    def test_reads_and_truncates(self, workspace: Path) -> None:
        (workspace / "notes").mkdir()
        (workspace / "notes" / "a.md").write_text("hello workspace")
        result = ReadFile(workspace_dir=str(workspace)).run(path="notes/a.md")
        assert result == {"path": "notes/a.md", "content": "hello workspace", "size_bytes": 15, "truncated": False}
        short = ReadFile(workspace_dir=str(workspace), max_bytes=5).run(path="notes/a.md")
        assert short["content"] == "hello" and short["truncated"] is True

    @pytest.mark.parametrize("path", ESCAPES)
    def test_refuses_escapes(self, workspace: Path, outside: Path, path: str) -> None:
        with pytest.raises(SourceError):
            ReadFile(workspace_dir=str(workspace)).run(path=path)

    def test_refuses_symlinks_out_and_in(self, workspace: Path, outside: Path) -> None:
        (workspace / "link.txt").symlink_to(outside)
        (workspace / "dirlink").symlink_to(workspace.parent, target_is_directory=True)
        tool = ReadFile(workspace_dir=str(workspace))
        with pytest.raises(SourceError, match="symbolic link"):
            tool.run(path="link.txt")
        with pytest.raises(SourceError, match="symbolic link"):
            tool.run(path="dirlink/outside.txt")

    def test_missing_and_binary_files(self, workspace: Path) -> None:
        (workspace / "blob.bin").write_bytes(b"\xff\xfe\x00\x81")
        tool = ReadFile(workspace_dir=str(workspace))
        with pytest.raises(SourceError, match="does not exist"):
            tool.run(path="nope.txt")
        with pytest.raises(SourceError, match="not a UTF-8"):
            tool.run(path="blob.bin")


class TestWriteFile:
    def test_serialisation(self) -> None:
        assert WriteFile.from_dict(WriteFile(max_bytes=9).to_dict()).max_bytes == 9

    def test_writes_creates_folders_and_refuses_overwrite(self, workspace: Path) -> None:
        tool = WriteFile(workspace_dir=str(workspace))
        assert tool.run(path="drafts/summary.md", content="# Sum") == {"path": "drafts/summary.md", "bytes_written": 5}
        assert (workspace / "drafts" / "summary.md").read_text() == "# Sum"
        with pytest.raises(SourceError, match="already exists"):
            tool.run(path="drafts/summary.md", content="again")
        tool.run(path="drafts/summary.md", content="again", overwrite=True)
        assert (workspace / "drafts" / "summary.md").read_text() == "again"

    @pytest.mark.parametrize("path", ESCAPES)
    def test_refuses_escapes(self, workspace: Path, outside: Path, path: str) -> None:
        with pytest.raises(SourceError):
            WriteFile(workspace_dir=str(workspace)).run(path=path, content="x", overwrite=True)
        assert outside.read_text() == "secret outside the workspace"

    def test_refuses_writing_through_a_symlink(self, workspace: Path, outside: Path) -> None:
        (workspace / "link.txt").symlink_to(outside)
        with pytest.raises(SourceError, match="symbolic link"):
            WriteFile(workspace_dir=str(workspace)).run(path="link.txt", content="x", overwrite=True)
        assert outside.read_text() == "secret outside the workspace"

    def test_refuses_oversized_content(self, workspace: Path) -> None:
        with pytest.raises(SourceError, match="larger than"):
            WriteFile(workspace_dir=str(workspace), max_bytes=3).run(path="a.txt", content="abcd")


class TestListDirectory:
    def test_serialisation(self) -> None:
        assert ListDirectory.from_dict(ListDirectory(max_entries=3).to_dict()).max_entries == 3

    def test_lists_with_types_and_marks_links(self, workspace: Path, outside: Path) -> None:
        (workspace / "b.txt").write_text("12345")
        (workspace / "a").mkdir()
        os.symlink(outside, workspace / "c-link")
        result = ListDirectory(workspace_dir=str(workspace)).run()
        assert result["path"] == "."
        assert result["entries"] == [
            {"name": "a", "type": "directory", "size_bytes": 0},
            {"name": "b.txt", "type": "file", "size_bytes": 5},
            {"name": "c-link", "type": "link", "size_bytes": 0},
        ]
        assert ListDirectory(workspace_dir=str(workspace), max_entries=1).run(path=".")["truncated"] is True

    @pytest.mark.parametrize("path", ["..", "/", "a/../.."])
    def test_refuses_escapes(self, workspace: Path, path: str) -> None:
        with pytest.raises(SourceError):
            ListDirectory(workspace_dir=str(workspace)).run(path=path)


@pytest.mark.parametrize("tool", [ReadFile, WriteFile, ListDirectory])
def test_a_workspace_that_cannot_be_created_is_one_clear_sentence(tmp_path: Path, tool) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file where the workspace folder should be")
    component = tool(workspace_dir=str(blocker / "workspace"))
    arguments = (
        {"path": "a.txt", "content": "x"} if tool is WriteFile else {"path": "a.txt" if tool is ReadFile else "."}
    )
    with pytest.raises(
        SourceError, match=r"The workspace folder .*notes.txt/workspace' cannot be used: Not a directory"
    ):
        component.run(**arguments)
    assert blocker.read_text() == "a file where the workspace folder should be"
