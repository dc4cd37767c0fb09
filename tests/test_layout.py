"""The layout is a map (STYLE.md "Layout as a map", issue 27, docs/architecture.md).

The import graph of ``controller``, ``drivers`` and ``firmware_sim`` is built from the source
files with :mod:`ast` (nothing is imported, so a module that would fail to import, or one that
imports lazily inside a function or under ``TYPE_CHECKING``, is still seen), and checked against
the layer order the code keeps today: a module imports only its own layer or layers below it, no
two rooms (packages) import each other even indirectly, no two modules do so at run time, the
drivers and the simulators take from ``controller`` only the card vocabulary, and nothing in
``controller`` opens a port itself.

The few imports that break a rule today and belong to another change are listed by name in
:data:`KNOWN_EXCEPTIONS`, each with its reason; a new one fails, and a listed one that has been
fixed fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("controller", "drivers", "firmware_sim")

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation: the card vocabulary, errors, logging, strict JSON, printable text, the "
     "installed-files check, the roles",
     ("controller", "controller.errors", "controller.games", "controller.strictjson",
      "controller.journald", "controller.logsetup", "controller.selfcheck",
      "controller.deploy", "controller.deferred", "controller.heap", "controller.text",
      "controller.roles")),
    ("bytes: transports, USB lookup, bounded windows, driver errors, the backoff helper",
     ("drivers", "drivers.errors", "drivers.transport", "drivers.usb_find", "drivers.usb_bulk",
      "drivers.window", "drivers.backoff")),
    ("device events and deck maps", ("drivers.events", "drivers.decks")),
    ("devices: frames, messages, links, the shuffler and the shoes",
     ("drivers.runner", "drivers.framed", "drivers.shuffler", "drivers.shoe")),
    ("the driver conformance kit", ("drivers.conformance",)),
    ("simulated devices",
     ("firmware_sim", "firmware_sim.faults", "firmware_sim.shuffle_models",
      "firmware_sim.shoe_deck", "firmware_sim.framed", "firmware_sim.shuffler",
      "firmware_sim.shoe_framed", "firmware_sim.beetek", "firmware_sim.scanner",
      "firmware_sim.serve", "firmware_sim.usb", "firmware_sim.registry")),
    ("settlement", ("controller.settlement",)),
    ("table", ("controller.table",)),
    ("game protection", ("controller.protection",)),
    ("journal", ("controller.journal",)),
    ("analysis", ("controller.analysis",)),
    ("service base: config, policies, errors, protocol, key file, visibility",
     ("controller.service",)),
    ("service clock: the kernel clock and the clock monitor", ("controller.service.clock",)),
    ("service control socket: server, connections, access, client",
     ("controller.service.control",)),
    ("service device operator", ("controller.service.operator",)),
    ("service wiring: the pipeline, the table thread, the request handler, the device",
     ("controller.service.wiring",)),
    ("service lifecycle: the process under systemd", ("controller.service.lifecycle",)),
    ("processes on the service or its journal: feed, web, studio, bench",
     ("controller.feed", "controller.web", "controller.studio", "controller.bench")),
    ("floor", ("controller.floor",)),
    ("cli", ("controller.cli",)),
    ("entry points", ("controller.__main__", "controller.feed.__main__",
                      "firmware_sim.__main__")),
)
"""Lowest first. Derived from what the code imports today, not from wishes: the card vocabulary
(``controller.games``, pure, importing only ``controller.errors``) is below the drivers because
every device event carries a :class:`~controller.games.cards.Card`; settlement is below the table
because the machine calls it; game protection is below the journal because the recorder holds the
guard. Inside the service, its base (the modules directly in ``controller/service``) is below
its rooms, and the rooms are ordered base < clock < control < operator < wiring < lifecycle: the
wiring plugs the clock, the socket and the operator together, and the lifecycle starts the
wiring. A module's layer is that of the longest name listed that is the module or a package
holding it; a top-level package's name (``controller``) stands for its ``__init__`` alone, so a
new loose module is unplaced until it is put on the map."""

SERVICE_BASE = ("controller.service", "controller.service.config", "controller.service.errors",
                "controller.service.keyfile", "controller.service.policy",
                "controller.service.protocol", "controller.service.tomlread",
                "controller.service.visibility")
"""The modules directly in ``controller/service``: what every room of the service shares (and
the web, the feed, the studio and the CLI take from it: the protocol, the config, the errors,
the visibility rule). Listed, so that a new loose module is put in a room or here on purpose."""
SERVICE_ROOMS = ("controller.service.clock", "controller.service.control",
                 "controller.service.operator", "controller.service.wiring",
                 "controller.service.lifecycle")
"""The service's rooms, lowest first (as in :data:`LAYERS`)."""

