"""`WriteFile`: writes a text file inside the configured workspace folder, and nothing outside it."""

from __future__ import annotations

import os
from typing import Any

from haystack import component

from components.resilience import SourceError
from components.tools.workspace import WorkspaceTool, display_path, resolve_in_workspace, workspace_root


@component
class WriteFile(WorkspaceTool):
    """Writes UTF-8 text to a file in the workspace, creating folders; refuses to overwrite unless asked.

    Usage:
    ```python
    WriteFile(workspace_dir="notes").run(path="drafts/summary.md", content="# Summary")["bytes_written"]
    ```
    """

    @component.output_types(path=str, bytes_written=int)
    def run(self, path: str, content: str, overwrite: bool = False) -> dict[str, Any]:
        """Write `content` to `path` (relative to the workspace).

        :param path: the file's path relative to the workspace folder; missing folders are created.
        :param content: the UTF-8 text to write.
        :param overwrite: replace an existing file (default false).

        :returns: `path` (workspace-relative) and `bytes_written`.
        """
        data = (content or "").encode("utf-8")
        if len(data) > self.max_bytes:
            raise SourceError(f"The content is larger than {self.max_bytes} bytes.")
        root = workspace_root(self.workspace_dir)
        target = resolve_in_workspace(root, path)
        if target == root:
            raise SourceError("Give a file name inside the workspace.")
        if target.exists() and not target.is_file():
            raise SourceError(f"{path!r} exists and is not a file.")
        target.parent.mkdir(parents=True, exist_ok=True)
        # Re-check after creating folders: nothing on the way may have become a link in the meantime.
        target = resolve_in_workspace(root, path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        if not overwrite:
            flags |= os.O_EXCL
        try:
            fd = os.open(target, flags, 0o644)
        except FileExistsError:
            raise SourceError(f"{path!r} already exists; pass overwrite=true to replace it.") from None
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return {"path": display_path(root, target), "bytes_written": len(data)}
