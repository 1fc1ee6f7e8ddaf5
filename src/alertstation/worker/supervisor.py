"""`alertstation run`: one parent process that watches the web server and the worker.

``run`` starts two children, gunicorn (``alertstation serve``'s web server, started directly
as :func:`server_argv`) and the worker
(``alertstation worker``), and watches both. It does not host gunicorn itself: gunicorn's
arbiter reaps every child with ``waitpid(-1)``, so a worker started beside it would be reaped
by gunicorn and its exit never seen.

- The worker exits unexpectedly: a log line names its exit status, and it is started again
  after a back-off delay of ``initial_delay * 2 ** (exits in the window - 1)`` seconds, capped
  at ``max_delay`` (defaults 1 s, then 2, 4, 8 ... at most 60 s).
- It keeps failing: more than ``max_restarts`` exits within ``window`` seconds (defaults 5
  in 10 minutes): the web server is stopped and ``run`` exits 1, so systemd
  (``Restart=on-failure``) restarts the whole station.
- The web server exits: the worker is stopped and ``run`` exits 1.
- SIGTERM or SIGINT: both children are stopped and ``run`` exits 0.

``run`` checks the schema and loads the zone catalog, then replaces itself (``exec``, same
pid, same process group) with this module run as a program (:func:`main`), so the process
that stays up for the station's life holds the standard library and this module, not the
database and migration code it no longer needs.

Both children share ``run``'s process group, so a signal to the group reaches all of them, and
each asks the kernel for a parent-death signal (:func:`die_with_parent`), so ``kill -9`` of
``run`` does not leave a worker holding the leader lock.

The state (running, restarting, failed, stopped; restarts; last exit) is written to
``supervisor.json`` in the data directory for the status page. The rules are pure functions
of :class:`RestartPolicy`; the loop takes its sleep and monotonic clock as arguments, so tests
drive it without waiting.
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from alertstation.logs import configure_logging

log = logging.getLogger("alertstation.supervisor")

PARENT_ENV: Final[str] = "ALERTSTATION_SUPERVISOR_PID"
STATE_FILE: Final[str] = "supervisor.json"
STOP_TIMEOUT: Final[float] = 20.0
_PR_SET_PDEATHSIG: Final[int] = 1


@dataclass(frozen=True)
class RestartPolicy:
    """How fast to restart a failed worker, and when to give up."""

    initial_delay: float = 1.0
    max_delay: float = 60.0
    max_restarts: int = 5
    window: float = 600.0

    def recent(self, exits: Sequence[float], now: float) -> list[float]:
        """Return the exit times (monotonic seconds) that fall inside the window."""
        return [at for at in exits if now - at <= self.window]

    def delay(self, exits: Sequence[float], now: float) -> float:
        """Return how long to wait before the next start, given every exit so far."""
        count = max(1, len(self.recent(exits, now)))
        return min(self.max_delay, self.initial_delay * 2 ** (count - 1))

    def give_up(self, exits: Sequence[float], now: float) -> bool:
        """Tell whether the worker failed too often in the window to try again."""
        return len(self.recent(exits, now)) > self.max_restarts


def describe_exit(returncode: int) -> str:
    """Return an exit status as words: ``exit status 3`` or ``killed by SIGKILL``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exit status {returncode}"


def die_with_parent() -> None:
    """Stop this process when the ``run`` that started it dies, even by ``kill -9``.

    Does nothing unless ``ALERTSTATION_SUPERVISOR_PID`` names the parent. Asks Linux for
    SIGTERM on the parent's death (``prctl(PR_SET_PDEATHSIG)``), then exits at once if the
    parent is already gone (it died before the request took effect).
    """
    expected = os.environ.get(PARENT_ENV, "")
    if not expected.isdigit():
        return
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            log.warning("cannot ask for a parent-death signal (errno %d)", ctypes.get_errno())
    if os.getppid() != int(expected):
        log.error("the supervising `alertstation run` is gone; exiting")
        raise SystemExit(1)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


