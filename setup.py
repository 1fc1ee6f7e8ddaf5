"""Build the alertstation package and its Cython kernels.

Every ``src/_native/*.pyx`` becomes ``alertstation._native.<name>``. Templates, static files, the
operator guides (``web/guides/``, served at /docs) and Alembic migrations live beside ``src/`` in
the repository and ship inside the package. The developer documentation in ``docs/`` does not.
"""

from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent
VERSION = (ROOT / "VERSION").read_text().strip()


def native_extensions() -> list[Extension]:
    """Return one extension per kernel source, compiled with -O3 and numpy headers."""
    extensions = []
    for source in sorted((ROOT / "src" / "_native").glob("*.pyx")):
        extensions.append(
            Extension(
                f"alertstation._native.{source.stem}",
                [str(source.relative_to(ROOT))],
                include_dirs=[numpy.get_include()],
                extra_compile_args=["-O3"],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    return cythonize(
        extensions,
        language_level=3,
        compiler_directives={"embedsignature": True},
    )


def data_packages(package: str, folder: str) -> dict[str, str]:
    """Map ``folder`` and each folder below it to a package name, for package_dir.

    Every folder that ships files is declared as a package of its own, so its files are package
    data of a named package rather than data that setuptools has to guess at.
    """
    base = ROOT / folder
    folders = [base, *sorted(p for p in base.rglob("*") if p.is_dir() and p.name != "__pycache__")]
    return {
        ".".join([package, *path.relative_to(base).parts]): str(path.relative_to(ROOT))
        for path in folders
    }


def files_in(folder: str) -> list[str]:
    """List the data files directly in ``folder`` (Python modules and bytecode are not data)."""
    return sorted(
        path.name
        for path in (ROOT / folder).iterdir()
        if path.is_file() and path.suffix not in (".py", ".pyc")
    )


class BuildWithChangelog(build_py):
    """Copy CHANGELOG.md into the package too: /repo-stats quotes it on an installed station."""

    def run(self) -> None:
        super().run()
        if not self.dry_run:
            # An editable build's build_lib holds no package folder: make it, and name the file,
            # or the copy would become a file called "alertstation".
            target = Path(self.build_lib) / "alertstation"
            self.mkpath(str(target))
            self.copy_file(str(ROOT / "CHANGELOG.md"), str(target / "CHANGELOG.md"))


WEB = data_packages("alertstation.web", "web")

setup(
    version=VERSION,
    package_dir={
        "": "src",
        "alertstation._native": "src/_native",
        "alertstation.migrations": "migrations",
        "alertstation.migrations.versions": "migrations/versions",
        **WEB,
    },
    packages=[
        *find_packages("src", exclude=["_native*"]),
        "alertstation._native",
        "alertstation.migrations",
        "alertstation.migrations.versions",
        *WEB,
    ],
    package_data={
        "alertstation._native": ["*.pyi", "*.pxd", "py.typed"],
        "alertstation.migrations": ["script.py.mako"],
        "alertstation.zones": ["*.csv.gz"],
        **{name: files_in(folder) for name, folder in WEB.items()},
    },
    ext_modules=native_extensions(),
    cmdclass={"build_py": BuildWithChangelog},
    zip_safe=False,
)