CARD_VOCABULARY = frozenset({"controller.games.cards", "controller.errors",
                             "controller.games.shuffling"})
"""What the drivers and the simulators may take from ``controller``: the card a device event
carries, the error its parser raises, and the shuffling machine's arithmetic game protection
models (one copy, below both: the simulated shuffler is such a machine). (It lives in
``controller`` for history; moving it to a package of its own would let this rule read
"nothing".)"""

KNOWN_EXCEPTIONS: Mapping[tuple[str, str], str] = {
    ("firmware_sim.__main__", "controller.logsetup"):
        "the simulator's entry point configures logging the one way the project does "
        "(STYLE.md: configure once, in the entry point)",
}
"""Imports that break a rule today, with the reason each stays: (importer module, imported
module or any module under it)."""

PORT_LIBRARIES = frozenset({"serial", "usb"})
CODEC_MODULE_NAMES = frozenset({"crc", "codec", "codes", "framing", "messages", "event_messages",
                                "event_ids"})
"""Driver modules that turn bytes into values and back: pure, so they know no port or thread."""
CODEC_MUST_NOT_IMPORT = frozenset({"drivers.transport", "drivers.runner", "drivers.usb_bulk",
                                   "drivers.usb_find", "serial", "usb", "threading", "queue"})


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement's edge: ``importer`` (line ``line``) names ``imported``;
    ``type_only`` when it sits under ``if TYPE_CHECKING:`` and so never runs."""

    importer: str
    imported: str
    line: int
    type_only: bool = False

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} imports {self.imported}"


@dataclass(frozen=True, slots=True)
class ImportGraph:
    """The project's modules, which of them are packages, and every import between them
    (``project``) or out of the project (``external``, by top-level name)."""

    modules: frozenset[str]
    packages: frozenset[str]
    project: tuple[Import, ...]
    external: tuple[Import, ...]

    def room_of(self, module: str) -> str:
        """The deepest package holding ``module``; a module directly inside a top-level package
        (``controller.errors``) is a room of its own, as is a top-level package's own
        ``__init__``."""
        parts = module.split(".")
        for length in range(len(parts), 2, -1):
            candidate = ".".join(parts[:length])
            if candidate in self.packages:
                return candidate
        return ".".join(parts[:2])

    def runtime_imports(self) -> dict[str, dict[str, Import]]:
        """module -> imported module -> the import, for the imports that run (not the ones
        under ``TYPE_CHECKING``)."""
        modules: dict[str, dict[str, Import]] = defaultdict(dict)
        for edge in self.project:
            if not edge.type_only:
                modules[edge.importer].setdefault(edge.imported, edge)
        return modules

    def room_imports(self, skip: Iterable[tuple[str, str]] = ()) -> dict[str, dict[str, Import]]:
        """room -> imported room -> one import that makes the edge (for the message), leaving
        out the imports ``skip`` names (see :func:`excused`)."""
        skipped = tuple(skip)
        rooms: dict[str, dict[str, Import]] = defaultdict(dict)
        for edge in self.project:
            source, target = self.room_of(edge.importer), self.room_of(edge.imported)
            if source != target and not excused(edge, skipped):
                rooms[source].setdefault(target, edge)
        return rooms


def excused(edge: Import, exceptions: Iterable[tuple[str, str]]) -> bool:
    """Whether ``edge`` is one of ``exceptions``: its importer, and its imported module or a
    package holding it."""
    return any(edge.importer == importer and (edge.imported == imported
                                              or edge.imported.startswith(imported + "."))
               for importer, imported in exceptions)


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _named(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> Iterator[str]:
    """The dotted names an import statement names (``from a import b`` names ``a.b``, which is a
    module or else a name inside ``a``)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        parts = importer.split(".")
        anchor = parts[: len(parts) - node.level + (1 if is_package else 0)]
        base = ".".join([*anchor, base] if base else anchor)
    for alias in node.names:
        yield f"{base}.{alias.name}"