@dataclass
class SupervisorState:
    """What the status page shows about the supervised worker."""

    started_at: datetime
    state: str = "running"
    restarts: int = 0
    last_exit: str | None = None
    last_exit_status: int | None = None
    last_exit_at: datetime | None = None
    exits: list[float] = field(default_factory=list)

    def as_json(self, pid: int) -> dict[str, Any]:
        """Return the state file's content."""
        return {
            "pid": pid,
            "state": self.state,
            "restarts": self.restarts,
            "last_exit": self.last_exit,
            "last_exit_status": self.last_exit_status,
            "last_exit_at": _iso(self.last_exit_at),
            "started_at": _iso(self.started_at),
        }


def write_state(path: Path, state: SupervisorState) -> None:
    """Replace the state file atomically (readers never see half of it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(state.as_json(os.getpid()), out)
    os.replace(tmp, path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_state(data_dir: Path) -> dict[str, Any] | None:
    """Return the supervisor's state for the status API, or None when ``run`` is not in use.

    A state file left by a ``run`` that no longer exists (killed, or an old file beside a
    station now started with ``serve`` and ``worker``) reads as None. The pid is left out: the
    answer is public.
    """
    try:
        data = json.loads((data_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
        return None
    if not _alive(data["pid"]):
        return None
    data.pop("pid")
    for key in ("last_exit_at", "started_at"):
        if data.get(key):
            data[key] = datetime.fromisoformat(data[key])
    return data


class Supervisor:
    """Start the web server and the worker, restart the worker, give up when it keeps failing.

    ``start_web`` and ``start_worker`` return started processes. ``sleep(seconds)`` waits and
    returns True when the supervisor was asked to stop; ``monotonic`` and ``clock`` give the
    time. The defaults are real; tests hand in their own.
    """

    def __init__(
        self,
        *,
        start_web: Callable[[], subprocess.Popen[bytes]],
        start_worker: Callable[[], subprocess.Popen[bytes]],
        state_path: Path,
        sleep: Callable[[float], bool],
        monotonic: Callable[[], float],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        policy: RestartPolicy | None = None,
        poll_seconds: float = 0.5,
    ) -> None:
        self._start_web = start_web
        self._start_worker = start_worker
        self._state_path = state_path
        self._sleep = sleep
        self._monotonic = monotonic
        self._clock = clock
        self.policy = policy or RestartPolicy()
        self._poll = poll_seconds
        self.state = SupervisorState(started_at=clock())
        self._stopping = False

    def _save(self) -> None:
        try:
            write_state(self._state_path, self.state)
        except OSError as ex:
            log.warning("cannot write the supervisor state file: %s", ex)

    def run(self) -> int:
        """Supervise until stopped (0), the web server exits (1) or the worker gives up (1)."""
        web = self._start_web()
        worker = self._start_worker()
        log.info("supervising the web server and the worker", extra={"worker_pid": worker.pid})
        self._save()
        code = 0
        try:
            while not self._stopping:
                if web.poll() is not None:
                    log.error("the web server exited (%s); stopping", describe_exit(web.returncode))
                    code = 1
                    break
                if worker.poll() is not None:
                    restarted = self._restart(worker, web)
                    if restarted is None:
                        code = 1
                        break
                    worker = restarted
                    continue
                self._stopping = self._sleep(self._poll)
        finally:
            stop_processes([worker, web])
            if self.state.state != "failed":
                self.state.state = "stopped"
            self._save()
        return code

    def _restart(
        self, worker: subprocess.Popen[bytes], web: subprocess.Popen[bytes]
    ) -> subprocess.Popen[bytes] | None:
        """Record the worker's exit; start a new one after the back-off, or None to give up."""
        now = self._monotonic()
        status = describe_exit(worker.returncode)
        state = self.state
        state.exits = [*self.policy.recent(state.exits, now), now]
        state.last_exit, state.last_exit_status = status, worker.returncode
        state.last_exit_at = self._clock()
        if self.policy.give_up(state.exits, now):
            state.state = "failed"
            self._save()
            log.critical(
                "the worker (pid %d) exited (%s), %d times in %.0f s; giving up and stopping "
                "the station so its service manager restarts it",
                worker.pid,
                status,
                len(state.exits),
                self.policy.window,
            )
            return None
        delay = self.policy.delay(state.exits, now)
        state.state = "restarting"
        self._save()
        log.error(
            "the worker (pid %d) exited unexpectedly (%s); restarting it in %.1f s",
            worker.pid,
            status,
            delay,
        )
        waited = 0.0
        while waited < delay:
            step = min(self._poll, delay - waited)
            self._stopping = self._sleep(step)
            if self._stopping or web.poll() is not None:
                return worker  # the loop sees the stop or the web's exit next
            waited += step
        fresh = self._start_worker()
        state.restarts += 1
        state.state = "running"
        self._save()
        log.warning(
            "the worker was restarted as pid %d (restart %d)",
            fresh.pid,
            state.restarts,
            extra={"worker_pid": fresh.pid, "restarts": state.restarts},
        )
        return fresh


