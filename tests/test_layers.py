"""The floor plan: every import under ``src/alertstation`` runs down the layers, never up.

The imports are read with ``ast`` (no module is imported), including imports inside functions
and under ``if TYPE_CHECKING:``. The test fails on:

* an import of a package in a higher layer (the one exception: ``Station``'s type-only
  references to the caches it holds, listed in ``TYPE_ONLY``);
* a cycle between packages, or between files;
* a domain importing ``app``, ``cli`` or ``worker``;
* a package or top-level module that has no place in ``LAYERS`` (give it one).

Imports within one layer are allowed as long as they form no cycle. Where a new domain goes is
written down here before its first line: ``traffic`` beside ``alerts``, ``audio`` above ``eas``
(it relays through the forward path), ``operations`` beside ``system``. See
``docs/architecture.md``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "alertstation"

#: Bottom (1) to top (11). A name is a sub-package or a top-level module of ``alertstation``.
LAYERS: Mapping[str, int] = {
    # 1: the ground every layer stands on
    "__init__": 1,
    "rounds": 1,
    "_native": 1,
    "collector": 1,
    "db": 1,
    "errors": 1,
    "kernel_loader": 1,
    "lazy": 1,
    "logs": 1,
    "same": 1,
    "settings": 1,
    "version": 1,
    # 2: the web and command plumbing
    "commands": 2,
    "http": 2,
    # 3: what a running station hands to resources and jobs
    "context": 3,
    # 4
    "audit": 4,
    # 5: accounts, the ban list and its detectors, the zone catalog, saved settings
    "auth": 5,
    "notifications": 5,
    "security": 5,
    "settings_admin": 5,
    "zones": 5,
    # 6: alert ingest (traffic records beside it)
    "alerts": 6,
    "traffic": 6,
    # 7: encoding, airing, auto-forward
    "eas": 7,
    # 8: audio sources and monitors relay through the forward path
    "audio": 8,
    # 9: the worker and what watches the whole station
    "operations": 9,
    "system": 9,
    "worker": 9,
    # 10: wiring
    "app": 10,
    "schema": 10,
    "station": 10,
    # 11: the entry points
    "__main__": 11,
    "background": 11,
    "cli": 11,
    "server": 11,
}

#: Packages of the product's domains: they may never import these.
DOMAINS = frozenset(
    {
        "audit",
        "auth",
        "security",
        "zones",
        "settings_admin",
        "notifications",
        "alerts",
        "traffic",
        "eas",
        "audio",
    }
)
FORBIDDEN_FOR_DOMAINS = frozenset({"app", "cli", "worker"})

#: The only upward imports: ``Station`` names the caches it holds, for type checkers only.
TYPE_ONLY: Mapping[str, frozenset[str]] = {
    "alertstation.context": frozenset(
        {
            "alertstation.alerts.broadcast",
            "alertstation.audit.ledger",
            "alertstation.eas.airing.queue",
            "alertstation.security.autoban.settings",
            "alertstation.security.bans.gate",
            "alertstation.zones.catalog",
        }
    )
}


@dataclass(frozen=True)
class Import:
    """One ``alertstation`` import: which module, of what, on which line, and how guarded."""

    module: str
    target: str
    line: int
    type_only: bool  # under ``if TYPE_CHECKING:``
    deferred: bool  # inside a function

    def __str__(self) -> str:
        where = (
            " (TYPE_CHECKING)" if self.type_only else " (in a function)" if self.deferred else ""
        )
        return f"{self.module}:{self.line} imports {self.target}{where}"


def module_names(root: Path = SOURCE) -> dict[str, Path]:
    """Map every module's dotted name to its file."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _guarded_nodes(tree: ast.AST) -> tuple[set[int], set[int]]:
    """Return the ids of import nodes under TYPE_CHECKING and of those inside functions."""
    type_only: set[int] = set()
    deferred: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(n) for stmt in node.body for n in ast.walk(stmt))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            deferred.update(id(n) for n in ast.walk(node))
    return type_only, deferred


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        parts = module.split(".")
        if not is_package:
            parts.pop()
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    for alias in node.names:
        yield f"{base}.{alias.name}"


def _resolve(name: str, known: Mapping[str, Path]) -> str:
    """Return the longest known module ``name`` starts with (``from m import f`` → ``m``)."""
    while name not in known and "." in name:
        name = name.rpartition(".")[0]
    return name


