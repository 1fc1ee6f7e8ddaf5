"""The OpenAPI 3.1 document of the route registry, and the schema fragments routes declare.

Each domain package keeps a ``schemas.py`` beside its resources with ``SCHEMAS``: a mapping of
``(method, path)`` (exactly as the route registry declares it) to a :class:`RouteSchema`, built
with :func:`api` (a JSON answer), :func:`page` (HTML only), :func:`download` (a file) or
:func:`redirect`. The app collects them and :func:`build_document` turns the registry and the
declarations into one OpenAPI 3.1 document. Request and response bodies are plain JSON Schema
(draft 2020-12, the dialect of OpenAPI 3.1); no schema library is needed at run time.

Every operation names who may call it as ``x-access`` (``public``, ``signed-in``,
``permission:<name>``, ``role:<name>``), and any answer other than its success is the error
envelope, described once under ``components.schemas.Error``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import falcon

from alertstation.http.jsonbytes import dumps
from alertstation.http.routing import Access, Route

Schema = dict[str, Any]
RouteKey = tuple[str, str]

JSON = "application/json"
HTML = "text/html"

# ---- shared fragments --------------------------------------------------------------------------

ERROR_REF: Schema = {"$ref": "#/components/schemas/Error"}
STRING_BODY: Schema = {"type": "string"}
ERROR_ENVELOPE: Schema = {
    "type": "object",
    "description": "Every error answer: a stable machine code and a message for people.",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "examples": ["not_found", "invalid", "forbidden"]},
                "message": {"type": "string"},
                "details": {
                    "type": "object",
                    "description": "More about the error, e.g. the field it concerns.",
                },
            },
        }
    },
}

ERROR_ANSWER: Schema = {
    "description": "Error",
    "content": {"application/json": {"schema": ERROR_REF}},
}
# Outside /api/, a browser that asks for HTML gets the error as a page instead.
ERROR_ANSWER_OR_PAGE: Schema = {
    "description": "Error (a page for a browser that asks for HTML)",
    "content": {"application/json": {"schema": ERROR_REF}, "text/html": {"schema": STRING_BODY}},
}

ID: Schema = {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}
INT: Schema = {"type": "integer"}
COUNT: Schema = {"type": "integer", "minimum": 0}
NUMBER: Schema = {"type": "number"}
STRING: Schema = {"type": "string"}
BOOL: Schema = {"type": "boolean"}
TIMESTAMP: Schema = {"type": "string", "description": "An ISO 8601 moment (UTC)."}
ANY_OBJECT: Schema = {"type": "object"}
ANYTHING: Schema = {}


class Named(dict[str, Any]):
    """A reference to a schema the document holds once, under ``components.schemas``."""

    def __init__(self, name: str, schema: Schema) -> None:
        super().__init__({"$ref": f"#/components/schemas/{name}"})
        self.name = name
        self.schema = schema


def named(name: str, schema: Schema) -> Schema:
    """Return ``schema`` as a named component (an alert, a user...) that answers refer to."""
    return Named(name, schema)


def _components(node: Any, found: dict[str, Schema]) -> dict[str, Schema]:
    """Collect every named schema under ``node`` (named ones inside named ones too)."""
    if isinstance(node, Named):
        known = found.setdefault(node.name, node.schema)
        if known is not node.schema and known != node.schema:
            raise ValueError(f"two different schemas are named {node.name}")
        _components(node.schema, found)
    elif isinstance(node, dict):
        for value in node.values():
            _components(value, found)
    elif isinstance(node, list | tuple):
        for value in node:
            _components(value, found)
    return found


def nullable(schema: Schema) -> Schema:
    """Return ``schema`` that also allows null."""
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: Schema = ANYTHING) -> Schema:
    """Return a list of ``items``."""
    return {"type": "array", "items": items}


def obj(optional: Mapping[str, Schema] | None = None, /, **required: Schema) -> Schema:
    """Return an object whose keyword properties are always present; ``optional`` may be.

    Properties not named are allowed: an answer may grow a field without breaking a client.
    """
    properties = {**(optional or {}), **required}
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = sorted(required)
    return schema


def body(**properties: Schema) -> Schema:
    """Return a request object whose properties may each be sent (the route checks them)."""
    return {"type": "object", "properties": properties}


def paginated(key: str, item: Schema = ANY_OBJECT, **extra: Schema) -> Schema:
    """Return a page of a list: ``{total, limit, offset, <key>: [...]}``."""
    return obj(total=COUNT, limit=COUNT, offset=COUNT, **{key: array(item)}, **extra)


def listing(key: str, item: Schema = ANY_OBJECT, **extra: Schema) -> Schema:
    """Return an object holding one list under ``key``."""
    return obj(**{key: array(item)}, **extra)


PAGE_QUERY: dict[str, Schema] = {
    "limit": {"type": "integer", "minimum": 1},
    "offset": {"type": "integer", "minimum": 0},
}

# ---- declarations ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RouteSchema:
    """What one route accepts and answers.

    ``response`` is the JSON Schema of the success answer's JSON body (None: the route never
    answers JSON); ``media`` the other media types its success may take (a page, a CSV...).
    """

    response: Schema | None = None
    status: int = 200
    media: tuple[str, ...] = ()
    request: Schema | None = None
    form: Schema | None = None
    urlencoded: Schema | None = None
    raw: tuple[str, ...] = ()
    query: Mapping[str, Schema] = field(default_factory=dict)
    required_query: tuple[str, ...] = ()
    responses: Mapping[int, Schema | None] = field(default_factory=dict)
    ranges: bool = False  # a Range request is answered 206 with part of the same file
    path: Mapping[str, Schema] = field(default_factory=dict)  # narrower path field schemas

    @property
    def answers_json(self) -> bool:
        """Tell whether the route's success answer can be JSON."""
        return self.response is not None


