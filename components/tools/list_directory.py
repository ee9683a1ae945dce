"""`ListDirectory`: lists a folder inside the configured workspace folder, and nothing outside it."""

from __future__ import annotations

from typing import Any

from haystack import component

from components.resilience import SourceError
from components.tools.workspace import (
    WorkspaceTool,
    configured_workspace,
    display_path,
    resolve_in_workspace,
    workspace_root,
)
from components.validation import positive_int


@component
class ListDirectory(WorkspaceTool):
    """Lists the files and folders of a workspace folder (name, type, size); links are shown but not followed.

    Usage:
    ```python
    ListDirectory(workspace_dir="notes").run(path=".")["entries"]
    ```
    """

    def __init__(self, workspace_dir: str | None = None, max_entries: int = 500) -> None:
        self.workspace_dir = workspace_dir or configured_workspace()  # None: the settings' as the tool is built
        self.max_entries = positive_int("max_entries", max_entries)

    @component.output_types(path=str, entries=list[dict[str, Any]], truncated=bool)
    def run(self, path: str = ".") -> dict[str, Any]:
        """List the folder at `path` (relative to the workspace; "." is the workspace itself).

        :param path: the folder relative to the workspace folder; "." for the workspace itself.

        :returns: `path` (workspace-relative), `entries` (name, type file|directory|link, size_bytes), `truncated`.
        """
        root = workspace_root(self.workspace_dir)
        folder = resolve_in_workspace(root, path, must_exist=True)
        if not folder.is_dir():
            raise SourceError(f"{path!r} is not a folder.")
        entries = []
        children = sorted(folder.iterdir(), key=lambda child: child.name)
        for child in children[: self.max_entries]:
            if child.is_symlink():
                kind, size = "link", 0
            elif child.is_dir():
                kind, size = "directory", 0
            else:
                kind, size = "file", child.stat().st_size
            entries.append({"name": child.name, "type": kind, "size_bytes": size})
        return {"path": display_path(root, folder), "entries": entries, "truncated": len(children) > self.max_entries}