def _type_checking_lines(tree: ast.Module) -> frozenset[int]:
    """Lines of the imports under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            lines.update(inner.lineno for statement in node.body for inner in ast.walk(statement)
                         if isinstance(inner, ast.Import | ast.ImportFrom))
    return frozenset(lines)


def build_graph(root: Path, packages: Iterable[str] = PACKAGES) -> ImportGraph:
    """Parse every ``.py`` under ``root/<package>`` and resolve its imports to modules."""
    sources = {_module_name(root, path): path
               for package in packages for path in sorted((root / package).rglob("*.py"))}
    modules = frozenset(sources)
    package_names = frozenset(name for name, path in sources.items()
                              if path.name == "__init__.py")
    project: list[Import] = []
    external: list[Import] = []
    for importer, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        type_only = _type_checking_lines(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _named(node, importer, path.name == "__init__.py"):
                target = _longest_module(name, modules)
                if target is None:
                    external.append(Import(importer, name.split(".")[0], node.lineno,
                                           node.lineno in type_only))
                elif target != importer:
                    project.append(Import(importer, target, node.lineno,
                                          node.lineno in type_only))
    return ImportGraph(modules, package_names, tuple(project), tuple(external))


def _longest_module(name: str, modules: frozenset[str]) -> str | None:
    parts = name.split(".")
    for length in range(len(parts), 0, -1):
        candidate = ".".join(parts[:length])
        if candidate in modules:
            return candidate
    return None


def layer_of(module: str, layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS) -> int | None:
    """Index of the layer whose longest listed name is ``module`` or a package holding it
    (a top-level package only as itself); None if unplaced."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(layers):
        for prefix in prefixes:
            holds = "." in prefix and module.startswith(prefix + ".")
            if module == prefix or holds:
                if best is None or len(prefix) > best[1]:
                    best = (index, len(prefix))
    return None if best is None else best[0]


def upward_imports(graph: ImportGraph,
                   layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS) -> list[Import]:
    """Every import from a layer into a higher one."""
    found = []
    for edge in graph.project:
        source, target = layer_of(edge.importer, layers), layer_of(edge.imported, layers)
        if source is not None and target is not None and target > source:
            found.append(edge)
    return found