def collect_imports(root: Path = SOURCE) -> list[Import]:
    """Read every ``alertstation`` import of every module under ``root``."""
    known = module_names(root)
    found = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        type_only, deferred = _guarded_nodes(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(node, module, path.name == "__init__.py"):
                if target != "alertstation" and not target.startswith("alertstation."):
                    continue
                found.append(
                    Import(
                        module,
                        _resolve(target, known),
                        node.lineno,
                        id(node) in type_only,
                        id(node) in deferred,
                    )
                )
    return found


def package_of(module: str) -> str:
    """Return the layer-table name of a module: its package under alertstation, or itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def unplaced(imports: Iterable[Import], names: Iterable[str]) -> list[str]:
    """Return the packages and modules that have no layer."""
    seen = {package_of(name) for name in names}
    for item in imports:
        seen.update((package_of(item.module), package_of(item.target)))
    return sorted(name for name in seen if name not in LAYERS)


def upward_imports(imports: Iterable[Import]) -> list[Import]:
    """Return the imports of a higher layer, less the allowed type-only cache references."""
    wrong = []
    for item in imports:
        source, target = package_of(item.module), package_of(item.target)
        if source == target or LAYERS.get(target, 0) <= LAYERS.get(source, 0):
            continue
        if item.type_only and item.target in TYPE_ONLY.get(item.module, ()):
            continue
        wrong.append(item)
    return wrong


def domain_reaching_up(imports: Iterable[Import]) -> list[Import]:
    """Return the imports of app, cli or worker made by a domain package."""
    return [
        item
        for item in imports
        if package_of(item.module) in DOMAINS and package_of(item.target) in FORBIDDEN_FOR_DOMAINS
    ]


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Return every strongly connected group of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    nodes = sorted(set(edges) | {n for targets in edges.values() for n in targets})
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def sub_package_of(module: str, packages: frozenset[str]) -> str:
    """Return the innermost package holding ``module`` (a package holds itself)."""
    return module if module in packages else module.rpartition(".")[0]


def sub_package_graph(imports: Iterable[Import], packages: frozenset[str]) -> dict[str, set[str]]:
    """Build the graph between sub-packages (``security.bans`` → ``security.hostban``).

    An import of an enclosing package's own module (``security.bans`` → ``security.bantable``)
    is the ground a sub-package stands on, not an edge.
    """
    edges: dict[str, set[str]] = defaultdict(set)
    for item in imports:
        if item.type_only:
            continue
        source = sub_package_of(item.module, packages)
        target = sub_package_of(item.target, packages)
        if source != target and not source.startswith(target + "."):
            edges[source].add(target)
    return edges


def graph(imports: Iterable[Import], key: object = None) -> dict[str, set[str]]:
    """Build the import graph (type-only imports left out), by package or by file."""
    edges: dict[str, set[str]] = defaultdict(set)
    for item in imports:
        if item.type_only:
            continue
        source, target = (
            (package_of(item.module), package_of(item.target))
            if key == "package"
            else (item.module, item.target)
        )
        if source != target:
            edges[source].add(target)
    return edges


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return collect_imports()


def test_every_package_has_a_layer(imports: list[Import]) -> None:
    missing = unplaced(imports, module_names())
    assert not missing, f"add these to LAYERS in tests/test_layers.py: {missing}"


def test_no_import_runs_up_the_layers(imports: list[Import]) -> None:
    wrong = upward_imports(imports)
    assert not wrong, "upward imports:\n" + "\n".join(map(str, wrong))


def test_type_only_exceptions_are_type_only(imports: list[Import]) -> None:
    for module, allowed in TYPE_ONLY.items():
        runtime = [i for i in imports if i.module == module and i.target in allowed]
        assert all(i.type_only for i in runtime), "\n".join(map(str, runtime))


def test_no_domain_imports_app_cli_or_worker(imports: list[Import]) -> None:
    wrong = domain_reaching_up(imports)
    assert not wrong, "\n".join(map(str, wrong))


def test_no_cycle_between_packages(imports: list[Import]) -> None:
    assert cycles(graph(imports, "package")) == []


def test_no_cycle_between_files(imports: list[Import]) -> None:
    assert cycles(graph(imports)) == []


def test_no_cycle_between_sub_packages(imports: list[Import]) -> None:
    packages = frozenset(name for name, path in module_names().items() if path.stem == "__init__")
    assert cycles(sub_package_graph(imports, packages)) == []


def deferred_outside_commands(imports: Iterable[Import]) -> list[Import]:
    """Return function-level imports outside command modules (``cli``), where they are kept
    only so a command starts quickly; anywhere else one usually hides a cycle."""
    return [
        item
        for item in imports
        if item.deferred and not item.type_only and item.module.rpartition(".")[2] != "cli"
    ]


def test_imports_inside_functions_only_in_command_modules(imports: list[Import]) -> None:
    wrong = deferred_outside_commands(imports)
    assert not wrong, "import these at the top of the module:\n" + "\n".join(map(str, wrong))


#: The one module that imports while the program runs (``lazy.load``), command modules aside.
LAZY_HOME = "alertstation.lazy"


@dataclass(frozen=True)
class LateImport:
    """An ``import`` statement inside a function: which module, on which line, what it says."""

    module: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} {self.text}"


def late_imports(module: str, source: str) -> list[LateImport]:
    """Return the function-level imports of any module (third-party and standard ones too)
    in one module's source, those under ``if TYPE_CHECKING:`` excepted."""
    tree = ast.parse(source)
    type_only, deferred = _guarded_nodes(tree)
    return sorted(
        (
            LateImport(module, node.lineno, ast.unparse(node))
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            and id(node) in deferred
            and id(node) not in type_only
        ),
        key=lambda item: item.line,
    )


def late_imports_outside_lazy(root: Path = SOURCE) -> list[LateImport]:
    """Return function-level imports outside ``alertstation.lazy`` and the ``cli`` modules."""
    found: list[LateImport] = []
    for module, path in module_names(root).items():
        if module == LAZY_HOME or module.rpartition(".")[2] == "cli":
            continue
        found.extend(late_imports(module, path.read_text()))
    return found


def test_heavy_modules_are_imported_through_lazy_only() -> None:
    """A module imported while the program runs goes through ``alertstation.lazy``."""
    wrong = late_imports_outside_lazy()
    assert not wrong, (
        "name these at the top of the module, through alertstation.lazy for a heavy one:\n"
        + "\n".join(map(str, wrong))
    )


def test_the_late_import_check_catches_every_kind() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import os\n"
        "if TYPE_CHECKING:\n"
        "    from fpdf import FPDF\n"
        "def f():\n"
        "    import scipy.signal\n"
        "    if TYPE_CHECKING:\n"
        "        import lxml\n"
        "    from datetime import UTC\n"
        "    def g():\n"
        "        from alertstation import lazy\n"
    )
    found = [item.text for item in late_imports("m", source)]
    assert found == [
        "import scipy.signal",
        "from datetime import UTC",
        "from alertstation import lazy",
    ]


