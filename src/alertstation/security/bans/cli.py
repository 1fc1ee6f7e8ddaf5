"""The ``alertstation bans`` sub-commands: list the ban list, remove an address from it.

``bans remove`` goes through ``removal.remove_filter``, the same service function as the web
unban, so the ``bans`` generation bump, the host-firewall mirror and the ``ban.deleted`` audit
row (actor ``cli``) all happen.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from alertstation.commands import CommandError

if TYPE_CHECKING:
    from alertstation.context import Station

EXIT_OK = 0
CLI_ACTOR = "cli"


def cmd_bans_list(args: argparse.Namespace) -> int:
    """Print the blocklist, one entry a line: id, address, state, expiry, source, reason."""
    from alertstation.security.bans.service import list_filters
    from alertstation.security.bans.tables import BLOCKLIST

    station = args.open_station()
    try:
        now = station.clock()
        with station.engine.connect() as conn:
            entries = list_filters(conn, BLOCKLIST)
    finally:
        station.engine.dispose()
    shown = [entry for entry in entries if args.all or entry.is_enforced(now)]
    if not shown:
        print("no addresses are banned" if not args.all else "the ban list is empty")
        return EXIT_OK
    print(f"{'id':>6}  {'address':<40} {'state':<8} {'expires':<25} {'source':<18} reason")
    for entry in shown:
        state = "banned" if entry.is_enforced(now) else ("expired" if entry.active else "off")
        expires = entry.expires_at.isoformat(timespec="seconds") if entry.expires_at else "never"
        print(
            f"{entry.id:>6}  {entry.value:<40} {state:<8} {expires:<25} "
            f"{entry.source or '-':<18} {entry.reason or '-'}"
        )
    return EXIT_OK


def cmd_bans_remove(args: argparse.Namespace) -> int:
    """Remove the blocklist entry of one address (or range), as the web unban does."""
    from alertstation.audit.actor import Actor
    from alertstation.security.bans.removal import remove_filter
    from alertstation.security.bans.service import list_filters
    from alertstation.security.bans.tables import BLOCKLIST
    from alertstation.security.bantable import normalise

    try:
        value = normalise(args.address)
    except ValueError as ex:
        raise ValueError(f"not an address or range: {args.address!r} ({ex})") from None
    station = args.open_station()
    try:
        with station.engine.connect() as conn:
            matches = [e for e in list_filters(conn, BLOCKLIST) if e.value == value]
        if not matches:
            raise CommandError(f"{value} is not on the ban list")
        actor = Actor(user_id=None, username=CLI_ACTOR, client_ip=None, user_agent=None)
        entry = remove_filter(station, matches[0].id, actor, requester_ip="127.0.0.1")
    finally:
        station.engine.dispose()
    print(f"removed {entry.value} (entry {entry.id}, source {entry.source or '-'})")
    return EXIT_OK


def add_bans_commands(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    open_station: Callable[[], Station],
) -> None:
    """Register ``bans list`` and ``bans remove ADDRESS`` on the top-level sub-parsers.

    ``open_station`` returns a Station on the configured database; the application layer builds
    it, so this package never imports ``alertstation.app``.
    """
    description = "Show and lift bans on client addresses."
    bans = sub.add_parser("bans", help=description, description=description)
    bans_sub = bans.add_subparsers(dest="bans_command", metavar="ACTION", parser_class=type(bans))
    bans_sub.required = True

    list_help = "List the banned addresses (with --all also expired and switched-off entries)."
    listing = bans_sub.add_parser("list", help=list_help, description=list_help)
    listing.add_argument("--all", action="store_true", help="include entries no longer enforced")
    listing.set_defaults(func=cmd_bans_list, open_station=open_station)

    remove_help = "Lift the ban on ADDRESS now (audited as actor 'cli', mirrored to the firewall)."
    remove = bans_sub.add_parser("remove", help=remove_help, description=remove_help)
    remove.add_argument("address", metavar="ADDRESS", help="the banned address or range")
    remove.set_defaults(func=cmd_bans_remove, open_station=open_station)