def import_cycles(graph: Mapping[str, Mapping[str, Import]]) -> list[list[str]]:
    """The groups of more than one node that import each other, directly or through others
    (strongly connected components, Tarjan's algorithm without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    nodes = sorted(set(graph) | {target for targets in graph.values() for target in targets})
    for start in nodes:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, {})))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
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
                    groups.append(sorted(group))
    return groups


def _cycle_report(groups: list[list[str]], graph: Mapping[str, Mapping[str, Import]]) -> str:
    lines = []
    for group in groups:
        lines.append(" <-> ".join(group))
        lines.extend(f"    {graph[a][b]}" for a in group for b in group if b in graph.get(a, {}))
    return "\n".join(lines)


@pytest.fixture(name="graph", scope="module")
def fixture_graph() -> ImportGraph:
    return build_graph(PROJECT_ROOT)


def _unexcused(edges: Iterable[Import]) -> list[str]:
    return [str(edge) for edge in edges if not excused(edge, KNOWN_EXCEPTIONS)]


def test_the_graph_is_the_project(graph: ImportGraph) -> None:
    """The graph sees the whole project, so the checks below are not vacuous (lazy imports
    and relative ones: the last test)."""
    assert len(graph.modules) > 200
    edges = {(edge.importer, edge.imported) for edge in graph.project}
    assert ("controller.bench.rig", "controller.service.wiring.pipeline") in edges
    assert ("controller.cli.bench", "controller.bench") in edges
    assert ("drivers.shuffler", "drivers.framed.device") in edges
    assert ("controller.service.wiring.pipeline", "controller.service.clock.watch") in edges
    assert ("controller.service.lifecycle.app", "controller.service.control.server") in edges


def test_a_room_is_a_package(graph: ImportGraph) -> None:
    """Every room of ``controller`` is a package, but for the few modules every layer shares
    and the entry point: the bench is ``controller/bench/``, not six loose ``bench*`` modules
    (issue 27)."""
    loose = sorted(module for module in graph.modules
                   if module.count(".") == 1 and module.startswith("controller.")
                   and module not in graph.packages)
    assert loose == ["controller.__main__", "controller.deferred", "controller.errors",
                     "controller.heap",
                     "controller.journald", "controller.logsetup", "controller.roles",
                     "controller.strictjson", "controller.text"]
    assert "controller.bench" in graph.packages


def test_the_service_is_rooms_over_a_base(graph: ImportGraph) -> None:
    """``controller/service`` is a base of shared modules and one package per concern (STYLE.md,
    "Layout as a map"; issue 27): no loose module but the base, no room but those placed in
    :data:`LAYERS` in the order :data:`SERVICE_ROOMS` states."""
    inside = sorted(module for module in graph.modules
                    if module.startswith("controller.service."))
    loose = sorted(module for module in inside
                   if module.count(".") == 2 and module not in graph.packages)
    assert loose == sorted(SERVICE_BASE[1:])
    rooms = sorted(module for module in inside
                   if module.count(".") == 2 and module in graph.packages)
    assert rooms == sorted(SERVICE_ROOMS)
    base = layer_of("controller.service")
    assert base is not None
    assert all(layer_of(module) == base for module in SERVICE_BASE)
    order = [layer_of(room) or -1 for room in SERVICE_ROOMS]
    assert order == sorted(set(order)) and order[0] > base, "one layer per room, in order"


def test_every_module_has_a_layer(graph: ImportGraph) -> None:
    """A new room is placed in the map on purpose (here and in docs/architecture.md)."""
    unplaced = sorted(module for module in graph.modules if layer_of(module) is None)
    assert not unplaced, f"place these in LAYERS and docs/architecture.md: {unplaced}"


def test_the_map_names_every_room(graph: ImportGraph) -> None:
    """docs/architecture.md names every package of the three, so a new room reaches the map."""
    text = (PROJECT_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rooms = sorted(package for package in graph.packages if package.count(".") == 1)
    assert len(rooms) >= 15
    missing = [room for room in rooms if room.replace(".", "/") + "/" not in text]
    assert not missing, f"docs/architecture.md does not name {missing}"


def test_imports_only_go_down(graph: ImportGraph) -> None:
    """No module imports a layer above its own: the rules and settlement know nothing of the
    service, the web or the CLI; the drivers nothing of the table; the journal nothing of the
    service."""
    upward = _unexcused(upward_imports(graph))
    assert not upward, "imports from a lower layer into a higher one:\n" + "\n".join(upward)


def test_no_import_cycle_between_rooms(graph: ImportGraph) -> None:
    """No two rooms (packages, or loose modules of a top-level package) import each other,
    directly or through others."""
    rooms = graph.room_imports(skip=KNOWN_EXCEPTIONS)
    groups = import_cycles(rooms)
    assert not groups, "rooms that import each other:\n" + _cycle_report(groups, rooms)


def test_no_runtime_import_cycle_between_modules(graph: ImportGraph) -> None:
    """No two modules import each other at run time, not even lazily inside a function (issue
    27 found ``service.app`` and ``service.wiring`` importing each other): an import cycle makes
    what a module sees depend on which one was imported first. Imports under
    ``TYPE_CHECKING`` never run and are left to the room check above."""
    modules = graph.runtime_imports()
    groups = import_cycles(modules)
    assert not groups, "modules that import each other:\n" + _cycle_report(groups, modules)


def test_drivers_and_simulators_take_only_the_card_vocabulary(graph: ImportGraph) -> None:
    """``drivers`` and ``firmware_sim`` do not import ``controller``, but for the card a device
    event carries and the error its parser raises."""
    reaching_up = [edge for edge in graph.project
                   if edge.importer.split(".")[0] in {"drivers", "firmware_sim"}
                   and edge.imported.split(".")[0] == "controller"
                   and edge.imported not in CARD_VOCABULARY]
    unexcused = _unexcused(reaching_up)
    assert not unexcused, "\n".join(unexcused)


SIMULATED_TABLE = ("controller.bench", "controller.cli.bench")
"""The bench: the simulated table itself (a simulated shuffler's faulty models and injected
faults are what it runs), the one part of ``controller`` that may import ``firmware_sim``."""


def test_production_code_imports_no_simulator(graph: ImportGraph) -> None:
    """Issue 35: the service finds its simulated device by name (the ``tablectl.simulators``
    entry points, :mod:`firmware_sim.registry`) and game protection's machine model is
    :mod:`controller.games.shuffling`; nothing of ``controller`` but the bench imports
    ``firmware_sim``."""
    reaching = [f"{edge.importer} imports {edge.imported}" for edge in graph.project
                if edge.importer.split(".")[0] == "controller"
                and edge.imported.split(".")[0] == "firmware_sim"
                and not any(edge.importer == room or edge.importer.startswith(room + ".")
                            for room in SIMULATED_TABLE)]
    assert not reaching, "\n".join(reaching)


def test_controller_opens_no_port_itself(graph: ImportGraph) -> None:
    """``controller`` never imports ``serial`` or ``usb``: device bytes stay in ``drivers``
    (STYLE.md, Layers)."""
    opening = [str(edge) for edge in graph.external
               if edge.importer.split(".")[0] == "controller" and edge.imported in PORT_LIBRARIES]
    assert not opening, "\n".join(opening)


def test_codecs_know_no_port_or_thread(graph: ImportGraph) -> None:
    """A driver's framing, CRC, codec and message modules are pure (``decode(buf)``): they
    import no transport, runner, USB lookup, port library or threading."""
    codecs = {module for module in graph.modules if module.startswith("drivers.")
              and (module.rsplit(".", 1)[-1] in CODEC_MODULE_NAMES
                   or module.endswith("_codec"))}
    assert len(codecs) >= 8
    impure = [str(edge) for edge in (*graph.project, *graph.external)
              if edge.importer in codecs and edge.imported in CODEC_MUST_NOT_IMPORT]
    assert not impure, "\n".join(impure)


def test_known_exceptions_are_still_real(graph: ImportGraph) -> None:
    """An exception that has been fixed leaves :data:`KNOWN_EXCEPTIONS`, so the list only
    shrinks and never excuses a future import of the same kind."""
    fixed = sorted(pair for pair in KNOWN_EXCEPTIONS
                   if not any(excused(edge, [pair]) for edge in graph.project))
    assert not fixed, f"fixed: delete from KNOWN_EXCEPTIONS in tests/test_layout.py: {fixed}"


def _write(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_checks_catch_a_planted_cycle_and_upward_import(tmp_path: Path) -> None:
    """The checker itself: on a small tree with an upward import (a lazy one inside a
    function) closing a cycle between two rooms and two modules, relative imports and a
    type-only one, it reports exactly those."""
    _write(tmp_path, {
        "app/__init__.py": "",
        "app/low/__init__.py": "",
        "app/low/rules.py": "def f():\n    from app.high.service import run\n",
        "app/high/__init__.py": "",
        "app/high/service.py": "from ..low import rules\nimport serial\n",
        "app/high/other.py": "from . import service\n",
        "app/high/typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                             "    from app.high import other\n",
    })
    graph = build_graph(tmp_path, ("app",))
    layers = (("low", ("app", "app.low")), ("high", ("app.high",)))
    assert [str(edge) for edge in upward_imports(graph, layers)] == [
        "app.low.rules:2 imports app.high.service"]
    rooms = graph.room_imports()
    assert import_cycles(rooms) == [["app.high", "app.low"]]
    assert import_cycles(graph.runtime_imports()) == [["app.high.service", "app.low.rules"]]
    assert ("app.high.service", "serial") in {
        (edge.importer, edge.imported) for edge in graph.external}
    assert {(edge.importer, edge.imported, edge.type_only) for edge in graph.project} >= {
        ("app.high.other", "app.high.service", False), ("app.high.typed", "app.high.other", True)}


def test_the_checks_catch_a_room_of_the_service_out_of_order(tmp_path: Path) -> None:
    """The service's rooms on the real :data:`LAYERS`, planted as the backed-out first attempt
    had them: the config (base) importing the clock monitor's policy from the clock room, the
    clock importing the control socket, and the control socket importing the wiring, which
    imports the control socket back. Each upward import is reported, and the rooms that import
    each other are one cycle."""
    _write(tmp_path, {
        "controller/__init__.py": "",
        "controller/service/__init__.py": "",
        "controller/service/errors.py": "",
        "controller/service/config.py": "from controller.service.clock.watch import Policy\n",
        "controller/service/clock/__init__.py": "",
        "controller/service/clock/watch.py": "from controller.service.errors import E\n"
                                             "from controller.service.control import server\n",
        "controller/service/control/__init__.py": "",
        "controller/service/control/server.py": "from controller.service.config import C\n"
                                                "def f():\n"
                                                "    from controller.service.wiring import p\n",
        "controller/service/wiring/__init__.py": "",
        "controller/service/wiring/p.py": "from controller.service.control.server import S\n",
    })
    graph = build_graph(tmp_path, ("controller",))
    assert [str(edge) for edge in upward_imports(graph)] == [
        "controller.service.clock.watch:2 imports controller.service.control.server",
        "controller.service.config:1 imports controller.service.clock.watch",
        "controller.service.control.server:3 imports controller.service.wiring.p"]
    assert import_cycles(graph.room_imports()) == [[
        "controller.service", "controller.service.clock", "controller.service.control",
        "controller.service.wiring"]]


SHARED_ROOTS = ("tests", "benchmarks", "testbed")
TESTS_OF_BENCHMARKS = "tests.benchmarks"
"""The tests of the benchmarks themselves: they import what they test."""
KNOWN_CROSS_IMPORTS: Mapping[str, str] = {
}
"""Imports between ``tests`` and ``benchmarks`` that remain, by the module imported (or a
package holding it), each with the reason it stays for now: a new one fails, and one no longer
imported fails too, so the list only shrinks."""


@pytest.fixture(name="shared_graph", scope="module")
def fixture_shared_graph() -> ImportGraph:
    return build_graph(PROJECT_ROOT, SHARED_ROOTS)


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def cross_imports(graph: ImportGraph) -> list[Import]:
    """Imports of a test module into ``benchmarks`` (but from :data:`TESTS_OF_BENCHMARKS`), of
    a benchmark into ``tests``, and of ``testbed`` into either."""
    found = []
    for edge in graph.project:
        source, target = edge.importer.split(".")[0], edge.imported.split(".")[0]
        if (source == "tests" and target == "benchmarks"
                and not _inside(edge.importer, TESTS_OF_BENCHMARKS)) \
                or (source == "benchmarks" and target == "tests") \
                or (source == "testbed" and target in ("tests", "benchmarks")):
            found.append(edge)
    return found


def _known_cross(edge: Import) -> bool:
    return edge.importer.split(".")[0] != "testbed" and any(
        _inside(edge.imported, known) for known in KNOWN_CROSS_IMPORTS)


def test_tests_and_benchmarks_share_code_only_through_testbed(shared_graph: ImportGraph) -> None:
    """Issue 35: ``tests`` and ``benchmarks`` do not import each other; what both run on (made-up
    journals, the scripted shift, the crash campaign's rig) lives in ``testbed/``, which
    imports neither. Tests of a benchmark live in ``tests/benchmarks/`` and may import it; any
    test may run a benchmark as a process (no import)."""
    assert {"testbed.journalgen", "testbed.crash.rig", "tests.waiting",
            "benchmarks.run"} <= shared_graph.modules
    crossing = [str(edge) for edge in cross_imports(shared_graph) if not _known_cross(edge)]
    assert not crossing, "import through testbed/ instead:\n" + "\n".join(crossing)


def test_known_cross_imports_are_still_real(shared_graph: ImportGraph) -> None:
    """A cross import that has moved to ``testbed/`` leaves :data:`KNOWN_CROSS_IMPORTS`."""
    crossing = cross_imports(shared_graph)
    fixed = sorted(known for known in KNOWN_CROSS_IMPORTS
                   if not any(_inside(edge.imported, known) for edge in crossing))
    assert not fixed, f"moved: delete from KNOWN_CROSS_IMPORTS in tests/test_layout.py: {fixed}"


WAIT_HELPER = "tests/waiting.py"
SHARED_WAIT_NAMES = frozenset({"wait_until", "wait_for", "_wait_until", "_wait_for"})
KNOWN_OWN_WAITS: Mapping[tuple[str, str], str] = {
    ("tests/feed_e2e/helpers.py", "until"):
        "the floor's verdicts: fails when the floor is silent for a while, however long the "
        "whole catch-up takes while verdicts keep coming (a bound on progress, not a deadline)",
}
"""Functions outside :data:`WAIT_HELPER` that keep a deadline of their own, (file, name), each
with the reason; the list only shrinks."""


def own_waits(root: Path) -> list[tuple[str, str, int]]:
    """(file, function, line) of every function under ``root/tests`` but :data:`WAIT_HELPER`
    that defines a wait of its own: one named as the shared helpers are, or one named for
    waiting (``wait...``, ``until...``) that reads the clock for a deadline of its own
    (``time.monotonic``)."""
    found = []
    for path in sorted((root / "tests").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name == WAIT_HELPER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            plain = node.name.lstrip("_")
            clock = any(isinstance(inner, ast.Attribute) and inner.attr == "monotonic"
                        for inner in ast.walk(node))
            if node.name in SHARED_WAIT_NAMES or (
                    plain.startswith(("wait", "until")) and clock):
                found.append((name, node.name, node.lineno))
    return found


def test_one_wait_helper() -> None:
    """Issue 35: a test waits through ``tests/waiting.py`` (a generous bound, a short backoff,
    a failure that names what was awaited and the last value seen), not through a helper of
    its own; fifteen of them had as many bounds, pauses and messages."""
    own = [f"{name}:{line} {function}" for name, function, line in own_waits(PROJECT_ROOT)
           if (name, function) not in KNOWN_OWN_WAITS]
    assert not own, "use tests/waiting.py (wait_until, wait_for):\n" + "\n".join(own)
    still = {(name, function) for name, function, _ in own_waits(PROJECT_ROOT)}
    fixed = sorted(set(KNOWN_OWN_WAITS) - still)
    assert not fixed, f"gone: delete from KNOWN_OWN_WAITS in tests/test_layout.py: {fixed}"


def test_the_checks_catch_a_cross_import_and_an_own_wait(tmp_path: Path) -> None:
    """The two checks above on a planted tree: a test importing a benchmark, a benchmark
    importing a test lazily, testbed importing a test, a test of a benchmark (allowed), and a
    test module with a wait of its own."""
    _write(tmp_path, {
        "tests/__init__.py": "",
        "tests/test_a.py": "from benchmarks.web import x\n",
        "tests/benchmarks/__init__.py": "",
        "tests/benchmarks/test_b.py": "from benchmarks import web\n",
        "tests/test_c.py": "import time\ndef _wait_ready():\n    end = time.monotonic()\n"
                           "def wait_for(q):\n    return q.get()\ndef until_done():\n"
                           "    return True\n",
        "tests/waiting.py": "import time\ndef wait_until():\n    time.monotonic()\n",
        "benchmarks/__init__.py": "",
        "benchmarks/web.py": "def f():\n    from tests.test_a import y\n",
        "testbed/__init__.py": "",
        "testbed/lab.py": "from tests import test_c\n",
    })
    graph = build_graph(tmp_path, SHARED_ROOTS)
    assert sorted(str(edge) for edge in cross_imports(graph)) == [
        "benchmarks.web:2 imports tests.test_a", "testbed.lab:1 imports tests.test_c",
        "tests.test_a:1 imports benchmarks.web"]
    assert own_waits(tmp_path) == [("tests/test_c.py", "_wait_ready", 2),
                                   ("tests/test_c.py", "wait_for", 4)]


BACKOFF_HELPER = "drivers/backoff.py"
"""The one place a wait grows after failures (issue 35, issue 45: three more were by hand)."""


def _doubling(node: ast.AST) -> bool:
    """``x * 2`` or ``2 ** n`` (a wait doubling by hand)."""
    if not isinstance(node, ast.BinOp):
        return False
    two = (2, 2.0)
    if isinstance(node.op, ast.Mult):
        return any(isinstance(side, ast.Constant) and side.value in two
                   for side in (node.left, node.right))
    return isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Constant) \
        and node.left.value in two


def own_backoffs(root: Path) -> list[tuple[str, int]]:
    """(file, line) of every ``min(...)`` in the product whose arguments double a value by
    hand: a growing wait capped by hand, outside :data:`BACKOFF_HELPER`."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if name == BACKOFF_HELPER:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                        and node.func.id == "min" \
                        and any(_doubling(inner) for arg in node.args for inner in ast.walk(arg)):
                    found.append((name, node.lineno))
    return found


def test_one_backoff_helper() -> None:
    """A wait that grows after failures is ``drivers.backoff.ExponentialBackoff`` (bounded,
    its jitter stated), never a ``min(wait * 2, cap)`` of its own."""
    own = [f"{name}:{line}" for name, line in own_backoffs(PROJECT_ROOT)]
    assert not own, "use drivers.backoff.ExponentialBackoff:\n" + "\n".join(own)


def test_the_backoff_check_catches_a_wait_doubled_by_hand(tmp_path: Path) -> None:
    _write(tmp_path, {
        "controller/__init__.py": "",
        "controller/a.py": "def f(w):\n    return min(w * 2, 5.0)\n",
        "controller/b.py": "def g(n):\n    return min(0.1 * 2 ** n, 30)\n",
        "controller/c.py": "def h(xs):\n    return min(xs) * 2\n",
        "drivers/__init__.py": "",
        "drivers/backoff.py": "def d(w):\n    return min(w * 2, 5.0)\n",
        "firmware_sim/__init__.py": "",
    })
    assert own_backoffs(tmp_path) == [("controller/a.py", 2), ("controller/b.py", 2)]


ONE_HOME_WORDS = {"awaiting_journal": "controller/service/protocol.py"}
"""Status words with one home (issue 45: ``"awaiting_journal"`` was written in five places):
anywhere else the code names the constant."""


def words_elsewhere(root: Path) -> list[tuple[str, str, int]]:
    """(word, file, line) of each string constant in :data:`ONE_HOME_WORDS` outside its home
    (a docstring that mentions it in backquotes is not a constant equal to it)."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and node.value in ONE_HOME_WORDS \
                        and ONE_HOME_WORDS[node.value] != name:
                    found.append((node.value, name, node.lineno))
    return found


def test_a_status_word_is_written_once() -> None:
    assert not words_elsewhere(PROJECT_ROOT), words_elsewhere(PROJECT_ROOT)
    homes = [(word, home) for word, home in ONE_HOME_WORDS.items()
             if f'"{word}"' not in (PROJECT_ROOT / home).read_text(encoding="utf-8")]
    assert not homes, f"the home no longer defines: {homes}"
