"""Read request bodies at the edge: the right media type, the right shape, or a clear error."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from alertstation import lazy
from alertstation.errors import BadRequest, Invalid, UnsupportedMediaType

if TYPE_CHECKING:
    import falcon

# Falcon's media-type names, read when a request arrives (the worker, which reads no request,
# imports this module for check_bool without loading Falcon).
falcon_module = lazy.module("falcon")


def json_object(req: falcon.Request) -> dict[str, Any]:
    """Return the JSON object in the body; 415 for another media type, 400 for another shape."""
    if req.content_type is None or not req.content_type.startswith(falcon_module.MEDIA_JSON):
        raise UnsupportedMediaType("Send the body as application/json.")
    body = req.get_media(default_when_empty=None)
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object.")
    return body


def form_or_json(req: falcon.Request) -> tuple[dict[str, Any], bool]:
    """Return the body fields and whether it came as JSON (else an urlencoded form)."""
    if req.content_type and req.content_type.startswith(falcon_module.MEDIA_URLENCODED):
        form = req.get_media(default_when_empty={})
        return dict(form), False
    return json_object(req), True


def string_field(body: dict[str, Any], name: str, *, max_length: int = 1024) -> str:
    """Return a required non-empty string field; 422 naming the field otherwise."""
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise Invalid(f"{name} is required and must be a string", field=name)
    if len(value) > max_length:
        raise Invalid(f"{name} must be at most {max_length} characters", field=name)
    return value


def check_bool(value: Any, name: str) -> bool:
    """Return a JSON boolean; 422 naming the field for anything else."""
    if not isinstance(value, bool):
        raise Invalid(f"{name} must be true or false", field=name)
    return value


def optional_bool(body: dict[str, Any], name: str) -> bool | None:
    """Return a boolean field when present; 422 when it is not a boolean."""
    if name not in body or body[name] is None:
        return None
    return check_bool(body[name], name)
