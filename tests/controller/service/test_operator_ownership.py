"""The device operator's house rules, read from its source (issue 35).

(a) One writer per field: every attribute of the operator and its parts (each class in
``controller/service/operator/``) is written in one module, its own; another part asks it
(``tests`` of the checker itself prove it catches a write from elsewhere, through ``=``, ``+=``,
``setattr`` and ``del``). The model's parts are built once and never replaced.

(b) The operator speaks device events: no module under ``controller/service/operator/`` imports a
wire protocol module (:data:`WIRE`), and from the drivers it imports only the device-level
modules (:data:`DEVICE_LEVEL`).

(c) The device-level words (:class:`drivers.events.DeviceMode`, :class:`RefusalCause`) cover
every word of the framed protocol, so the translation at the driver boundary loses nothing.
"""

from __future__ import annotations

import ast
import fnmatch
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from drivers.events import DeviceMode, DeviceReport, Fault, RefusalCause
from drivers.framed.device import DeviceStatus
from drivers.framed.messages import DeviceState, NakReason

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = "controller.service.operator"

MODEL = (f"{PACKAGE}.machine", "DeviceMachine")
"""The operator's model: it owns its state and why it holds; everything else is a part's."""
MODEL_OWN_FIELDS = frozenset({"hold_reason"})
"""The model's fields written after ``__init__`` (``state`` is written by its ``transitions``
machine); every other attribute holds a part, built once (the transitions' conditions are bound
to those very objects)."""

DEVICE_LEVEL = frozenset({"drivers", "drivers.events", "drivers.errors", "drivers.backoff"})
"""All the operator may import from the drivers: device events and device-level words, the
drivers' exception tree, the shared backoff helper."""

WIRE: Mapping[str, str] = {
    "drivers.framed": "the framed link's package",
    "drivers.framed.*": "the framed link: frames, CRC, messages and their byte codes "
                        "(DeviceState, NakReason), event ids, the link, the framed device",
    "drivers.*.framed": "a device on the framed link (the framed shoe)",
    "drivers.shuffler": "the framed shuffler's driver (its replies are the wire's DeviceStatus)",
    "drivers.*codec": "a dialect's byte decoder (Bee-Tek, HID, scanner)",
    "drivers.shoe.codes": "the shoe decoders' messages",
    "drivers.conformance": "the conformance kit, which sends raw frames",
    "drivers.conformance.*": "the conformance kit, which sends raw frames",
    "firmware_sim": "the simulators, the wire from the device's end",
    "firmware_sim.*": "the simulators, the wire from the device's end",
    "controller.service.protocol": "the control socket's wire language",
    "controller.studio.wire": "the studio's wire language",
}
"""Which modules count as wire protocol modules (``fnmatch`` patterns over dotted names), and
why. Each pattern matches a module that exists (``test_the_wire_list_names_real_modules``)."""


# -- reading the source ---------------------------------------------------------------------
def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for top in ("controller", "drivers", "firmware_sim")
            for p in sorted((ROOT / top).rglob("*.py"))}


def operator_sources() -> dict[str, str]:
    """The operator's modules, and every other project module that imports one of them (the
    wiring that holds the operator could write into it)."""
    sources: dict[str, str] = {}
    for name, path in project_modules().items():
        text = path.read_text(encoding="utf-8")
        if name == PACKAGE or name.startswith(PACKAGE + ".") or \
                any(i == PACKAGE or i.startswith(PACKAGE + ".")
                    for i, _ in imports(name, ast.parse(text), is_package=path.stem == "__init__")):
            sources[name] = text
    return sources


def in_package(module: str) -> bool:
    return module == PACKAGE or module.startswith(PACKAGE + ".")


@dataclass(frozen=True, slots=True)
class Write:
    """One write of an attribute: in ``module`` (line ``line``), inside ``function`` of class
    ``cls`` (``""`` outside a class); ``on_self`` when the receiver is the method's own
    instance, else ``receiver`` is its source text. ``attr`` is ``None`` when the code names
    the attribute by a computed string (``setattr(x, name, v)``): nobody can tell which."""

    module: str
    line: int
    cls: str
    function: str
    on_self: bool
    receiver: str
    attr: str | None

    def __str__(self) -> str:
        where = f"{self.module}:{self.line}"
        return f"{where} writes {self.receiver}.{self.attr or '<computed name>'}"


