"""Build the alertstation package and its Cython kernels.

Every ``src/_native/*.pyx`` becomes ``alertstation._native.<name>``. Templates, static files and
Alembic migrations live beside ``src/`` in the repository and ship inside the package.
"""

from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

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


def data_files_under(folder: str) -> list[str]:
    """List every file below a package folder, relative to it, for package_data."""
    base = ROOT / folder
    return [
        str(path.relative_to(base))
        for path in base.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    ]


setup(
    version=VERSION,
    package_dir={
        "": "src",
        "alertstation._native": "src/_native",
        "alertstation.migrations": "migrations",
        "alertstation.migrations.versions": "migrations/versions",
        "alertstation.web": "web",
    },
    packages=[
        *find_packages("src", exclude=["_native*"]),
        "alertstation._native",
        "alertstation.migrations",
        "alertstation.migrations.versions",
        "alertstation.web",
    ],
    package_data={
        "alertstation._native": ["*.pyi", "*.pxd", "py.typed"],
        "alertstation.migrations": ["script.py.mako"],
        "alertstation.web": data_files_under("web"),
    },
    ext_modules=native_extensions(),
    zip_safe=False,
)
