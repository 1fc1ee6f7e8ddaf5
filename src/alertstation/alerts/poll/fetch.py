"""Fetch one poll source: conditional GET through the station's outbound HTTP client.

Every request names the station and its version in ``User-Agent`` (with the operator's contact
when one is set, as the agency asks), asks for gzip, and sends ``If-None-Match`` /
``If-Modified-Since`` when the source has validators from an earlier answer. Timeouts, the
transfer deadline, the size limit and error wording come from :mod:`alertstation.http.outbound`.
"""

from __future__ import annotations

from alertstation.http.outbound import (
    Fetched,
    FetchError,
    Limits,
    OutboundClient,
    describe_error,
    parse_retry_after,
    split_credentials,
)
from alertstation.version import __version__

__all__ = [
    "ACCEPT",
    "USER_AGENT",
    "FetchError",
    "Fetched",
    "HttpClient",
    "Limits",
    "describe_error",
    "parse_retry_after",
    "split_credentials",
    "user_agent_for",
]

USER_AGENT = f"AlertStation/{__version__} (CAP alert poller)"
MAX_REDIRECTS = 3


def user_agent_for(contact: str = "") -> str:
    """Return the poller's User-Agent, naming the station's contact when one is configured."""
    return f"AlertStation/{__version__} (CAP alert poller; {contact})" if contact else USER_AGENT


ACCEPT = "application/geo+json, application/json;q=0.9, application/cap+xml, " + (
    "application/atom+xml, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.1"
)


class HttpClient(OutboundClient):
    """The poller's client: 200 with a body, or 304; anything else is a FetchError."""

    def __init__(self, user_agent: str = USER_AGENT) -> None:
        super().__init__(user_agent)

    def fetch(
        self,
        url: str,
        limits: Limits,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        follow_redirects: bool = True,
    ) -> Fetched:
        """GET ``url``: 200 → body and validators, 304 → not modified, anything else FetchError.

        ``follow_redirects`` False refuses any redirect (used for links a feed hands us, so a
        feed cannot point the station at another host through a redirect).
        """
        headers = {"Accept": ACCEPT, "Accept-Encoding": "gzip, deflate"}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        fetched = self.get(
            url, limits, headers=headers, max_redirects=MAX_REDIRECTS if follow_redirects else 0
        )
        if fetched.status not in (200, 304):
            raise FetchError(f"HTTP {fetched.status}", status=fetched.status)
        return fetched
