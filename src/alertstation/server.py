"""Serve the WSGI app with gunicorn (gthread workers).

``alertstation serve`` checks the station (schema, zone catalog, stale uploads), then replaces
itself (``exec``, same pid) with this module run as a program (:func:`main`), and
``run``'s supervisor starts it directly once ``run`` has done the same checks. gunicorn's
arbiter is then a fresh interpreter holding gunicorn and this module, not the command line's
imports. With one web worker the worker builds the app itself (nothing to share); with more,
the arbiter builds it once before it forks (``preload_app``) and the workers share its pages.
"""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gunicorn.app.base import BaseApplication

from alertstation import lazy
from alertstation.logs import configure_logging
from alertstation.settings import Settings, warn_skipped_variables
from alertstation.version import __version__
from alertstation.worker.supervisor import die_with_parent

# Built in the process that serves (a web worker, or the arbiter when it preloads).
app = lazy.module("alertstation.app")
connection = lazy.module("alertstation.http.connection")


class StationServer(BaseApplication):
    """A gunicorn application that builds the station app where it serves.

    With ``preload_app`` (more than one web worker) the arbiter builds it once before it forks
    and the web workers share its pages (imported modules, route table, templates)
    copy-on-write instead of each building its own. What must not cross a fork is made anew in
    each worker: the database pool (:func:`fresh_after_fork`), the log writer and the traffic
    recorder's flusher (started on first use in each process). With one web worker there is
    nothing to share: the worker builds the app and the arbiter stays small.
    """

    def __init__(self, options: dict[str, Any]) -> None:
        self._options = options
        self.built: Any = None
        super().__init__()

    def load_config(self) -> None:
        for key, value in self._options.items():
            if key in self.cfg.settings:  # options newer than the installed gunicorn are skipped
                self.cfg.set(key, value)

    def load(self) -> Any:
        settings = Settings.from_env()
        configure_logging(settings.log_level, settings.log_format, background=True)
        warn_skipped_variables(settings)
        self.built = app.create_app(settings)
        return connection.ConnectionControl(self.built)


def announce_when_ready(bind: str) -> Any:
    """Return gunicorn's ``post_worker_init`` hook printing that the station serves.

    It runs in a web worker once the app is built, right before the worker accepts
    connections, so the line never comes before the port answers. Only the first worker
    gunicorn starts prints it (a worker started later, or a second one, does not).
    """

    def announce(worker: Any) -> None:
        if worker.age == 1:
            print(f"Alert Station {__version__} serving on http://{bind}/", flush=True)

    return announce


def freeze_before_fork(server: Any, worker: Any) -> None:
    """gunicorn's ``pre_fork`` hook: let the log writer finish its lines (so no lock of its
    is held across the fork), then move every object the arbiter holds out of the garbage
    collector's reach, so a web worker's collections do not copy the pages it shares with the
    arbiter (the imported modules and the preloaded app)."""
    for handler in logging.getLogger().handlers:
        handler.flush()
    gc.freeze()


def fresh_after_fork(server: Any, worker: Any) -> None:
    """gunicorn's ``post_fork`` hook: drop the database connections the worker inherited.

    They belong to the arbiter (which may have opened some while building the app); the pool
    forgets them without closing them, so the arbiter's stay usable and the worker opens its own.
    """
    built = getattr(worker.app, "built", None)
    if built is not None:
        built.station.engine.dispose(close=False)


def server_options(bind: str, workers: int, threads: int, data_dir: Path) -> dict[str, Any]:
    """Return gunicorn's settings for the station.

    The control socket lives in the data directory so two stations on one host never share it.
    """
    return {
        "bind": bind,
        "workers": workers,
        "worker_class": "gthread",
        "threads": threads,
        "timeout": 60,
        "graceful_timeout": 15,
        "accesslog": None,  # the app writes its own structured access log
        "proc_name": "alertstation",
        "control_socket": str(data_dir / "gunicorn.ctl"),
        # gunicorn's largest request line, above the app's own 4096-character target limit
        # (alertstation.http.middleware), so an over-long URL gets the JSON envelope.
        "limit_request_line": 8190,
        "post_worker_init": announce_when_ready(bind),
        "preload_app": workers > 1,
        "pre_fork": freeze_before_fork,
        "post_fork": fresh_after_fork,
    }


def serve(bind: str, workers: int, threads: int, data_dir: Path) -> None:
    """Run gunicorn in the foreground until it is told to stop."""
    StationServer(server_options(bind, workers, threads, data_dir)).run()


def main(argv: Sequence[str]) -> int:
    """Run as a program: ``python -m alertstation.server BIND WORKERS THREADS DATA_DIR``
    (:func:`alertstation.worker.supervisor.server_argv`)."""
    bind, workers, threads, data_dir = argv
    die_with_parent()  # started by `run`'s supervisor: stop with it
    serve(bind, int(workers), int(threads), Path(data_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
