"""Running a script in a new Python process, as a second user of the same data would: from the repository root,
with this checkout importable and the test's environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def run_python(
    code: str, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `code` (`python -c`) with `args` in a new process; `env` is added to this process's environment."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})},
    )


def reported(done: subprocess.CompletedProcess[str]) -> Any:
    """The JSON a script run by `run_python` printed last; the script must have ended well."""
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
