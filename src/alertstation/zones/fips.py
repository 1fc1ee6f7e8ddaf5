"""Describe SAME location codes with the county FIPS table and its subdivision index.

A SAME location code is PSSCCC: P is the part of the county (0 = all of it), SS the state FIPS
number and CCC the county FIPS number. ``county_fips`` maps the five digits SSCCC to a county and
its state; ``county_subdivisions`` names the parts (P = 1..9) that the partial-counties file
defines. Both tables are filled by syncing the ``partial`` family (the agency's cs*.dbf).

The functions here take either an open connection or a :class:`ZoneCatalog`, whose cached index
answers without a query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from alertstation.zones.tables import county_fips, county_subdivisions

_SAME = re.compile(r"^\d{6}$")
ENTIRE_US = "000000"


@dataclass(frozen=True, slots=True)
class County:
    """One county (or county-equivalent) by its five-digit FIPS code."""

    fips: str
    state_code: str
    name: str


@dataclass(frozen=True)
class CountyIndex:
    """Counties by FIPS, subdivision names by SAME code, and state codes by state FIPS."""

    counties: dict[str, County]
    subdivisions: dict[str, str]

    @property
    def states(self) -> dict[str, str]:
        """Return the two-letter state code of each two-digit state FIPS number."""
        return {fips[:2]: county.state_code for fips, county in self.counties.items()}


def load_county_index(conn: Connection) -> CountyIndex:
    """Read the whole county FIPS table and subdivision index into memory."""
    counties = {
        row.fips: County(row.fips, row.state_code, row.county_name)
        for row in conn.execute(
            select(county_fips.c.fips, county_fips.c.state_code, county_fips.c.county_name)
        )
    }
    subdivisions = {
        row.same_code: row.name
        for row in conn.execute(select(county_subdivisions.c.same_code, county_subdivisions.c.name))
    }
    return CountyIndex(counties, subdivisions)


def county_for(source: Connection | Any, fips: str) -> County | None:
    """Return the county with five-digit FIPS ``fips`` (SSCCC), None when it is not known."""
    fips = fips.strip()
    index = _index_of(source)
    if index is not None:
        return index.counties.get(fips)
    row = source.execute(
        select(county_fips.c.fips, county_fips.c.state_code, county_fips.c.county_name).where(
            county_fips.c.fips == fips
        )
    ).first()
    return County(row.fips, row.state_code, row.county_name) if row else None


def subdivision_name(source: Connection | Any, same_code: str) -> str | None:
    """Return the name of the county part a PSSCCC code with P ≠ 0 names, None when unknown."""
    index = _index_of(source)
    if index is not None:
        return index.subdivisions.get(same_code)
    return source.execute(
        select(county_subdivisions.c.name).where(county_subdivisions.c.same_code == same_code)
    ).scalar()


def describe_same_code(source: Connection | Any, code: str) -> str | None:
    """Describe a SAME location code PSSCCC in words; None when malformed or unknown.

    ``010019`` → ``Calhoun, AL``; ``527053`` → ``Central Hennepin (part of Hennepin, MN)``; a part
    the index does not name → ``Part 5 of Hennepin, MN``; ``048000`` → ``All of TX``;
    ``000000`` → ``United States``.
    """
    code = code.strip()
    if not _SAME.match(code):
        return None
    if code == ENTIRE_US:
        return "United States"
    part, fips = int(code[0]), code[1:]
    if fips.endswith("000"):
        state = _state_for(source, fips[:2])
        return f"All of {state}" if state else None
    county = county_for(source, fips)
    if county is None:
        return None
    place = f"{county.name}, {county.state_code}"
    if part == 0:
        return place
    name = subdivision_name(source, code)
    if name and name != county.name:
        return f"{name} (part of {place})"
    return f"Part {part} of {place}"


def _state_for(source: Connection | Any, state_fips: str) -> str | None:
    index = _index_of(source)
    if index is not None:
        return index.states.get(state_fips)
    return source.execute(
        select(county_fips.c.state_code).where(county_fips.c.fips.startswith(state_fips)).limit(1)
    ).scalar()


def _index_of(source: Connection | Any) -> CountyIndex | None:
    if isinstance(source, Connection):
        return None
    county_index = getattr(source, "county_index", None)
    if county_index is None:
        raise TypeError("expected a Connection or a ZoneCatalog")
    return county_index()
