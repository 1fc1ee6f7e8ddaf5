"""Serve a bare peer app with the station's own gunicorn configuration.

``python -m benchmarks.http.peer_server falcon|flask --bind HOST:PORT --workers N --threads N
--data-dir DIR`` calls :func:`alertstation.server.serve`, the function ``alertstation serve``
calls, with its application class swapped for one that loads the peer: same worker class
(gthread), workers, threads, timeouts and limits, so only the app differs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gunicorn.app.base import BaseApplication

from alertstation import server

PEERS = ("falcon", "flask")


def peer_application(name: str) -> type[BaseApplication]:
    """Return a gunicorn application class, shaped like the station's, that loads ``name``."""

    class PeerServer(server.StationServer):
        def load(self) -> Any:
            if name == "falcon":
                from benchmarks.http.bare_falcon import create_app
            else:
                from benchmarks.http.bare_flask import create_app
            return create_app()

    return PeerServer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="peer_server")
    parser.add_argument("peer", choices=PEERS)
    parser.add_argument("--bind", required=True)
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    server.StationServer = peer_application(args.peer)  # type: ignore[misc]
    server.serve(args.bind, args.workers, args.threads, args.data_dir)


if __name__ == "__main__":
    main()
