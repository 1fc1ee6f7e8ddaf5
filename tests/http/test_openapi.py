"""The OpenAPI 3.1 document: valid, complete (every JSON route has a schema), and true.

One SQLite station serves the module: the document is checked against the route registry, every
GET route without a path field is asked for JSON as an administrator (a 2xx JSON answer needs a
declared JSON schema), and real answers of representative routes, after real writes, are
validated against the schemas the document declares for them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import jsonschema
import orjson
import pytest
from openapi_spec_validator import validate
from sqlalchemy import create_engine

from alertstation import cli
from alertstation.app import StationApp, create_app, route_schemas
from alertstation.db.metadata import metadata
from alertstation.http.openapi import (
    STRING,
    RouteSchema,
    api,
    array,
    build_document,
    missing_schemas,
    named,
    obj,
    openapi_path,
)
from alertstation.http.routing import PUBLIC, Route, permission
from tests.support import HeaderIdentity, make_settings


class AdminIdentity(HeaderIdentity):
    """The X-Test-Role caller, without a cookie session (as a token client will be)."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        super().process_request(req, resp)
        req.context.session = None


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
ADMIN = {"X-Test-Role": "admin", "Accept": "application/json"}
HTML = "text/html"


@pytest.fixture(scope="module")
def station_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StationApp]:
    folder = tmp_path_factory.mktemp("openapi")
    url = f"sqlite:///{folder}/station.sqlite"
    engine = create_engine(url)
    metadata.create_all(engine)
    yield create_app(
        make_settings(folder, url), engine=engine, identity_middleware=[AdminIdentity()]
    )
    engine.dispose()


@pytest.fixture(scope="module")
def client(station_app: StationApp) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(station_app)


@pytest.fixture(scope="module")
def answers(
    station_app: StationApp, client: falcon.testing.TestClient
) -> dict[str, falcon.testing.Result]:
    return probe_get_routes(client, list(station_app.registry), route_schemas())


@pytest.fixture(scope="module")
def document(client: falcon.testing.TestClient) -> dict[str, Any]:
    answer = client.simulate_get("/api/openapi.json", headers=ADMIN)
    assert answer.status_code == 200, answer.text
    return answer.json


def _is_json(result: falcon.testing.Result) -> bool:
    return result.headers.get("content-type", "").startswith("application/json")


def probe_get_routes(
    client: falcon.testing.TestClient,
    routes: list[Route],
    schemas: Mapping[tuple[str, str], RouteSchema],
) -> dict[str, falcon.testing.Result]:
    """Ask every GET route without a path field for JSON, as an administrator.

    A route declared as a file download (CSV, PDF, WAV...) is left out: it cannot be a page
    that also answers JSON, and rendering it is slow.
    """
    answers = {}
    for route in routes:
        declared = schemas.get((route.method, route.path))
        if route.method != "GET" or "{" in route.path:
            continue
        if declared is not None and not declared.answers_json and HTML not in declared.media:
            continue  # a download, a redirect or an empty answer
        answers[route.path] = client.simulate_get(route.path, headers=ADMIN)
    return answers


def undeclared_json_routes(
    routes: list[Route],
    schemas: Mapping[tuple[str, str], RouteSchema],
    answers: Mapping[str, falcon.testing.Result],
) -> list[str]:
    """Return the routes that declare nothing, or answer JSON without a JSON schema."""
    found = [f"{method} {path}: no schema" for method, path in missing_schemas(routes, schemas)]
    for path, answer in answers.items():
        declared = schemas.get(("GET", path))
        if declared is None:
            continue
        if 200 <= answer.status_code < 300 and _is_json(answer) and not declared.answers_json:
            found.append(f"GET {path}: answers JSON but declares no JSON schema")
    return found


def check_answer(
    document: dict[str, Any], method: str, path: str, answer: falcon.testing.Result
) -> dict[str, Any]:
    """Validate a JSON answer against the schema the document declares for it; return it."""
    operation = document["paths"][openapi_path(path)[0]][method.lower()]
    declared = operation["responses"].get(str(answer.status_code))
    declared = declared or operation["responses"]["default"]
    assert _is_json(answer), f"{method} {path} answered {answer.headers.get('content-type')}"
    schema = declared["content"]["application/json"]["schema"]
    root = {"allOf": [schema], "components": document["components"]}
    jsonschema.Draft202012Validator(root).validate(answer.json)
    return answer.json


