"""The access log line, compiled (``alertstation.http.access_line.py_access_line``'s twin).

Product code gets it through ``alertstation.http.access_line.access_line``, which falls back to
the twin for what this does not write.
"""

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
    """Return the access line's JSON text, without its newline."""
