"""The lazy-import stand-in imports its module on first use, not before."""

import subprocess
import sys

import pytest

from alertstation import lazy


def test_module_is_imported_on_first_attribute_access() -> None:
    # A fresh interpreter, so that no other test has imported the module already.
    code = (
        "import sys\n"
        "from alertstation import lazy\n"
        "m = lazy.module('colorsys')\n"
        "assert 'colorsys' not in sys.modules and not m.loaded\n"
        "assert m.rgb_to_hsv(1.0, 0.0, 0.0)[0] == 0.0\n"
        "assert 'colorsys' in sys.modules and m.loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_load_returns_the_same_module() -> None:
    assert lazy.load("json") is sys.modules["json"]


@pytest.mark.parametrize("name", ["", "scipy..signal", "1bad", "a-b"])
def test_module_refuses_what_is_not_a_module_name(name: str) -> None:
    with pytest.raises(ValueError, match="not a module name"):
        lazy.module(name)


def test_a_missing_module_fails_on_use_with_its_name() -> None:
    missing = lazy.module("alertstation_no_such_module")
    with pytest.raises(ModuleNotFoundError, match="alertstation_no_such_module"):
        missing.anything  # noqa: B018