def api(
    response: Schema,
    *,
    status: int = 200,
    request: Schema | None = None,
    form: Schema | None = None,
    urlencoded: Schema | None = None,
    raw: Iterable[str] = (),
    query: Mapping[str, Schema] | None = None,
    required_query: Iterable[str] = (),
    also: Iterable[str] = (),
    responses: Mapping[int, Schema | None] | None = None,
    path: Mapping[str, Schema] | None = None,
) -> RouteSchema:
    """Declare a JSON route.

    ``also`` names the other media types its answer negotiates (text/html); ``raw`` the media
    types of a request body taken as it is (a CAP file), beside ``request`` (JSON), ``form``
    (multipart) and ``urlencoded``.
    """
    return RouteSchema(
        response=response,
        status=status,
        media=tuple(also),
        request=request,
        form=form,
        urlencoded=urlencoded,
        raw=tuple(raw),
        query=dict(query or {}),
        required_query=tuple(required_query),
        responses=dict(responses or {}),
        path=dict(path or {}),
    )


def page(*, query: Mapping[str, Schema] | None = None) -> RouteSchema:
    """Declare an HTML page that never answers JSON (errors excepted)."""
    return RouteSchema(media=(HTML,), query=dict(query or {}))


def download(
    media_type: str,
    *,
    query: Mapping[str, Schema] | None = None,
    request: Schema | None = None,
    form: Schema | None = None,
) -> RouteSchema:
    """Declare a route whose success answer is a file (CSV, PDF, WAV, SVG, a backup...)."""
    return RouteSchema(media=(media_type,), query=dict(query or {}), request=request, form=form)


def file_with_ranges(*media_types: str) -> RouteSchema:
    """Declare a file that a Range request gets part of (206), e.g. an audio segment."""
    return RouteSchema(media=media_types, ranges=True)


def redirect(status: int = 303) -> RouteSchema:
    """Declare a route that only redirects (its answer has no body)."""
    return RouteSchema(status=status)


def no_content(*, request: Schema | None = None) -> RouteSchema:
    """Declare a route that answers 204 without a body."""
    return RouteSchema(status=204, request=request)


# ---- the document ------------------------------------------------------------------------------

_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::([a-z]+)[^}]*)?\}")


def access_label(access: Access) -> str:
    """Return the ``x-access`` value of a rule: public, signed-in, permission:x, role:x."""
    if access.kind == "signed_in":
        return "signed-in"
    return str(access)


def openapi_path(path: str) -> tuple[str, list[Schema]]:
    """Return a Falcon URI template as an OpenAPI path and its path parameters."""
    parameters: list[Schema] = []
    for name, converter in _FIELD.findall(path):
        schema = ID if converter == "int" else {"type": "string", "minLength": 1}
        parameters.append({"name": name, "in": "path", "required": True, "schema": schema})
    return _FIELD.sub(r"{\1}", path), parameters


def _operation_id(route: Route) -> str:
    words = re.sub(r"[^A-Za-z0-9]+", "_", _FIELD.sub(r"\1", route.path)).strip("_")
    return f"{route.method.lower()}_{words or 'root'}"


