"""The getopt reader itself: every way an option takes its value, as GNU getopt_long reads it."""

from __future__ import annotations

import pytest

from alertstation.audio.capture.getopt import OptionError, parse, table

TABLE = table(
    "qD:V::",
    {"quiet": ("q", 0), "device": ("D", 1), "vumeter": ("V", 2), "verbose": ("v", 0)},
)


@pytest.mark.parametrize(
    ("args", "options", "operands"),
    [
        (["-qDnull", "x"], [("q", None), ("D", "null")], ["x"]),
        (["-D", "null"], [("D", "null")], []),
        (["-V", "x"], [("V", None)], ["x"]),
        (["-Vmono"], [("V", "mono")], []),
        (["--dev=null"], [("D", "null")], []),
        (["--device", "null"], [("D", "null")], []),
        (["--device=", "x"], [("D", "")], ["x"]),  # an attached empty value is a value
        (["--vumeter", "x"], [("V", None)], ["x"]),
        (["--vumeter=stereo"], [("V", "stereo")], []),
        (["--quiet", "--", "-D"], [("q", None)], ["-D"]),
    ],
)
def test_values_attached_optional_or_next(
    args: list[str], options: list[tuple[str, str | None]], operands: list[str]
) -> None:
    parsed = parse(args, TABLE)
    assert (parsed.options, parsed.operands) == (options, operands)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-D"], "option -D needs a value"),
        (["-qD"], "option -D needs a value"),
        (["--device"], "option --device needs a value"),
        (["--quiet=yes"], "option --quiet takes no value"),
        (["--v"], "ambiguous option --v"),
        (["-x"], "unknown option -x"),
        (["x", "-q"], "after an operand"),
    ],
)
def test_refusals_name_the_option(args: list[str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse(args, TABLE)
