"""`ReadFile`: reads a text file inside the configured workspace folder, and nothing outside it."""

from __future__ import annotations

import os
from typing import Any

from haystack import component

from components.resilience import SourceError
from components.tools.workspace import WorkspaceTool, display_path, resolve_in_workspace, workspace_root


@component
class ReadFile(WorkspaceTool):
    """Reads a UTF-8 text file from the workspace (no `..`, absolute paths or symbolic links).

    Usage:
    ```python
    ReadFile(workspace_dir="notes").run(path="summary.md")["content"]
    ```
    """

    @component.output_types(path=str, content=str, size_bytes=int, truncated=bool)
    def run(self, path: str) -> dict[str, Any]:
        """Read the file at `path` (relative to the workspace).

        :param path: the file's path relative to the workspace folder, e.g. "notes/summary.md".

        :returns: `path` (workspace-relative), `content` (text, at most `max_bytes`), `size_bytes`, `truncated`.
        """
        root = workspace_root(self.workspace_dir)
        target = resolve_in_workspace(root, path, must_exist=True)
        if not target.is_file():
            raise SourceError(f"{path!r} is not a file.")
        # O_NOFOLLOW: a link swapped in after the check is refused, not followed.
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(self.max_bytes + 1)
        size = target.stat().st_size
        truncated = len(data) > self.max_bytes
        try:
            content = data[: self.max_bytes].decode("utf-8", errors="strict" if not truncated else "ignore")
        except UnicodeDecodeError:
            raise SourceError(f"{path!r} is not a UTF-8 text file.") from None
        return {"path": display_path(root, target), "content": content, "size_bytes": size, "truncated": truncated}