def stop_process(process: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """Ask a child to stop (SIGTERM), and kill it if it has not stopped within ``timeout``."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        log.error("pid %d did not stop within %.0f s; killing it", process.pid, timeout)
        process.kill()
        process.wait()


def stop_processes(
    processes: Sequence[subprocess.Popen[bytes]], timeout: float = STOP_TIMEOUT
) -> None:
    """Ask every child to stop at once (SIGTERM); kill those still running after ``timeout``."""
    running = [process for process in processes if process.poll() is None]
    for process in running:
        process.terminate()
    deadline = time.monotonic() + timeout
    for process in running:
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            log.error("pid %d did not stop within %.0f s; killing it", process.pid, timeout)
            process.kill()
            process.wait()


def child_starter(argv: Sequence[str]) -> Callable[[], subprocess.Popen[bytes]]:
    """Return a function that starts ``argv`` as a child that dies with this process."""
    env = {**os.environ, PARENT_ENV: str(os.getpid())}

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(list(argv), env=env)

    return start


def supervise(bind: str, workers: int, threads: int, data_dir: Path) -> int:
    """Start ``serve`` and ``worker`` as children and supervise them until stopped.

    SIGTERM and SIGINT stop both children and return 0. The children print their own lines;
    ``serve`` announces "serving" once its port answers.
    """
    stop = threading.Event()

    def handler(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    supervisor = Supervisor(
        start_web=child_starter(server_argv(bind, workers, threads, data_dir)),
        start_worker=child_starter([sys.executable, "-m", "alertstation.background"]),
        state_path=data_dir / STATE_FILE,
        sleep=stop.wait,
        monotonic=time.monotonic,
    )
    return supervisor.run()


def server_argv(bind: str, workers: int, threads: int, data_dir: Path) -> list[str]:
    """Return the command line of the web server (gunicorn's arbiter, ``alertstation.server``
    run as a program): what ``serve`` replaces itself with once the station is checked, and
    what ``run``'s supervisor starts, ``run`` having checked the station already."""
    options = [bind, str(workers), str(threads), str(data_dir)]
    return [sys.executable, "-m", "alertstation.server", *options]


def supervise_argv(
    bind: str, workers: int, threads: int, data_dir: Path, log_level: str, log_format: str
) -> list[str]:
    """Return the command line ``run`` replaces itself with once the station is prepared."""
    options = [bind, str(workers), str(threads), str(data_dir), log_level, log_format]
    return [sys.executable, "-m", __name__, *options]


def main(argv: Sequence[str]) -> int:
    """Run as a program: ``python -m alertstation.worker.supervisor`` and :func:`supervise_argv`."""
    bind, workers, threads, data_dir, level, fmt = argv
    configure_logging(level, fmt)
    return supervise(bind, int(workers), int(threads), Path(data_dir))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
