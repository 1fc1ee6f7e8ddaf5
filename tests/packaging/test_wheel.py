"""The wheel carries the compiled kernels, and they import from it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import alertstation._native

ROOT = Path(__file__).resolve().parents[2]


def test_compiled_kernels_are_what_the_package_uses() -> None:
    sources = sorted(p.stem for p in (ROOT / "src" / "_native").glob("*.pyx"))
    assert sources
    for name in sources:
        module = __import__(f"alertstation._native.{name}", fromlist=[name])
        assert module.__file__ is not None and module.__file__.endswith(".so"), module.__file__
    assert Path(alertstation._native.__file__).parent == ROOT / "src" / "_native"


@pytest.mark.slow
def test_wheel_contains_compiled_modules_that_import(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("alertstation-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    sources = sorted(p.stem for p in (ROOT / "src" / "_native").glob("*.pyx"))
    for name in sources:
        assert any(
            n.startswith(f"alertstation/_native/{name}.") and n.endswith(".so") for n in names
        )
    assert any(n.startswith("alertstation/migrations/versions/2") for n in names)
    assert "alertstation/web/templates/base.html" in names
    assert "alertstation/web/guides/quick-start.md" in names  # the guides /docs serves
    assert "alertstation/web/guides/release-notes.md" in names  # the upgrade page's notes
    assert "alertstation/CHANGELOG.md" in names  # quoted by /repo-stats
    assert "alertstation/web/static/css/app.css" in names

    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    probe = (
        "import alertstation._native as n, importlib, sys; "
        f"mods = [importlib.import_module('alertstation._native.' + m) for m in {sources!r}]; "
        "print(n.__file__); print(*(m.__file__ for m in mods))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(unpacked), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    for line in result.stdout.split():
        assert line.startswith(str(unpacked)), result.stdout