def _success(declared: RouteSchema) -> Schema:
    answer: Schema = {"description": falcon.code_to_http_status(declared.status)[4:] or "OK"}
    content: Schema = {}
    if declared.response is not None:
        content[JSON] = {"schema": declared.response}
    for media_type in declared.media:
        content[media_type] = {"schema": {"type": "string"}}
    if content:
        answer["content"] = content
    return answer


def _parameters(route: Route, declared: RouteSchema | None) -> list[Schema]:
    parameters = openapi_path(route.path)[1]
    if declared is None:
        return parameters
    for parameter in parameters:
        parameter["schema"] = declared.path.get(parameter["name"], parameter["schema"])
    return parameters + [
        {"name": name, "in": "query", "required": name in declared.required_query, "schema": schema}
        for name, schema in declared.query.items()
    ]


def _request_body(declared: RouteSchema) -> Schema | None:
    content: Schema = {}
    if declared.request is not None:
        content[JSON] = {"schema": declared.request}
    if declared.form is not None:
        content["multipart/form-data"] = {"schema": declared.form}
    if declared.urlencoded is not None:
        content["application/x-www-form-urlencoded"] = {"schema": declared.urlencoded}
    for media_type in declared.raw:
        content.setdefault(media_type, {"schema": {"type": "string"}})
    return {"content": content} if content else None


def _responses(route: Route, declared: RouteSchema | None) -> Schema:
    api_only = route.path.startswith("/api/")
    responses: Schema = {"default": ERROR_ANSWER if api_only else ERROR_ANSWER_OR_PAGE}
    if declared is None:
        return responses
    responses[str(declared.status)] = _success(declared)
    if declared.ranges:
        responses["206"] = {**_success(declared), "description": "Partial Content"}
    for status, schema in declared.responses.items():
        answer: Schema = {"description": falcon.code_to_http_status(status)[4:]}
        if schema is not None:
            answer["content"] = {JSON: {"schema": schema}}
        responses[str(status)] = answer
    return responses


def _operation(route: Route, declared: RouteSchema | None) -> Schema:
    operation: Schema = {
        "operationId": _operation_id(route),
        "summary": route.summary or f"{route.method} {route.path}",
        "x-access": access_label(route.access),
        "responses": _responses(route, declared),
    }
    if route.access.kind == "public":
        operation["security"] = []
    if declared is None:
        operation["x-undeclared"] = True
    parameters = _parameters(route, declared)
    if parameters:
        operation["parameters"] = parameters
    body = _request_body(declared) if declared is not None else None
    if body is not None:
        operation["requestBody"] = body
    return operation


def build_document(
    routes: Iterable[Route],
    schemas: Mapping[RouteKey, RouteSchema],
    *,
    version: str,
    session_cookie: str,
) -> Schema:
    """Return the OpenAPI 3.1 document of ``routes`` with their declared schemas."""
    paths: dict[str, Schema] = {}
    for route in routes:
        path = openapi_path(route.path)[0]
        declared = schemas.get((route.method, route.path))
        paths.setdefault(path, {})[route.method.lower()] = _operation(route, declared)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Alert Station",
            "version": version,
            "description": (
                "Every route of the station. x-access names who may call an operation; any "
                "answer other than the success is the error envelope (components.schemas.Error)."
            ),
        },
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": {"Error": ERROR_ENVELOPE, **dict(sorted(_components(paths, {}).items()))},
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": session_cookie},
                "bearer": {"type": "http", "scheme": "bearer"},
            },
        },
        "security": [{"session": []}, {"bearer": []}],
    }


def missing_schemas(
    routes: Iterable[Route], schemas: Mapping[RouteKey, RouteSchema]
) -> list[RouteKey]:
    """Return the routes that declare no schema, as (method, path)."""
    return [(r.method, r.path) for r in routes if (r.method, r.path) not in schemas]


class OpenApiResource:
    """Serve the document; the app hands it a function that builds it once, on first use."""

    def __init__(self) -> None:
        self._build: Callable[[], Schema] | None = None
        self._document: bytes | None = None

    def attach(self, build: Callable[[], Schema]) -> None:
        """Give the resource the function that builds the document."""
        self._build = build
        self._document = None

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Answer the OpenAPI document."""
        if self._document is None:
            if self._build is None:
                raise falcon.HTTPServiceUnavailable(description="The API document is not ready.")
            self._document = dumps(self._build())
        resp.content_type = JSON
        resp.data = self._document
