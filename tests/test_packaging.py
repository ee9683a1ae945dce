"""What a wheel of the product carries: every data file the code reads beside its modules, the catalog included."""

import fnmatch
import os
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("components", "pipelines", "ingest", "app")


def _package_data() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]


def _shipped(path: Path, package_data: dict[str, list[str]]) -> bool:
    """Whether setuptools' package-data globs take `path`: every folder under the included roots is a package (the
    project's `packages.find` finds namespace packages too), so a file is taken by a pattern of its own folder's
    package or of every package ("*"), matched against its name."""
    package = ".".join(path.parent.relative_to(ROOT).parts)
    return any(fnmatch.fnmatch(path.name, p) for p in package_data.get(package, []) + package_data.get("*", []))


def _data_files() -> list[Path]:
    files = []
    for name in PACKAGES:
        for path in (ROOT / name).rglob("*"):
            if path.is_file() and path.suffix in {".json", ".yaml", ".md", ".txt", ".html"}:
                if "__pycache__" not in path.parts:
                    files.append(path)
    return files


def test_every_fitted_model_file_is_package_data():
    package_data = _package_data()
    models = [p for p in _data_files() if p.suffix == ".json"]
    assert models, "no fitted model file found"
    missing = [str(p.relative_to(ROOT)) for p in models if not _shipped(p, package_data)]
    assert not missing, f"not in any wheel: {missing}"


def test_every_data_file_beside_the_modules_is_package_data():
    package_data = _package_data()
    missing = [str(p.relative_to(ROOT)) for p in _data_files() if not _shipped(p, package_data)]
    assert not missing, f"not in any wheel: {missing}"


def test_the_catalog_ships_in_the_package_and_the_repositorys_pipelines_yaml_is_that_file():
    """One catalog file: `pipelines/pipelines.yaml` (package data, so a wheel carries it); the `pipelines.yaml` at
    the repository's root, which users edit and a checkout's ./pipelines.yaml lookup finds, links to it."""
    packaged = ROOT / "pipelines" / "pipelines.yaml"
    root = ROOT / "pipelines.yaml"
    assert packaged.is_file() and not packaged.is_symlink()
    assert _shipped(packaged, _package_data())
    assert root.is_symlink(), "pipelines.yaml at the root must link to pipelines/pipelines.yaml, not be a copy"
    assert not os.path.isabs(os.readlink(root)), "an absolute link breaks in any other checkout"
    assert root.resolve() == packaged.resolve()
