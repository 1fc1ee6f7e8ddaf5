"""GET /api/fips/counties: states, then a state's counties by name, for the Manual EAS picker."""

from __future__ import annotations

from sqlalchemy import Engine

from alertstation.db.engine import begin_write
from alertstation.zones.tables import county_fips, county_subdivisions
from tests.support import StationHarness

COUNTIES = [("39085", "OH", "Lake"), ("39049", "OH", "Franklin"), ("18089", "IN", "Lake")]


def load_counties(station: StationHarness, engine: Engine) -> None:
    with begin_write(engine) as conn:
        for fips, state, name in COUNTIES:
            conn.execute(
                county_fips.insert().values(
                    fips=fips,
                    state_code=state,
                    county_name=name,
                    cwa="CLE",
                    time_zone="E",
                    fe_area="",
                )
            )
        conn.execute(
            county_subdivisions.insert().values(
                same_code="239049", county_fips="39049", part=2, name="North Franklin"
            )
        )
    station.app.station.zones.clear()


def test_states_then_counties_by_name_with_codes(station: StationHarness, engine: Engine) -> None:
    load_counties(station, engine)
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")
    states = ops.request("GET", "/api/fips/counties").json
    by_code = {state["code"]: state for state in states["states"]}
    assert by_code["OH"] == {"fips": "39", "code": "OH", "counties": 2}
    assert by_code["WY"]["counties"] == 0  # every state is offered, even without counties
    assert states["parts"]["0"] == "Whole county" and states["parts"]["9"] == "Southeast"

    ohio = ops.request("GET", "/api/fips/counties", params={"state": "39"}).json
    assert ohio["state"] == {"fips": "39", "code": "OH"}
    assert ohio["whole_state"] == "039000"
    assert [(c["name"], c["same"]) for c in ohio["counties"]] == [
        ("Franklin", "039049"),
        ("Lake", "039085"),
    ]
    assert ohio["counties"][0]["subdivisions"] == {"239049": "North Franklin"}


def test_a_bad_state_is_refused_and_the_table_needs_eas_broadcast(
    station: StationHarness,
) -> None:
    station.add_user("ops", "operator")
    station.add_user("watcher", "viewer")
    bad = station.sign_in("ops").request("GET", "/api/fips/counties", params={"state": "3x"})
    assert bad.status_code == 422 and "state FIPS" in bad.json["error"]["message"]
    unknown = station.sign_in("ops").request("GET", "/api/fips/counties", params={"state": "03"})
    assert unknown.status_code == 422
    assert station.sign_in("watcher").request("GET", "/api/fips/counties").status_code == 403
    assert station.client.simulate_get("/api/fips/counties").status_code == 401
