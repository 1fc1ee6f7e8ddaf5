"""The access log line the request context middleware queues for the background log writer.

It is the line ``JsonFormatter`` writes for the access record (logger ``alertstation.access``,
level info, the request's fields as extras), built without a log record. ``access_line`` uses
the compiled kernel (``src/_native/accessline.pyx``) when it is built, and its Python twin
``py_access_line`` otherwise and for the rare values the kernel does not write (text that is not
UTF-8, a time outside 1970-9999); ``tests/http/test_access_line.py`` holds the two equal.
"""

from __future__ import annotations

from typing import Any

from alertstation.kernel_loader import load_kernel
from alertstation.logs import access_json_line

_kernel = load_kernel("accessline")


def duration_hundredths(seconds: float | None) -> int:
    """Return a duration in seconds as hundredths of a millisecond, -1 for none."""
    return -1 if seconds is None else round(seconds * 100_000)


def access_fields(
    method: str, path: str, status: int, hundredths: int, client_ip: str | None, user: str | None
) -> dict[str, Any]:
    """Return the access record's extras, in the line's order (duration in milliseconds)."""
    return {
        "method": method,
        "path": path,
        "status": status,
        "duration_ms": hundredths / 100 if hundredths >= 0 else None,
        "client_ip": client_ip,
        "user": user,
    }


def py_access_line(
    created: float,
    request_id: str | None,
    method: str,
    path: str,
    status: int,
    hundredths: int,
    client_ip: str | None,
    user: str | None,
) -> str:
    """Return the access line's JSON text (the reference twin of the compiled kernel).

    ``hundredths`` is the duration in hundredths of a millisecond (negative: none); the line
    shows it in milliseconds to two decimals.
    """
    fields = access_fields(method, path, status, hundredths, client_ip, user)
    return access_json_line(created, request_id, f"{method} {path} {status}", fields)


def access_line(
    created: float,
    request_id: str | None,
    method: str,
    path: str,
    status: int,
    hundredths: int,
    client_ip: str | None,
    user: str | None,
) -> str:
    """Return the access line's JSON text: the compiled kernel's when it writes it."""
    if _kernel is not None:
        try:
            return _kernel.access_line(
                created, request_id, method, path, status, hundredths, client_ip, user
            )
        except (TypeError, ValueError):  # not text, not UTF-8, or out of the kernel's range
            pass
    return py_access_line(created, request_id, method, path, status, hundredths, client_ip, user)
