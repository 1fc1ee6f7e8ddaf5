"""Who did something: the acting user and where the request came from, as the ledger records it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_USER_AGENT = 512


@dataclass(frozen=True)
class Actor:
    """The acting user (if any), the client address and the user agent of one audited action."""

    user_id: int | None
    username: str | None
    client_ip: str | None
    user_agent: str | None

    @classmethod
    def from_request(cls, req: Any) -> Actor:
        """Build the actor of a Falcon request from its context and User-Agent header.

        ``req.context.user`` may be None (an anonymous caller, e.g. a failed sign-in); the client
        address is the one the request-context middleware derived by the one-hop proxy rule.
        A request made with an API token names it: ``req.context.actor_name`` holds
        "token NAME of USER" and the user id stays the token owner's.
        """
        context = req.context
        user = getattr(context, "user", None)
        user_agent = req.get_header("User-Agent")
        return cls(
            user_id=getattr(user, "id", None),
            username=getattr(context, "actor_name", None) or getattr(user, "username", None),
            client_ip=getattr(context, "client_ip", None),
            user_agent=user_agent[:MAX_USER_AGENT] if user_agent else None,
        )

    @classmethod
    def system(cls, name: str = "system") -> Actor:
        """Return the actor of work the station does on its own (jobs, commands)."""
        return cls(user_id=None, username=name, client_ip=None, user_agent=None)
