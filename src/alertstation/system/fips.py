"""GET /api/fips/counties: the county FIPS table for the Manual EAS county picker.

Without ``state``: every state (FIPS number, postal code, how many counties the table holds).
With ``state=SS``: that state's counties by name, each with its whole-county SAME code, the
names of the nine county parts and any named subdivisions the partial-counties file defines.
"""

from __future__ import annotations

from typing import Any

import falcon

from alertstation.alerts.matching import FIPS_STATE
from alertstation.context import Station
from alertstation.errors import Invalid
from alertstation.zones.fips import CountyIndex

# The part digit P of a SAME code PSSCCC (47 CFR 11.31(c)): 0 is the whole county.
PARTS: dict[str, str] = {
    "0": "Whole county",
    "1": "Northwest",
    "2": "North central",
    "3": "Northeast",
    "4": "West central",
    "5": "Central",
    "6": "East central",
    "7": "Southwest",
    "8": "South central",
    "9": "Southeast",
}


def list_states(index: CountyIndex) -> list[dict[str, Any]]:
    """Return every state with a FIPS number, by postal code, with its county count."""
    counts: dict[str, int] = {}
    for fips in index.counties:
        counts[fips[:2]] = counts.get(fips[:2], 0) + 1
    return sorted(
        (
            {"fips": f"{number:02d}", "code": code, "counties": counts.get(f"{number:02d}", 0)}
            for number, code in FIPS_STATE.items()
        ),
        key=lambda state: state["code"],
    )


def list_counties(index: CountyIndex, state: str) -> list[dict[str, Any]]:
    """Return the counties of state FIPS ``state`` by name, with their SAME codes."""
    counties = [county for fips, county in index.counties.items() if fips[:2] == state]
    counties.sort(key=lambda county: (county.name.lower(), county.fips))
    return [
        {
            "fips": county.fips,
            "name": county.name,
            "same": f"0{county.fips}",
            "subdivisions": {
                code: name for code, name in index.subdivisions.items() if code[1:] == county.fips
            },
        }
        for county in counties
    ]


def check_state(value: str) -> str:
    """Return a two-digit state FIPS number; raise Invalid for anything else."""
    if len(value) != 2 or not value.isdigit() or int(value) not in FIPS_STATE:
        raise Invalid(f"state must be a two-digit state FIPS number, not {value[:8]!r}")
    return value


class CountyTableApi:
    """GET /api/fips/counties[?state=SS]."""

    def __init__(self, station: Station) -> None:
        self._zones = station.zones

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        index = self._zones.county_index()
        state = req.get_param("state")
        if state is None:
            resp.media = {"states": list_states(index), "parts": PARTS}
            return
        state = check_state(state)
        resp.media = {
            "state": {"fips": state, "code": FIPS_STATE[int(state)]},
            "whole_state": f"0{state}000",
            "counties": list_counties(index, state),
            "parts": PARTS,
        }
