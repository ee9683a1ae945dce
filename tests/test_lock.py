"""The install lock (`constraints.txt`): it pins every dependency `pyproject.toml` declares, within its range, and
the environment the tests run in holds exactly the locked versions (`make install` installs with `-c`)."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.script_modules import load_script

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "constraints.txt"


def _write_lock_module():
    return load_script("write_lock")


def locked() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(text) for text in project["dependencies"] + project["optional-dependencies"]["test"]]


def test_every_declared_dependency_is_locked_within_its_range() -> None:
    pins = locked()
    missing = [str(req) for req in declared() if canonicalize_name(req.name) not in pins]
    outside = [
        f"{req} (locked {pins[canonicalize_name(req.name)]})"
        for req in declared()
        if canonicalize_name(req.name) in pins and not req.specifier.contains(pins[canonicalize_name(req.name)])
    ]
    assert not missing and not outside, f"run `make lock`: not locked {missing}, outside the range {outside}"


def test_the_environment_holds_the_locked_versions() -> None:
    different = {}
    for name, version in locked().items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            different[name] = (version, None)
            continue
        if Version(installed).public != Version(version).public:
            different[name] = (version, installed)
    assert not different, f"installed versions differ from the lock (locked, installed): {different}; `make install`"


class TestWriteLock:
    def test_pins_are_sorted_normalised_without_the_project_or_local_labels(self) -> None:
        report = {
            "install": [
                {"metadata": {"name": "Zeta_Pkg", "version": "1.2"}},
                {"metadata": {"name": "research-assistant", "version": "0.1.0"}},
                {"metadata": {"name": "torch", "version": "2.13.0+cpu"}},
                {"metadata": {"name": "alpha", "version": "3.0.1"}},
            ]
        }
        assert _write_lock_module().lock_lines(report) == ["alpha==3.0.1", "torch==2.13.0", "zeta-pkg==1.2"]

    def test_an_empty_report_writes_nothing(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        import io
        import sys

        target = tmp_path / "constraints.txt"
        target.write_text("old lock\n", encoding="utf-8")
        monkeypatch.setattr(sys, "argv", ["write_lock.py", str(target)])
        monkeypatch.setattr(sys, "stdin", io.StringIO('{"install": []}'))
        with pytest.raises(SystemExit):
            _write_lock_module().main()
        assert target.read_text(encoding="utf-8") == "old lock\n"
