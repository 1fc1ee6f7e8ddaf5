"""Database layer: the shared metadata, engines, generation counters and migrations.

This package is the bottom layer and imports no domain. ``metadata`` here is the shared
``MetaData`` object; it describes the whole schema only once every domain's ``tables.py`` is
imported, which ``alertstation.schema`` does (migrations and ``create_all`` use that).
"""

from alertstation.db.engine import begin_write, make_engine
from alertstation.db.generations import (
    NO_RETRY,
    GenerationCache,
    bump_generation,
    read_generation,
)
from alertstation.db.metadata import metadata

__all__ = [
    "NO_RETRY",
    "GenerationCache",
    "begin_write",
    "bump_generation",
    "make_engine",
    "metadata",
    "read_generation",
]
