"""Database layer: the shared metadata, engines, generation counters and migrations.

``alertstation.db.metadata`` is complete once this package is imported: the schema module pulls
in every domain's ``tables.py``.
"""

from alertstation.db.engine import begin_write, make_engine
from alertstation.db.generations import GenerationCache, bump_generation, read_generation
from alertstation.db.schema import metadata

__all__ = [
    "GenerationCache",
    "begin_write",
    "bump_generation",
    "make_engine",
    "metadata",
    "read_generation",
]
