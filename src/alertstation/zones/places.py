"""Name SAME location codes in words, as plain-language EAS text reads them.

A code is PSSCCC (47 CFR 11.31(c)): P the part of the county, SS the state, territory or
offshore marine area, CCC the county (``000`` for the whole state or area).

* ``000000`` is "the United States"; ``0SS000`` "all of Ohio";
* a county reads "Putnam, OH", from the synced county table, else the bundled snapshot;
* a part the partial-counties table names reads with that name ("Central Hennepin, MN"); one it
  does not name reads with 11.31(c)'s direction ("Northwest Putnam, OH");
* a marine code ``0SSCCC`` of an offshore or Great Lakes area reads with the catalog's name of
  its marine zone (``073530`` is zone ANZ530);
* anything unknown stays as the code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from alertstation.same import MARINE_AREAS
from alertstation.zones.county_snapshot import bundled_county_index
from alertstation.zones.fips import County, CountyIndex

if TYPE_CHECKING:
    from alertstation.zones.catalog import ZoneCatalog

NATION: Final[str] = "000000"

#: 47 CFR 11.31(c): the county part P names.
DIRECTIONS: Final[dict[int, str]] = {
    1: "Northwest",
    2: "North",
    3: "Northeast",
    4: "West",
    5: "Central",
    6: "East",
    7: "Southwest",
    8: "South",
    9: "Southeast",
}

#: State, district and territory names by two-digit FIPS number.
STATE_NAMES: Final[dict[str, str]] = {
    "01": "Alabama", "02": "Alaska", "04": "Arizona", "05": "Arkansas", "06": "California",
    "08": "Colorado", "09": "Connecticut", "10": "Delaware", "11": "the District of Columbia",
    "12": "Florida", "13": "Georgia", "15": "Hawaii", "16": "Idaho", "17": "Illinois",
    "18": "Indiana", "19": "Iowa", "20": "Kansas", "21": "Kentucky", "22": "Louisiana",
    "23": "Maine", "24": "Maryland", "25": "Massachusetts", "26": "Michigan", "27": "Minnesota",
    "28": "Mississippi", "29": "Missouri", "30": "Montana", "31": "Nebraska", "32": "Nevada",
    "33": "New Hampshire", "34": "New Jersey", "35": "New Mexico", "36": "New York",
    "37": "North Carolina", "38": "North Dakota", "39": "Ohio", "40": "Oklahoma", "41": "Oregon",
    "42": "Pennsylvania", "44": "Rhode Island", "45": "South Carolina", "46": "South Dakota",
    "47": "Tennessee", "48": "Texas", "49": "Utah", "50": "Vermont", "51": "Virginia",
    "53": "Washington", "54": "West Virginia", "55": "Wisconsin", "56": "Wyoming",
    "60": "American Samoa", "64": "the Federated States of Micronesia", "66": "Guam",
    "68": "the Marshall Islands", "69": "the Northern Mariana Islands", "70": "Palau",
    "72": "Puerto Rico", "74": "the U.S. Minor Outlying Islands", "78": "the U.S. Virgin Islands",
}  # fmt: skip

#: Offshore and Great Lakes marine areas: SAME area number → UGC prefix of its marine zones.
MARINE_PREFIXES: Final[dict[str, str]] = {f"{n:02d}": p for n, p in MARINE_AREAS.items()}


def marine_zone_code(code: str) -> str | None:
    """Return the UGC marine zone a SAME code names (``073530`` → ``ANZ530``), else None."""
    prefix = MARINE_PREFIXES.get(code[1:3]) if len(code) == 6 and code.isdigit() else None
    if prefix is None or code[3:] == "000":
        return None
    return f"{prefix}Z{code[3:]}"


class PlaceNames:
    """Names location codes from the synced catalog, falling back to the bundled snapshot.

    Without a catalog (a command with no database) counties and parts come from the bundled
    snapshot alone and marine codes stay as codes.
    """

    def __init__(
        self, catalog: ZoneCatalog | None = None, *, bundled: CountyIndex | None = None
    ) -> None:
        self._catalog = catalog
        self._bundled = bundled if bundled is not None else bundled_county_index()
        self._synced: CountyIndex | None = catalog.county_index() if catalog else None

    def county(self, fips: str) -> County | None:
        """Return the county of five-digit FIPS ``fips``, synced table first."""
        if self._synced is not None and fips in self._synced.counties:
            return self._synced.counties[fips]
        return self._bundled.counties.get(fips)

    def part_name(self, code: str) -> str | None:
        """Return the name the partial-counties table gives the county part ``code``."""
        if self._synced is not None and code in self._synced.subdivisions:
            return self._synced.subdivisions[code]
        return self._bundled.subdivisions.get(code)

    def describe(self, code: str) -> str:
        """Return ``code`` in words; an unknown or malformed code is returned unchanged."""
        if len(code) != 6 or not code.isdigit():
            return code
        if code == NATION:
            return "the United States"
        part, area, county_code = int(code[0]), code[1:3], code[3:]
        if area in MARINE_PREFIXES:
            return self._marine(code)
        state = STATE_NAMES.get(area)
        if county_code == "000":
            if state is None:
                return code
            return f"all of {state}" if part == 0 else f"{DIRECTIONS[part]} {state}"
        county = self.county(code[1:])
        if county is None:
            return code
        if part == 0:
            return f"{county.name}, {county.state_code}"
        named = self.part_name(code)
        if named and named != county.name:
            return f"{named}, {county.state_code}"
        return f"{DIRECTIONS[part]} {county.name}, {county.state_code}"

    def describe_all(self, codes: Iterable[str]) -> list[str]:
        """Return each code in words, in order."""
        return [self.describe(code) for code in codes]

    def _marine(self, code: str) -> str:
        zone = marine_zone_code(code)
        name = self._catalog.name_for(zone) if zone and self._catalog is not None else None
        return name or code