def test_the_checks_catch_what_they_are_for() -> None:
    """An upward import, a cycle and a domain importing the worker are all reported."""
    upward = Import("alertstation.db.engine", "alertstation.alerts.store", 3, False, True)
    cache = Import("alertstation.context", "alertstation.audit.ledger", 9, False, False)
    allowed = Import("alertstation.context", "alertstation.audit.ledger", 9, True, False)
    worker = Import("alertstation.eas.forward.service", "alertstation.worker.jobs", 5, False, True)
    assert upward_imports([upward, cache, allowed]) == [upward, cache]
    assert domain_reaching_up([worker, upward]) == [worker]
    command = Import("alertstation.eas.cli", "alertstation.eas.manual", 7, False, True)
    assert deferred_outside_commands([worker, command, cache]) == [worker]
    sideways = [
        Import(
            "alertstation.auth.resources", "alertstation.security.bans.service", 1, False, False
        ),
        Import("alertstation.security.bans.gate", "alertstation.auth.sessions", 1, False, True),
    ]
    assert upward_imports(sideways) == []
    assert cycles(graph(sideways, "package")) == [["auth", "security"]]
    assert cycles(graph(sideways)) == []
    packages = frozenset({"alertstation.security.bans", "alertstation.security.hostban"})
    knot = [
        Import(
            "alertstation.security.bans.removal",
            "alertstation.security.hostban.service",
            1,
            False,
            False,
        ),
        Import(
            "alertstation.security.hostban.log",
            "alertstation.security.bans.service",
            1,
            False,
            False,
        ),
        Import(
            "alertstation.security.bans.gate", "alertstation.security.bantable", 1, False, False
        ),
    ]
    assert cycles(sub_package_graph(knot, packages)) == [sorted(packages)]
    assert cycles(sub_package_graph(knot[1:], packages)) == []
    assert unplaced(
        [Import("alertstation.newthing.x", "alertstation.db", 1, False, False)], []
    ) == ["newthing"]
