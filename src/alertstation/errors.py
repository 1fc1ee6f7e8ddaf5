"""Errors that service functions raise; the web tier renders them as the JSON error envelope."""

from __future__ import annotations

from typing import Any


class AppError(Exception):
    """Base class: an error with an HTTP status, a stable machine code and a human message."""

    status = 500
    code = "internal_error"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.details = details


class Invalid(AppError):
    """The request is well-formed but its content is not acceptable."""

    status = 422
    code = "invalid"


class BadRequest(AppError):
    """The request cannot be parsed."""

    status = 400
    code = "bad_request"


class Unauthorized(AppError):
    """The caller must sign in first."""

    status = 401
    code = "unauthorized"


class Forbidden(AppError):
    """The caller is signed in but may not do this."""

    status = 403
    code = "forbidden"


class NotFound(AppError):
    """The thing asked for does not exist."""

    status = 404
    code = "not_found"


class Conflict(AppError):
    """The change clashes with the current state."""

    status = 409
    code = "conflict"


class LengthRequired(AppError):
    """The request body must come with a Content-Length."""

    status = 411
    code = "length_required"


class PayloadTooLarge(AppError):
    """The request body is larger than the limit."""

    status = 413
    code = "payload_too_large"


class UriTooLong(AppError):
    """The request target (path and query) is longer than the limit."""

    status = 414
    code = "uri_too_long"


class UnsupportedMediaType(AppError):
    """The request body is in a format this route does not take."""

    status = 415
    code = "unsupported_media_type"


class TooManyRequests(AppError):
    """Too many requests of this kind right now; ``retry_after`` seconds are sent as Retry-After."""

    status = 429
    code = "too_many_requests"

    def __init__(self, message: str, *, retry_after: int, code: str | None = None) -> None:
        super().__init__(message, code=code, retry_after=retry_after)
        self.retry_after = retry_after


class ServiceUnavailable(AppError):
    """A dependency (usually the database) cannot be reached right now."""

    status = 503
    code = "service_unavailable"


class DatabaseUnavailable(ServiceUnavailable):
    """The database cannot be reached or dropped the connection; try again shortly."""

    code = "database_unavailable"
    retry_after = 5  # seconds, sent as Retry-After


class FieldError(ValueError):
    """A value a service function refuses; ``field`` names it.

    The library raises it (a precise ValueError); a resource answers it with
    :meth:`as_app_error`: 422 ``invalid`` (409 ``conflict`` for :class:`NameTaken`), with
    ``details.field``.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field

    def as_app_error(self) -> AppError:
        """Return the HTTP error to answer with."""
        return Invalid(str(self), field=self.field)


class NameTaken(FieldError):
    """Another record already has this unique name."""

    def as_app_error(self) -> AppError:
        """Return the HTTP error to answer with (409)."""
        return Conflict(str(self), field=self.field)


class FieldErrors(FieldError):
    """Several refused values at once, each with the field it belongs to.

    A form shows every error beside its field in one go. The HTTP answer is 422 ``invalid``
    with ``details.field`` (the first field) and ``details.errors`` (``[{field, message}]``).
    """

    def __init__(self, errors: list[FieldError]) -> None:
        if not errors:
            raise ValueError("FieldErrors needs at least one error")
        super().__init__(errors[0].field, "; ".join(str(error) for error in errors))
        self.errors = list(errors)

    def as_app_error(self) -> AppError:
        """Return the HTTP error to answer with: every field's message in ``details.errors``."""
        return Invalid(
            str(self),
            field=self.field,
            errors=[{"field": error.field, "message": str(error)} for error in self.errors],
        )


def raise_field_errors(errors: list[FieldError]) -> None:
    """Raise nothing for no errors, the one error itself, or :class:`FieldErrors` for several."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise FieldErrors(errors)