def test_routes_openapi_prints_a_valid_openapi_31_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["routes", "--openapi"]) == 0
    printed = capsys.readouterr().out
    document = orjson.loads(printed)
    validate(document)  # openapi-spec-validator picks the 3.1 schema from "openapi"
    assert document["openapi"] == "3.1.0"
    operations = [op for item in document["paths"].values() for op in item.values()]
    assert len(operations) > 150
    assert not [op["operationId"] for op in operations if op.get("x-undeclared")]


def test_every_route_declares_a_schema_and_every_declaration_a_route(
    station_app: StationApp,
) -> None:
    routes = list(station_app.registry)
    schemas = route_schemas()
    assert missing_schemas(routes, schemas) == []
    declared_routes = {(r.method, r.path) for r in routes}
    assert [key for key in schemas if key not in declared_routes] == []


def test_every_route_that_answers_json_declares_a_json_schema(
    station_app: StationApp, answers: dict[str, falcon.testing.Result]
) -> None:
    assert undeclared_json_routes(list(station_app.registry), route_schemas(), answers) == []


def test_a_json_route_without_a_schema_fails_the_check(tmp_path: Path) -> None:
    class Undeclared:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.media = {"ok": True}

    class Page:  # declared as a page below, but answers JSON when asked for it
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.media = {"page": "as JSON"}

    def extra(station: Any) -> list[Route]:
        view = permission("system.view_config")
        return [
            Route("GET", "/test/undeclared", Undeclared(), view),
            Route("GET", "/test/mislabelled", Page(), view),
        ]

    url = f"sqlite:///{tmp_path}/station.sqlite"
    engine = create_engine(url)
    metadata.create_all(engine)
    app = create_app(
        make_settings(tmp_path, url),
        engine=engine,
        extra_routes=extra,
        identity_middleware=[AdminIdentity()],
    )
    schemas = {**route_schemas(), ("GET", "/test/mislabelled"): RouteSchema(media=("text/html",))}
    routes = [route for route in app.registry if route.path.startswith("/test/")]
    answers = probe_get_routes(falcon.testing.TestClient(app), routes, schemas)
    found = undeclared_json_routes(routes, schemas, answers)
    engine.dispose()
    assert found == [
        "GET /test/undeclared: no schema",
        "GET /test/mislabelled: answers JSON but declares no JSON schema",
    ]


