"""The operator guides and the changelog ship inside the package, the developer docs do not: an
installed station needs no source."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_built_package_carries_every_guide_and_reads_them_from_itself(tmp_path: Path) -> None:
    build = tmp_path / "lib"
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(build)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    guides = sorted(p.name for p in (ROOT / "web" / "guides").glob("*.md"))
    shipped = build / "alertstation" / "web" / "guides"
    assert sorted(p.name for p in shipped.glob("*.md")) == guides
    assert not (build / "alertstation" / "guides").exists()  # docs/ stays in the repository
    assert not list(build.rglob("architecture.md"))

    probe = (
        "from alertstation.operations.public.guides import GuideLibrary\n"
        "library = GuideLibrary()\n"
        "print(library.folder)\n"
        "print(' '.join(library.names()))\n"
        "print([hit.guide.name for hit in library.search('EOM')][:20])\n"
        "from alertstation.operations.public.repo_stats import changelog_path\n"
        "print(changelog_path())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(build), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        timeout=120,
    )
    folder, names, found, changelog = result.stdout.splitlines()
    assert folder == str(shipped)
    assert names.split() == sorted(name.removesuffix(".md") for name in guides)
    assert "'stop-a-message'" in found
    assert changelog == str(build / "alertstation" / "CHANGELOG.md")
