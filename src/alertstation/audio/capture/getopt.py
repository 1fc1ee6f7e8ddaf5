"""Read an argument list as GNU ``getopt_long`` does, without running the program.

A receiver's command is checked by reading its arguments with the program's own option rules, so
that a clustered short option (``-qDnull`` is ``-q -D null``), an attached value (``-Dnull``), a
``--name=value`` or ``--name value`` pair and an abbreviated long option (``--dev=null`` is
``--device=null``) all mean here what they mean to the program. The option tables must list every
option the program knows (not only the allowed ones): an abbreviation resolves against all of
them, as the program resolves it, and an option missing from the table is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

#: How an option takes its value.
NONE, REQUIRED, OPTIONAL = 0, 1, 2


class OptionError(ValueError):
    """The arguments do not parse as the program would read them."""


@dataclass(frozen=True)
class Table:
    """A program's options: short letters and long names, each to (key, how it takes a value).

    ``key`` is the option's one name for the allowed-options check (the short letter when the
    option has one). ``permute`` is GNU getopt's default (options may follow operands); a
    table whose option string starts with ``+`` stops at the first operand.
    """

    short: Mapping[str, tuple[str, int]]
    long: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    permute: bool = True


@dataclass(frozen=True)
class Parsed:
    """The options in order, as (key, value or None), and the operands in order."""

    options: list[tuple[str, str | None]]
    operands: list[str]


def parse(args: Sequence[str], table: Table) -> Parsed:
    """Read ``args`` (without the program) by ``table``'s rules; OptionError when it fails.

    An option after an operand is refused even where the program would permute it, so that what
    is an operand never depends on the program's environment (``POSIXLY_CORRECT``).
    """
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            operands.extend(args[index + 1 :])
            break
        if is_option(arg):
            if operands:
                raise OptionError(f"option {arg!r} after an operand; put options first")
            index = take_option(args, index, table, options)
        else:
            operands.append(arg)
            index += 1
    return Parsed(options, operands)


def is_option(arg: str) -> bool:
    """Tell whether getopt reads ``arg`` as an option (``-`` alone is an operand)."""
    return arg.startswith("-") and arg != "-"


def take_option(
    args: Sequence[str], index: int, table: Table, options: list[tuple[str, str | None]]
) -> int:
    """Read the option at ``args[index]`` (and its value) into ``options``; return what follows."""
    arg = args[index]
    if arg.startswith("--"):
        return _long(arg, args, index + 1, table, options)
    return _cluster(arg, args, index + 1, table, options)


def _long(
    arg: str,
    args: Sequence[str],
    index: int,
    table: Table,
    options: list[tuple[str, str | None]],
) -> int:
    name, eq, value = arg[2:].partition("=")
    key, how = resolve_long(name, table)
    if how == NONE:
        if eq:
            raise OptionError(f"option --{name} takes no value")
        options.append((key, None))
        return index
    return _take_value(key, how, value if eq else None, args, index, f"--{name}", options)


def resolve_long(name: str, table: Table) -> tuple[str, int]:
    """Return (key, how) of a long option name or unique abbreviation, as getopt_long does."""
    if not name:
        raise OptionError("an empty long option name")
    if name in table.long:
        return table.long[name]
    matches = {table.long[full] for full in table.long if full.startswith(name)}
    if not matches:
        raise OptionError(f"unknown option --{name}")
    if len(matches) > 1:
        raise OptionError(f"ambiguous option --{name}")
    return matches.pop()


def _cluster(
    arg: str,
    args: Sequence[str],
    index: int,
    table: Table,
    options: list[tuple[str, str | None]],
) -> int:
    position = 1
    while position < len(arg):
        letter = arg[position]
        if letter not in table.short:
            raise OptionError(f"unknown option -{letter}")
        key, how = table.short[letter]
        if how == NONE:
            options.append((key, None))
            position += 1
            continue
        attached = arg[position + 1 :] or None
        return _take_value(key, how, attached, args, index, f"-{letter}", options)
    return index


def _take_value(
    key: str,
    how: int,
    attached: str | None,
    args: Sequence[str],
    index: int,
    label: str,
    options: list[tuple[str, str | None]],
) -> int:
    """Record an option that takes a value: the attached one (``--name=`` attaches an empty
    one), none when it is optional, else the next argument. Return the index of what follows."""
    if attached is not None:
        options.append((key, attached))
    elif how == OPTIONAL:
        options.append((key, None))
    else:
        if index >= len(args):
            raise OptionError(f"option {label} needs a value")
        options.append((key, args[index]))
        index += 1
    return index


def table(optstring: str, longs: Mapping[str, tuple[str, int]]) -> Table:
    """Build a Table from a getopt option string (``D:`` takes a value, ``V::`` may) and longs."""
    permute = not optstring.startswith("+")
    text = optstring.lstrip("+")
    short: dict[str, tuple[str, int]] = {}
    position = 0
    while position < len(text):
        letter = text[position]
        colons = 0
        while position + 1 + colons < len(text) and text[position + 1 + colons] == ":":
            colons += 1
        short[letter] = (letter, min(colons, OPTIONAL))
        position += 1 + colons
    return Table(short, dict(longs), permute)
