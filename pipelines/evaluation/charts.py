"""The one matplotlib set-up of the evaluation, risk-coverage and benchmark charts: a figure drawn off-screen, and
its PNG written and freed."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def new_chart(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """A matplotlib figure and its axes (`plt.subplots`' arguments), drawn off-screen."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


def save_chart(figure: Any, path: Path, dpi: int = 110) -> Path:
    """Lay `figure` out, write it to `path` as a PNG (its folder created) and free it; the path."""
    import matplotlib.pyplot as plt

    figure.tight_layout()
    if not path.suffix:  # matplotlib would add ".png" itself, and the path returned would not be the file written
        path = path.with_suffix(".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi)
    plt.close(figure)
    return path
