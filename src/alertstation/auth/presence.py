"""Tell whether a request comes from a signed-in user, for the automatic-ban detectors."""

from __future__ import annotations

import falcon

from alertstation.auth import sessions
from alertstation.auth.tokens import service as tokens
from alertstation.context import Station


def request_signed_in(station: Station, req: falcon.Request, address: str) -> bool:
    """Tell whether a request comes from a signed-in user (the automatic bans ask on a probe).

    True when the request carries a valid API token or session cookie, or when a live session was
    started from its address: a browser loading ``<img src=/.env>`` from another site sends
    no SameSite=Lax cookie, but it shares the office's address with the signed-in operator.
    """
    now = station.clock()
    lifetime = station.session_lifetime
    cookies = req.get_cookie_values(sessions.COOKIE_NAME)
    key = station.settings.secret_key
    token = sessions.token_from_cookie(key, cookies[0] if cookies else None)
    bearer = tokens.bearer_token(req.get_header("Authorization"))
    with station.engine.connect() as conn:
        if bearer is not None:
            if tokens.look_up(conn, bearer, now=now, secret_key=key).token is not None:
                return True
        if token is not None:
            found = sessions.look_up_session(
                conn, token, now=now, lifetime=lifetime, secret_key=key
            )
            if found.session is not None:
                return True
        return sessions.has_open_session_from(conn, address, now=now, lifetime=lifetime)
