"""Readers for ``child_reader`` tests: each unpickled in the child, so they import little."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Raising:
    """Send the file's first line, then raise."""

    def file_messages(self, path: Path) -> Iterator[tuple[Any, ...]]:
        yield "line", path.read_text().splitlines()[0]
        raise ValueError("a byte the reader cannot take at offset 7")


@dataclass
class Exiting:
    """Send one message, then end the process without a word."""

    code: int

    def file_messages(self, path: Path) -> Iterator[tuple[Any, ...]]:
        yield ("started",)
        os._exit(self.code)


@dataclass
class Endless:
    """Write the process id beside the file, then send messages without end."""

    def file_messages(self, path: Path) -> Iterator[tuple[Any, ...]]:
        path.with_suffix(".pid").write_text(str(os.getpid()))
        number = 0
        while True:
            number += 1
            yield "tick", number, "x" * 1_000


@dataclass
class Noisy:
    """Print to the standard output (which must not reach the messages), then send the text."""

    def file_messages(self, path: Path) -> Iterator[tuple[Any, ...]]:
        print("a stray line on stdout")
        yield "text", path.read_text()


@dataclass
class Counting:
    """Send messages of a MiB without end, writing beside the file how many it has made."""

    def file_messages(self, path: Path) -> Iterator[tuple[Any, ...]]:
        made = path.with_suffix(".made")
        number = 0
        while True:
            number += 1
            yield "big", number, b"x" * 2**20
            made.with_suffix(".new").write_text(str(number))
            made.with_suffix(".new").replace(made)
