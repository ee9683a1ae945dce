"""The workspace folder the file tools are confined to, the one path check they all use, and what they share.

A path is accepted only if it is relative, has no `..` part, and no part of it (below the workspace) is a
symbolic link; the resolved path must still lie inside the workspace. Errors are one sentence for the analyst.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from components.resilience import SourceError
from components.serialization import InitParameterSerialization
from components.settings import get_settings
from components.validation import positive_int


def configured_workspace() -> str:
    """The settings' workspace folder: WORKSPACE_DIR, else the data folder's `workspace` (a file tool takes it when
    it is built)."""
    settings = get_settings()
    return str(settings.workspace_dir or settings.data_dir / "workspace")


def workspace_root(folder: str | None) -> Path:
    """The workspace `folder` (None: `configured_workspace()`), resolved and created on first use."""
    root = Path(folder or configured_workspace()).expanduser()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission, a read-only disk: the analyst's to fix, not a retry
        raise SourceError(f"The workspace folder {str(root)!r} cannot be used: {exc.strerror or exc}.") from None
    return root.resolve()


def resolve_in_workspace(root: Path, relative: str, *, must_exist: bool = False) -> Path:
    """The absolute path of `relative` inside `root`; `SourceError` if it would leave the workspace."""
    text = (relative or "").strip()
    if not text or text == ".":
        return root
    if "\x00" in text:
        raise SourceError("The path contains a NUL character.")
    if PurePosixPath(text).is_absolute() or PureWindowsPath(text).is_absolute() or PureWindowsPath(text).drive:
        raise SourceError(f"{text!r} is an absolute path; give a path inside the workspace.")
    parts = PurePosixPath(text.replace("\\", "/")).parts
    if ".." in parts:
        raise SourceError(f"{text!r} goes above the workspace with '..'.")
    current = root
    for part in parts:
        if part in ("", "."):
            continue
        current = current / part
        if current.is_symlink():
            raise SourceError(f"{text!r} passes through a symbolic link, which the workspace does not follow.")
    resolved = current.resolve()
    if resolved != root and root not in resolved.parents:
        raise SourceError(f"{text!r} is outside the workspace.")
    if must_exist and not resolved.exists():
        raise SourceError(f"{text!r} does not exist in the workspace.")
    return resolved


def display_path(root: Path, path: Path) -> str:
    """`path` relative to the workspace, with forward slashes (never the machine's absolute path)."""
    relative = os.path.relpath(path, root)
    return "." if relative == "." else PurePosixPath(*Path(relative).parts).as_posix()


class WorkspaceTool(InitParameterSerialization):
    """What the file tools share: the workspace folder they are confined to (`workspace_dir`; None: the settings'),
    the most bytes a file they read or write may hold (`max_bytes`), and their serialisation."""

    def __init__(self, workspace_dir: str | None = None, max_bytes: int = 1_000_000) -> None:
        self.workspace_dir = workspace_dir or configured_workspace()  # None: the settings' as the tool is built
        self.max_bytes = positive_int("max_bytes", max_bytes)