def _flat(target: ast.expr) -> Iterator[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for item in target.elts:
            yield from _flat(item)
    elif isinstance(target, ast.Starred):
        yield from _flat(target.value)
    else:
        yield target


def _targets(node: ast.AST) -> Iterator[ast.expr]:
    """The expressions a statement writes (or deletes)."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield from _flat(target)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor,
                           ast.comprehension)):
        yield from _flat(node.target)
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:
                yield from _flat(item.optional_vars)
    elif isinstance(node, ast.Delete):
        for target in node.targets:
            yield from _flat(target)


def _setattr_call(node: ast.AST) -> tuple[ast.expr, ast.expr] | None:
    """``setattr(obj, name, v)`` or ``X.__setattr__(obj, name, v)`` / ``delattr(obj, name)``:
    (obj, name)."""
    if not isinstance(node, ast.Call) or len(node.args) < 2:
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id in ("setattr", "delattr"):
        return node.args[0], node.args[1]
    if isinstance(func, ast.Attribute) and func.attr in ("__setattr__", "__delattr__"):
        return node.args[0], node.args[1]
    return None


class _Writes(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.cls = ""
        self.function = ""
        self.self_name = ""
        self.found: list[Write] = []
        self.fields: set[tuple[str, str]] = set()
        """(class, attribute) declared in a class body (dataclass fields, annotations)."""

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        outer = (self.cls, self.function, self.self_name)
        self.cls, self.function, self.self_name = node.name, "", ""
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                self.fields.add((node.name, item.target.id))
            elif isinstance(item, ast.Assign):
                for target in item.targets:
                    for one in _flat(target):
                        if isinstance(one, ast.Name):
                            self.fields.add((node.name, one.id))
        self.generic_visit(node)
        self.cls, self.function, self.self_name = outer

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = (self.function, self.self_name)
        in_class_body = self.cls and not self.function
        if in_class_body:
            self.function = node.name
            args = node.args.posonlyargs + node.args.args
            self.self_name = args[0].arg if args else ""
        self.generic_visit(node)
        self.function, self.self_name = outer

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def _write(self, receiver: ast.expr, attr: str | None, line: int) -> None:
        on_self = bool(self.self_name) and isinstance(receiver, ast.Name) \
            and receiver.id == self.self_name
        self.found.append(Write(self.module, line, self.cls, self.function, on_self,
                                ast.unparse(receiver), attr))

    def generic_visit(self, node: ast.AST) -> None:
        for target in _targets(node):
            if isinstance(target, ast.Attribute):
                self._write(target.value, target.attr, target.lineno)
        call = _setattr_call(node)
        if call is not None:
            receiver, name = call
            attr = name.value if isinstance(name, ast.Constant) and \
                isinstance(name.value, str) else None
            self._write(receiver, attr, getattr(node, "lineno", 0))
        super().generic_visit(node)


@dataclass(frozen=True, slots=True)
class Ownership:
    """Who writes what: each (module, class, attribute) of the operator's classes and the
    modules that write it."""

    written_in: Mapping[tuple[str, str, str], frozenset[str]]
    unknown: tuple[Write, ...]
    """Writes of a computed attribute name on something other than ``self``."""
    writes: tuple[Write, ...]

    def violations(self) -> list[str]:
        out = [f"{module}.{cls}.{attr} is written in {len(where)} modules: "
               f"{', '.join(sorted(where))}"
               for (module, cls, attr), where in sorted(self.written_in.items())
               if len(where) > 1]
        out += [f"{write}: which field, nobody can tell" for write in self.unknown]
        return out


def ownership(sources: Mapping[str, str]) -> Ownership:
    """Every field of every class in the operator's package, and every module writing it. A
    write through ``self`` in a method is the method's class's; any other write of an
    attribute of that name (``machine.view = ...``, ``self.costs.shuffles += 1``,
    ``setattr(m, "x", v)``, ``del m.x``) counts against every operator class with that field,
    which is what a reader can tell without running the code."""
    writes: list[Write] = []
    fields: set[tuple[str, str, str]] = set()
    for module, text in sources.items():
        visitor = _Writes(module)
        visitor.visit(ast.parse(text))
        writes += visitor.found
        if in_package(module):
            fields |= {(module, cls, attr) for cls, attr in visitor.fields}
            fields |= {(module, w.cls, w.attr) for w in visitor.found
                       if w.on_self and w.cls and w.attr}
    by_attr: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    for field in fields:
        by_attr[field[2]].add(field)
    written_in: dict[tuple[str, str, str], set[str]] = {f: {f[0]} for f in fields}
    unknown: list[Write] = []
    for write in writes:
        if write.on_self:
            continue  # a class's own field, counted above when the class is the operator's
        if write.attr is None:
            unknown.append(write)
            continue
        for field in by_attr.get(write.attr, ()):
            written_in[field].add(write.module)
    return Ownership({k: frozenset(v) for k, v in written_in.items() if k[2]},
                     tuple(unknown), tuple(writes))


def replaced_parts(sources: Mapping[str, str], module: str, cls: str,
                   own: frozenset[str]) -> list[str]:
    """Writes by ``cls`` of its own attributes outside ``__init__``, other than ``own``."""
    visitor = _Writes(module)
    visitor.visit(ast.parse(sources[module]))
    return [f"{w} in {w.cls}.{w.function}" for w in visitor.found
            if w.cls == cls and w.on_self and w.function != "__init__" and w.attr not in own]


# -- imports --------------------------------------------------------------------------------
def imports(module: str, tree: ast.Module, *,
            is_package: bool = False) -> Iterator[tuple[str, int]]:
    """Every module an import in ``tree`` names (``from a import b`` names ``a`` and ``a.b``,
    since ``b`` may be a module), relative imports resolved, ``importlib.import_module`` and
    ``__import__`` with a constant name included, ``TYPE_CHECKING`` imports included."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno
        elif isinstance(node, ast.Call) and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else \
                func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__"):
                yield node.args[0].value, node.lineno


def wire_pattern(name: str) -> str | None:
    return next((p for p in WIRE if fnmatch.fnmatchcase(name, p)), None)


def wire_imports(sources: Mapping[str, str]) -> list[str]:
    """Each import, by a module of the operator's package, of a wire module or of a drivers
    module beyond :data:`DEVICE_LEVEL`."""
    out = []
    for module, text in sorted(sources.items()):
        if not in_package(module):
            continue
        tree = ast.parse(text)
        for name, line in imports(module, tree, is_package=module == PACKAGE):
            pattern = wire_pattern(name)
            if pattern is not None:
                out.append(f"{module}:{line} imports {name}, a wire module ({WIRE[pattern]})")
            elif (name == "drivers" or name.startswith("drivers.")) and name not in DEVICE_LEVEL \
                    and name.rpartition(".")[0] not in DEVICE_LEVEL - {"drivers"}:
                out.append(f"{module}:{line} imports {name}: the operator may import from the "
                           f"drivers only {', '.join(sorted(DEVICE_LEVEL))}")
    return out


# -- (a) one writer per field ---------------------------------------------------------------
@pytest.fixture(name="sources", scope="module")
def fixture_sources() -> dict[str, str]:
    return operator_sources()


def test_every_field_of_the_operator_and_its_parts_is_written_in_one_module(
        sources: dict[str, str]) -> None:
    """Issue 35: each part owns its fields and is the only code that writes them; the model
    and the others ask it."""
    found = ownership(sources)
    assert found.violations() == []
    owned = {(m.rpartition(".")[2], c, a) for m, c, a in found.written_in}
    for field in [("machine", "DeviceMachine", "hold_reason"), ("machine", "DeviceMachine", "said"),
                  ("roundview", "OperatorView", "stage"), ("reported", "Reported", "cards_left"),
                  ("reported", "Reported", "faults"), ("effort", "Streak", "count"),
                  ("effort", "RoundCosts", "shuffles"), ("waits", "Waits", "deadline"),
                  ("orders", "Orders", "due"), ("runner", "DeviceOperator", "commands_sent"),
                  ("clearing", "ClearWatch", "_pending")]:
        assert field in owned, f"the checker did not see {field}: it checks nothing there"
    assert any(not in_package(m) for m in sources), "the wiring that holds the operator"


def test_the_model_builds_its_parts_once() -> None:
    """The model writes only its own hold reason after ``__init__``; a part is never swapped
    for another (the transitions' conditions ask the very part built in ``__init__``)."""
    sources = operator_sources()
    assert replaced_parts(sources, *MODEL, MODEL_OWN_FIELDS) == []


ROGUE = f"{PACKAGE}.rogue"


@pytest.mark.parametrize(("code", "field"), [
    ("def resume(machine):\n    machine.view = None\n", "machine.DeviceMachine.view"),
    ("def spend(machine):\n    machine.costs.shuffles += 1\n", "effort.RoundCosts.shuffles"),
    ("def forget(said):\n    setattr(said, 'cards_left', None)\n", "reported.Reported.cards_left"),
    ("def undue(orders):\n    del orders.due\n", "orders.Orders.due"),
    ("class Peer:\n    def poke(self, other):\n        other.waits.deadline, self.x = 1.0, 2\n",
     "waits.Waits.deadline"),
])
def test_the_checker_catches_a_write_from_another_module(sources: dict[str, str], code: str,
                                                          field: str) -> None:
    """Negative self-test: a field of a part written from a second module is reported, by
    name and with both modules."""
    violations = ownership({**sources, ROGUE: code}).violations()
    assert len(violations) == 1, violations
    assert violations[0].startswith(f"{PACKAGE}.{field} is written in 2 modules")
    assert ROGUE in violations[0]


def test_the_checker_catches_a_computed_attribute_name(sources: dict[str, str]) -> None:
    """Negative self-test: ``setattr(part, name, value)`` with a computed name is reported."""
    code = "def poke(part, name):\n    setattr(part, name, 1)\n"
    violations = ownership({**sources, ROGUE: code}).violations()
    assert violations == [f"{ROGUE}:2 writes part.<computed name>: which field, nobody can tell"]


def test_the_checker_catches_a_part_replaced_after_init() -> None:
    """Negative self-test: a model method that swaps a part is reported; its own hold reason
    is not."""
    code = ("class DeviceMachine:\n    def __init__(self):\n        self.said = 1\n"
            "    def reset(self):\n        self.said = 2\n        self.hold_reason = None\n")
    assert replaced_parts({ROGUE: code}, ROGUE, "DeviceMachine", MODEL_OWN_FIELDS) == \
        [f"{ROGUE}:5 writes self.said in DeviceMachine.reset"]


# -- (b) device events, not wire enums ------------------------------------------------------
def test_the_operator_imports_no_wire_module(sources: dict[str, str]) -> None:
    """Issue 35: the operator speaks device events and device-level words, not a protocol's
    wire enums (``drivers.framed.messages`` was imported for ``DeviceState``/``NakReason``)."""
    assert wire_imports(sources) == []


def test_the_wire_list_names_real_modules() -> None:
    """Each wire pattern matches a module that exists, so a rename cannot empty the list."""
    modules = set(project_modules())
    assert {p: [m for m in modules if fnmatch.fnmatchcase(m, p)] != [] for p in WIRE} == \
        {p: True for p in WIRE}
    assert wire_pattern("drivers.framed.messages") and wire_pattern("drivers.shoe.hid_codec")


@pytest.mark.parametrize("code", [
    "from drivers.framed.messages import DeviceState\n",
    "from drivers import framed\n",
    "import drivers.shoe.beetek_codec\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from drivers.framed import link\n",
    "import importlib\nlink = importlib.import_module('drivers.framed.link')\n",
    "from drivers.transport import Transport\n",
    "from ..protocol import Role\n",
])
def test_the_checker_catches_a_wire_import(code: str) -> None:
    """Negative self-test: a wire import (direct, from the package, under TYPE_CHECKING,
    through importlib, relative) or a drivers module beyond the device-level ones is
    reported."""
    assert len(wire_imports({ROGUE: code})) >= 1


def test_the_checker_lets_device_level_imports_pass() -> None:
    """The device-level modules are what the operator is meant to use."""
    code = ("from drivers import events as dev\nfrom drivers.errors import DriverError\n"
            "from drivers.events import DeviceMode\nfrom drivers.backoff import Jitter\n")
    assert wire_imports({ROGUE: code}) == []


# -- (c) the device-level words cover the wire's --------------------------------------------
def test_every_framed_state_and_refusal_has_a_device_level_word() -> None:
    """Docs/protocols.md 4 and 5.1: each state and NAK reason of the framed link translates to
    the device-level word of the same name (nothing falls through as "unknown")."""
    assert {s.name: DeviceMode.of(s) for s in DeviceState} == \
        {s.name: DeviceMode[s.name] for s in DeviceState}
    assert {r.name: RefusalCause.of(r) for r in NakReason} == \
        {r.name: RefusalCause[r.name] for r in NakReason}
    assert DeviceMode.of(None) is None and RefusalCause.of(3) is None


def test_a_status_reply_reads_as_a_device_report() -> None:
    """The framed STATUS reply in device-level words; a reply without the fields says
    nothing (the operator keeps what it knew)."""
    reply = DeviceStatus(DeviceState.HAND_WAITING, frozenset({Fault.JAM}), 7, 2, 41)
    assert DeviceReport.of(reply) == DeviceReport(DeviceMode.HAND_WAITING,
                                                  frozenset({Fault.JAM}), 41)
    assert DeviceReport.of(object()) == DeviceReport()
