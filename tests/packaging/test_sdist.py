"""A packager's path: sdist → wheel built from the sdist alone → its kernels import."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_wheel_builds_from_the_sdist_and_its_kernels_import(tmp_path: Path) -> None:
    pytest.importorskip("build")
    sdist_dir, wheel_dir = tmp_path / "sdist", tmp_path / "wheel"
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(sdist_dir), "."],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=600,
    )
    (sdist,) = sdist_dir.glob("alertstation-*.tar.gz")
    version = (ROOT / "VERSION").read_text().strip()
    assert sdist.name == f"alertstation-{version}.tar.gz"
    names = tarfile.open(sdist).getnames()
    top = f"alertstation-{version}"
    kernels = sorted(p.stem for p in (ROOT / "src" / "_native").glob("*.pyx"))
    for needed in ("VERSION", "CHANGELOG.md", *(f"src/_native/{k}.pyx" for k in kernels)):
        assert f"{top}/{needed}" in names, needed
    assert not [n for n in names if n.endswith(".so")]

    # Build the wheel from the unpacked sdist, far from the source tree.
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(wheel_dir), str(tmp_path / "unpacked" / top)],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=900,
    )
    (wheel,) = wheel_dir.glob("alertstation-*.whl")
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    assert (site / "alertstation" / "CHANGELOG.md").is_file()
    probe = (
        "import importlib, alertstation.version as v; "
        f"mods = [importlib.import_module('alertstation._native.' + m) for m in {kernels!r}]; "
        "print(v.__version__); print(*(m.__file__ for m in mods))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    printed_version, *files = result.stdout.split()
    assert printed_version == version
    assert len(files) == len(kernels) and all(f.startswith(str(site)) for f in files)
