"""Read a file in a process of its own, passing what it finds back as messages.

An access-log import spends about half its time reading, parsing, enriching and tallying lines,
and the rest writing their rows. Both hold Python's interpreter lock, so a thread gains
nothing. ``messages`` runs ``reader.file_messages(path)`` in a child process and yields
each message it sends, while this process writes the rows of the messages before.

The child is a fresh interpreter (``python -P -m alertstation.traffic.child_reader``), so no
lock, thread or connection of this process is copied into it, and no script is imported again
(as ``multiprocessing``'s spawn would import the main one). ``-P`` keeps the working folder (a
log folder others may write to) off its module path. It is given the pickled reader on its
standard input and this process's module path, and sends each message pickled on its standard
output, then ``(DONE,)``. When the reader raises, it sends ``(FAILED, text)`` and ``messages``
raises ``ChildFailed``, as it does when the child ends without ``DONE``. The child holds
up to ``AHEAD`` messages made but not yet taken, so it reads on while this process writes, and
waits when the writer falls further behind: memory stays bounded.
Leaving the loop early (an error in the writer, Ctrl-C) stops the child.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

DONE = "done"
FAILED = "failed"
# How long a child is given to exit once done or stopped, before it is killed.
STOP_SECONDS = 10.0
# Messages a child holds made but not yet sent (a batch of rows each: a few MiB).
AHEAD = 4


class ChildFailed(RuntimeError):
    """The child process raised, or ended without saying it was done."""


class FileReader(Protocol):
    """What ``messages`` runs in the child."""

    def file_messages(self, path: Path) -> Iterator[tuple[Any, ...]]: ...


def can_start() -> bool:
    """Tell whether a child interpreter can be started (an embedded Python may have none)."""
    return bool(sys.executable)


def picklable(reader: FileReader) -> bytes | None:
    """Return ``reader`` pickled, or None when it cannot be (it holds a lambda, say)."""
    try:
        return pickle.dumps(reader, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None


def messages(payload: bytes, path: Path) -> Iterator[tuple[Any, ...]]:
    """Yield the messages of the pickled reader ``payload`` reading ``path`` in a child
    process."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, sys.path)))
    child = subprocess.Popen(
        [sys.executable, "-P", "-m", __name__, str(path.resolve())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=environment,
    )
    assert child.stdin is not None and child.stdout is not None
    finished = False
    try:
        try:
            with child.stdin:
                child.stdin.write(payload)
        except BrokenPipeError:  # it ended before reading: said below, with its exit code
            pass
        while True:
            try:
                message = pickle.load(child.stdout)
            except (EOFError, pickle.UnpicklingError):  # ended, maybe mid-message
                try:
                    code: int | None = child.wait(STOP_SECONDS)
                except subprocess.TimeoutExpired:  # closed its output but lives on
                    code = None
                raise ChildFailed(
                    f"the reader of {path} stopped without finishing (exit code {code})"
                ) from None
            if message[0] == FAILED:
                raise ChildFailed(f"reading {path} failed in the reader process:\n{message[1]}")
            if message[0] == DONE:
                finished = True
                return
            yield message
    finally:
        _stop(child, finished)


def _stop(child: subprocess.Popen[bytes], finished: bool) -> None:
    """Wait for a child that said it was done; stop one that did not."""
    if not finished and child.poll() is None:
        child.terminate()
    try:
        child.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    finally:
        if child.stdout is not None:
            child.stdout.close()


def serve(path: Path, source: IO[bytes], out: IO[bytes]) -> None:
    """The child's work: read ``path`` with the reader pickled in ``source``, writing each
    message pickled to ``out``.

    The messages are written by a thread of their own, up to ``AHEAD`` of them waiting, so the
    reader goes on while the parent is busy with a batch before (the reader's work comes in
    lumps: a day is tallied when its last row has come).
    """
    outbox: queue.Queue[bytes | None] = queue.Queue(AHEAD)
    sender = _Sender(outbox, out)
    sender.start()
    try:
        try:
            reader: FileReader = pickle.loads(source.read())
            for message in reader.file_messages(path):
                outbox.put(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
                if sender.failure is not None:
                    break  # the parent stopped reading: nobody is left to tell
            else:
                outbox.put(pickle.dumps((DONE,)))
        except Exception:  # noqa: BLE001 - everything is reported to the parent
            outbox.put(pickle.dumps((FAILED, traceback.format_exc())))
    finally:
        outbox.put(None)
        sender.join()
    if sender.failure is not None:
        raise sender.failure


class _Sender(threading.Thread):
    """Write the pickled messages of a queue to ``out`` until it gives None; after a failed
    write, take the rest without writing them (``failure`` says why)."""

    def __init__(self, outbox: queue.Queue[bytes | None], out: IO[bytes]) -> None:
        super().__init__(name="child-reader-sender", daemon=True)
        self.outbox = outbox
        self.out = out
        self.failure: OSError | None = None

    def run(self) -> None:
        while (message := self.outbox.get()) is not None:
            if self.failure is None:
                try:
                    self.out.write(message)
                    self.out.flush()  # sent now, whatever comes next
                except OSError as error:  # BrokenPipeError: the parent stopped reading
                    self.failure = error


def main() -> None:
    """Entry point of the child: messages go to the standard output as it was, anything the
    reader prints to the standard error. Ctrl-C on the terminal is left to the parent, which
    stops the child."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        serve(Path(sys.argv[1]), sys.stdin.buffer, out)
    except BrokenPipeError:  # the parent stopped reading
        pass
    finally:
        try:
            out.close()
        except BrokenPipeError:
            pass


if __name__ == "__main__":
    main()