def test_the_document_names_access_security_schemes_and_the_error_envelope(
    document: dict[str, Any], client: falcon.testing.TestClient
) -> None:
    paths = document["paths"]
    assert paths["/api/alerts"]["get"]["x-access"] == "public"
    assert paths["/api/alerts"]["get"]["security"] == []
    assert paths["/api/zones"]["get"]["x-access"] == "signed-in"
    assert paths["/api/boundary"]["put"]["x-access"] == "permission:system.configure"
    assert paths["/admin/hostban/configure"]["post"]["x-access"] == "role:admin"
    assert paths["/admin/alerts/{alert_id}"]["patch"]["parameters"][0] == {
        "name": "alert_id",
        "in": "path",
        "required": True,
        "schema": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
    }
    schemes = document["components"]["securitySchemes"]
    assert schemes["bearer"] == {"type": "http", "scheme": "bearer"}
    assert schemes["session"] == {"type": "apiKey", "in": "cookie", "name": "alertstation_session"}
    named = document["components"]["schemas"]
    assert {"Error", "Alert", "User", "AudioSource", "IpFilter"} <= set(named)
    alerts = paths["/api/alerts"]["get"]["responses"]["200"]["content"]["application/json"]
    assert alerts["schema"]["properties"]["alerts"]["items"] == {
        "$ref": "#/components/schemas/Alert"
    }
    for path, item in paths.items():
        for operation in item.values():
            default = operation["responses"]["default"]["content"]
            assert default["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
            # A browser asking for HTML outside /api/ gets the error as a page.
            assert ("text/html" in default) is not path.startswith("/api/")
    # The document is for signed-in callers only; the error is the envelope it describes.
    refused = client.simulate_get("/api/openapi.json")
    assert refused.status_code == 401
    check_answer(document, "GET", "/api/openapi.json", refused)


def test_every_get_route_answers_within_its_schema_on_an_empty_station(
    answers: dict[str, falcon.testing.Result], document: dict[str, Any]
) -> None:
    checked = 0
    for path, answer in answers.items():
        if _is_json(answer) and answer.text:
            check_answer(document, "GET", path, answer)
            checked += 1
    assert checked > 50


def _post(client: falcon.testing.TestClient, path: str, **kwargs: Any) -> falcon.testing.Result:
    return client.simulate_post(path, headers=ADMIN, **kwargs)


def test_real_answers_after_real_writes_match_their_schemas(
    client: falcon.testing.TestClient, document: dict[str, Any]
) -> None:
    def call(method: str, template: str, status: int, **kwargs: Any) -> dict[str, Any]:
        path = template
        for value in kwargs.pop("ids", ()):
            path = re.sub(r"\{[^}]+\}", str(value), path, count=1)
        headers = kwargs.pop("headers", ADMIN)
        answer = client.simulate_request(method, path, headers=headers, **kwargs)
        assert answer.status_code == status, f"{method} {path}: {answer.text}"
        if "json" in kwargs and 200 <= status < 300:  # what the route took fits its request schema
            operation = document["paths"][openapi_path(template)[0]][method.lower()]
            schema = operation["requestBody"]["content"]["application/json"]["schema"]
            jsonschema.Draft202012Validator(schema).validate(kwargs["json"])
        return check_answer(document, method, template, answer)

    user = call(
        "POST",
        "/admin/users",
        201,
        json={"username": "opsdesk", "role": "operator", "password": "a long enough password"},
    )["user"]
    call("PATCH", "/admin/users/{user_id:int}", 200, ids=[user["id"]], json={"is_active": False})
    call("GET", "/api/admin/users", 200)
    call("DELETE", "/admin/users/{user_id:int}", 200, ids=[user["id"]])
    filtered = call(
        "POST", "/security/ip-filters", 201, json={"value": "203.0.113.7", "reason": "probe"}
    )
    call("PATCH", "/security/ip-filters/{id:int}", 200, ids=[filtered["filter"]["id"]],
         json={"active": False})  # fmt: skip
    call("GET", "/security/ip-filters", 200)
    call("DELETE", "/security/ip-filters/{id:int}", 200, ids=[filtered["filter"]["id"]])
    channel = call(
        "POST",
        "/api/notifications/channels",
        201,
        json={"name": "Duty", "url": "ntfys://ops:pw@ntfy.example.org/x", "events": ["aired"]},
    )["channel"]
    call("GET", "/api/notifications/channels", 200)
    call("PUT", "/api/notifications/channels/{channel_id:int}", 200, ids=[channel["id"]],
         json={"name": "Duty desk", "url": ""})  # fmt: skip
    call("POST", "/api/notifications/channels/{channel_id:int}/test", 202, ids=[channel["id"]])
    call("DELETE", "/api/notifications/channels/{channel_id:int}", 200, ids=[channel["id"]])
    feed = call(
        "POST",
        "/admin/poller/sources",
        201,
        json={"name": "NWS", "kind": "cap-xml", "url": "https://alerts.example.gov/feed"},
    )
    call("GET", "/admin/poller/sources", 200)
    call("PUT", "/admin/poller/sources/{source_id:int}", 200, ids=[feed["id"]],
         json={"enabled": False})  # fmt: skip
    call("DELETE", "/admin/poller/sources/{source_id:int}", 200, ids=[feed["id"]])
    cap = (FIXTURES / "cap12_svr_new.xml").read_bytes()
    imported = call(
        "POST",
        "/admin/import_alert",
        200,
        body=cap,
        headers={**ADMIN, "Content-Type": "application/xml"},
    )
    alert_id = imported["alerts"][0]["alert_id"]
    listed = call("GET", "/api/alerts", 200, params={"status": "all"})
    assert listed["total"] >= 1
    call("GET", "/api/alerts/{alert_id:int}", 200, ids=[alert_id])
    call("PATCH", "/admin/alerts/{alert_id:int}", 200, ids=[alert_id],
         json={"state": "cancelled", "reason": "test"})  # fmt: skip
    call("GET", "/api/alerts/{alert_id:int}", 404, ids=[999_999])
    call(
        "POST",
        "/api/eas/log/notes",
        201,
        json={"topic": "missed_test", "text": "No RWT from WXYZ", "source": "audio:1"},
    )
    log = call("GET", "/api/eas/log", 200)
    call("POST", "/api/eas/log/corrections", 201,
         json={"corrects": log["items"][0]["id"], "text": "The RWT came late"})  # fmt: skip
    call("POST", "/api/eas/log/reviews", 201, json={"period": "month", "month": log["month"]})
    source = call(
        "POST",
        "/api/audio/sources",
        201,
        json={
            "name": "Neighbour FM",
            "kind": "stream",
            "url": "http://127.0.0.1:9/live",
            "skip_url_check": True,
        },
    )
    call("GET", "/api/audio/sources/{source_id:int}", 200, ids=[source["id"]])
    call("GET", "/api/audio/sources", 200)
    call("PUT", "/api/audio/sources/{source_id:int}", 200, ids=[source["id"]],
         json={"name": "Neighbour FM 2"})  # fmt: skip
    call("POST", "/api/audio/sources/{source_id:int}/restart", 202, ids=[source["id"]])
    call("GET", "/api/audio/sources/{source_id:int}/archive", 200, ids=[source["id"]])
    call("DELETE", "/api/audio/sources/{source_id:int}", 200, ids=[source["id"]])
    # Settings saves answer the section saved and the names changed.
    for template, sent in (
        ("/api/traffic/settings", {"retention_days": 30}),
        ("/admin/security/autoban", {"retention_days": 14}),
        ("/admin/eas/rwt", {"enabled": False}),
        ("/admin/eas/forward", {"enabled": False}),
        ("/api/audio/settings", {"silence_seconds": 20}),
        ("/admin/eas_settings", {"icecast_enabled": False}),
        ("/api/settings/{section}", {"time_zone": "America/Chicago"}),
    ):
        call("PUT", template, 200, ids=["application"], json=sent)
    call(
        "PUT",
        "/api/environment/variables",
        200,
        json={"variables": {"ALERTSTATION_LOG_LEVEL": "debug"}},
    )
    call("POST", "/api/traffic/privacy/anonymize", 200, json={"ip": "203.0.113.9"})
    call("POST", "/api/audio/alerts/resolve-all", 200)
    call("POST", "/admin/mark_expired", 200)
    call("POST", "/admin/clear_expired", 200, json={"days": 0})
    call("DELETE", "/admin/alerts/{alert_id:int}", 404, ids=[alert_id])  # cleared as ended
    call("GET", "/api/fips/counties", 200, params={"state": "06"})
    call("GET", "/docs/search", 200, params={"q": "alert"})
    call("GET", "/api/eas/forward/rules", 200)
    activation = call(
        "POST",
        "/eas/manual/events",
        201,
        json={"event": "RWT", "org": "EAS", "locations": ["006037"], "purge": "0015"},
    )["activation"]
    call("GET", "/eas/manual/events/{activation_id:int}/confirmation", 200, ids=[activation["id"]])
    sent = call("POST", "/eas/manual/events/{activation_id:int}/send", 200,
                ids=[activation["id"]], json={"archive_only": True})  # fmt: skip
    call("GET", "/eas/manual/events", 200)
    call("GET", "/eas/queue", 200)
    call("GET", "/messages", 200)
    call("GET", "/messages/{message_id:int}/confirmation", 200, ids=[sent["message"]["id"]])
    call("DELETE", "/api/eas/airing/queue/{item_id:int}", 200, ids=[sent["queue"]["id"]])
    call("PUT", "/api/boundary", 200, json={"match_polygons": True})
    call("PUT", "/api/boundary", 400, json={"other": 1})
    call("GET", "/api/openapi.json", 200)


def test_a_name_given_to_two_different_schemas_is_refused() -> None:
    class Thing:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.media = {}

    routes = [Route("GET", "/a", Thing(), PUBLIC), Route("GET", "/b", Thing(), PUBLIC)]
    schemas = {
        ("GET", "/a"): api(named("Thing", obj(a=STRING))),
        ("GET", "/b"): api(named("Thing", obj(b=STRING))),
    }
    with pytest.raises(ValueError, match="two different schemas are named Thing"):
        build_document(routes, schemas, version="1", session_cookie="c")
    schemas[("GET", "/b")] = api(array(named("Thing", obj(a=STRING))))
    document = build_document(routes, schemas, version="1", session_cookie="c")
    assert document["components"]["schemas"]["Thing"] == obj(a=STRING)
