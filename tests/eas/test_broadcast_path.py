"""One broadcast path: no origin airs a message other than through ``broadcast.broadcast``.

The source is read with ``ast`` (nothing is imported). Only the airing loop (``onair``) and the
outputs package itself may touch an output (build, play, stream, key the relays); only the
broadcast module may queue a message. Every origin's module calls the broadcast function.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "alertstation"

#: Names that put audio on an output or key the transmitter.
PLAYING = frozenset(
    {
        "play_all",
        "build_outputs",
        "IcecastOutput",
        "AlsaOutput",
        "ArchiveOutput",
        "connect_source",
        "keyed",
        "AirControl",
    }
)
#: Names that put a message in the airing queue.
QUEUEING = frozenset({"enqueue", "_queue_message"})

PLAYERS = ("eas/airing/onair.py", "eas/airing/outputs/")
QUEUERS = ("eas/airing/broadcast.py", "eas/airing/queue.py")
#: Each origin's module and the broadcast call it must make.
ORIGIN_MODULES = {
    "eas/manual.py": "manual",
    "eas/forward/service.py": "forward",
    "eas/forward/rwt.py": "rwt",
    "eas/forward/relay.py": "relay",
}


@cache
def used_names(tree: ast.AST) -> frozenset[str]:
    """Return the names a module refers to: bare names, attributes and imported names."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            found.update(alias.name for alias in node.names)
    return frozenset(found)


@cache
def modules() -> dict[str, ast.AST]:
    return {
        path.relative_to(SOURCE).as_posix(): ast.parse(path.read_text(), str(path))
        for path in SOURCE.rglob("*.py")
    }


def allowed(name: str, where: tuple[str, ...]) -> bool:
    return any(name == place or (place.endswith("/") and name.startswith(place)) for place in where)


def test_only_the_airing_loop_touches_an_output() -> None:
    offenders = {
        name: sorted(used_names(tree) & PLAYING)
        for name, tree in modules().items()
        if not allowed(name, PLAYERS) and used_names(tree) & PLAYING
    }
    assert offenders == {}


def test_only_the_broadcast_function_queues_a_message() -> None:
    offenders = {
        name: sorted(used_names(tree) & QUEUEING)
        for name, tree in modules().items()
        if not allowed(name, QUEUERS) and used_names(tree) & QUEUEING
    }
    assert offenders == {}


def broadcast_origins(tree: ast.AST) -> set[str]:
    """Return the ``origin=`` of every ``broadcast.broadcast(...)`` call in a module."""
    origins: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name == "broadcast":
            for keyword in node.keywords:
                if keyword.arg == "origin" and isinstance(keyword.value, ast.Constant):
                    origins.add(keyword.value.value)
    return origins


def test_every_origin_airs_through_the_broadcast_function() -> None:
    found = modules()
    for module, origin in ORIGIN_MODULES.items():
        assert origin in broadcast_origins(found[module]), module
    assert "resend" in broadcast_origins(found["eas/airing/broadcast.py"])


def test_the_check_sees_an_offender() -> None:
    rogue = ast.parse(
        "from alertstation.eas.airing.outputs import play_all\n"
        "def air(outputs, message):\n    return play_all(outputs, message)\n"
    )
    assert used_names(rogue) & PLAYING == {"play_all"}
    sneaky = ast.parse("def q(conn):\n    airing.enqueue(conn, 1, 'manual', None)\n")
    assert used_names(sneaky) & QUEUEING == {"enqueue"}
