"""Insert many rows through SQLite's C interface, inside the caller's own ``sqlite3`` connection.

Use it through ``alertstation.db.staged_insert``; ``executemany`` is its reference twin.
"""

from collections.abc import Sequence
from typing import Any

def register() -> bool:
    """Add the SQL function to every connection the loaded SQLite library opens from now on."""

def registered() -> bool:
    """Tell whether ``register`` has succeeded."""

def stage(sql: str, columns: Sequence[Sequence[Any]], count: int) -> int:
    """Hold rows for the SQL function; return the token to pass it."""

def unstage(token: int) -> None:
    """Drop the rows held for ``token``; raise what stopped their insert, if anything."""
