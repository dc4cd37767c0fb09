"""One owner for each piece of the round's state (issue 35): every attribute of the round, and of
each of its parts, is written in exactly one module, and a part's fields in its own methods
only (issue 45: a concern sharing the part's module could assign them unseen).

The round (:class:`~controller.table.machine.RoundMachine`, with the classes it is built from)
writes its own fields only in :mod:`controller.table.machine`; a part (the deck, the wager book,
the holds, ...) and every other class of the package writes its fields only in the module that
defines it, through its own methods. Any other module that wants a part changed asks it, by a
method. The rule is read from the source (the AST), so it holds for every path, not only the
paths the other tests happen to take.

What counts as a write of ``obj.field``: an assignment, an augmented assignment or a ``del`` of
it, an assignment or ``del`` of one of its items (``obj.field[key] = ...``), and a call of a
container's mutating method on it (``obj.field.append(...)``). ``obj`` is resolved when it is
``self``, ``self.part`` or a local name bound to either; any other base (a local ``deal``, an
``offer`` passed in) counts as a write of ``field`` of every class that has a field of that name,
so an unresolved write can be over-reported but never missed. A write through one of the round's
read-only views (a ``property``) is a violation wherever it is.
"""

from __future__ import annotations

import ast
import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import controller.table
from controller.table.layout import TableLayout
from controller.table.machine import RoundMachine

PACKAGE = Path(controller.table.__file__).parent
MODEL_HOME = "machine"
"""The module that alone writes the round's own fields (its number, its parts)."""

MUTATORS = frozenset({"append", "extend", "insert", "pop", "popitem", "remove", "clear", "add",
                      "discard", "update", "setdefault", "sort", "reverse"})

NOT_YET_CONVERTED: frozenset[tuple[str, str]] = frozenset()
"""(owner, field) pairs still written outside their owner's module while a part awaits its
extraction (issue 35): each is checked to still be a violation, so the list only shrinks. Empty:
every part of the round is an object of its own."""


@dataclasses.dataclass(frozen=True, slots=True)
class Write:
    owner: str
    field: str
    module: str
    line: int
    writer: str | None = None
    """The class whose method writes, when the written object is resolved through ``self``
    (``None``: resolved by name only, or written outside a class)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Model:
    """What the checker knows of the round: the classes it is built from, where it lives, and
    which of its attributes hold parts (attribute -> the part's class)."""

    classes: frozenset[str]
    name: str
    home: str
    parts: Mapping[str, str]


def _chain(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; ``None`` for anything else."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    names.append(node.id)
    return names[::-1]


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, model: Model) -> None:
        self.module = module
        self.model = model
        self.cls: str | None = None
        self.aliases: dict[str, list[str]] = {}
        self.raw: list[tuple[list[str], int, str | None]] = []
        """Writes as (owner-path, line, writing class): ``["<Class>", field]`` resolved (the
        class whose method writes it), or ``["?", field]`` (no class)."""
        self.fields: dict[str, set[str]] = defaultdict(set)
        self.properties: dict[str, set[str]] = defaultdict(set)
        self.homes: dict[str, str] = {}

    # -- classes and their declared fields ----------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        outer, self.cls = self.cls, node.name
        owner = self._owner_of_self()
        self.homes.setdefault(owner, self.model.home if owner == self.model.name
                              else self.module)
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                self.fields[owner].add(item.target.id)
            if isinstance(item, ast.FunctionDef) and any(
                    isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list):
                self.properties[owner].add(item.name)
        self.generic_visit(node)
        self.cls = outer

    def _owner_of_self(self) -> str:
        assert self.cls is not None
        return self.model.name if self.cls in self.model.classes else self.cls

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        outer, self.aliases = self.aliases, {}
        self.generic_visit(node)
        self.aliases = outer

    # -- writes -------------------------------------------------------------------------------
    def _resolve(self, chain: list[str]) -> list[str] | None:
        """The owner and field a written chain names, or ``["?", field]``."""
        head, rest = chain[0], chain[1:]
        if head in self.aliases:
            return self._resolve([*self.aliases[head], *rest])
        if not rest:
            return None  # a bare local name: not an attribute
        if head == "self" and self.cls is not None:
            owner = self._owner_of_self()
            if owner == self.model.name and len(rest) >= 2 and rest[0] in self.model.parts:
                return [self.model.parts[rest[0]], rest[1]]
            return [owner, rest[0]]
        return ["?", rest[-1]]  # e.g. ``deal.burns``: whoever has a field ``burns``

    def _target(self, target: ast.expr, line: int) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, line)
            return
        if isinstance(target, ast.Starred):
            self._target(target.value, line)
            return
        if isinstance(target, ast.Subscript):
            target = target.value  # obj.field[key] = ...: a write of obj.field
        chain = _chain(target)
        if chain is None or len(chain) < 2:
            return
        resolved = self._resolve(chain)
        if resolved is not None:
            self.raw.append((resolved, line, self._writer(resolved)))

    def _writer(self, resolved: list[str]) -> str | None:
        return self.cls if resolved[0] != "?" else None

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, node.lineno)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            chain = _chain(node.value)
            if chain is not None and chain[0] == "self":
                self.aliases[node.targets[0].id] = chain
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, node.lineno)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if not isinstance(node.target, ast.Name):  # a bare name in a class body declares a field
            self._target(node.target, node.lineno)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._target(target, node.lineno)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in MUTATORS:
            chain = _chain(func.value)
            if chain is not None and len(chain) >= 2:
                resolved = self._resolve(chain)
                is_part = resolved is not None and resolved[0] == self.model.name \
                    and resolved[1] in self.model.parts
                if resolved is not None and not is_part:
                    self.raw.append((resolved, node.lineno, self._writer(resolved)))
        self.generic_visit(node)


def check(sources: Mapping[str, str], model: Model) -> tuple[list[Write], list[Write]]:
    """The writes outside their owner's home module, and the writes through a read-only view
    of the round; both empty when the rule holds."""
    collectors = []
    for module, source in sources.items():
        collector = _Collector(module, model)
        collector.visit(ast.parse(source))
        collectors.append(collector)
    fields: dict[str, set[str]] = defaultdict(set)
    properties: dict[str, set[str]] = defaultdict(set)
    homes: dict[str, str] = {}
    for collector in collectors:
        for owner, names in collector.fields.items():
            fields[owner] |= names
        for owner, names in collector.properties.items():
            properties[owner] |= names
        homes.update(collector.homes)
        for (owner, field), _, _ in collector.raw:
            if owner != "?":
                fields[owner].add(field)
    writes: list[Write] = []
    for collector in collectors:
        for (owner, field), line, writer in collector.raw:
            owners: Iterable[str] = [owner] if owner != "?" else \
                [o for o, names in fields.items() if field in names]
            writes += [Write(o, field, collector.module, line, writer) for o in owners]
    outside = [w for w in writes if w.owner in homes and w.field not in properties[w.owner]
               and (w.module != homes[w.owner] or _by_a_neighbour(w, model))]
    through_views = [w for w in writes if w.field in properties[w.owner]]
    return outside, through_views


def _by_a_neighbour(write: Write, model: Model) -> bool:
    """A part's field written through ``self.<part>`` by another class of the part's own
    module (a concern of the round sharing the file): the module is right, the writer is not.
    A part changes its fields in its own methods; whoever else wants them changed asks it."""
    return write.writer is not None and write.owner != model.name \
        and write.writer != write.owner


def _round_model() -> Model:
    """The round as it is built: the parts read from a live round's attributes."""
    machine = RoundMachine(TableLayout.for_game("rws-nc-three-pictures", "shuffler"),
                           lambda event: None)
    parts = {name: type(value).__name__ for name, value in vars(machine).items()
             if type(value).__module__.startswith("controller.table.")
             and dataclasses.is_dataclass(value)
             and not type(value).__dataclass_params__.frozen}  # type: ignore[attr-defined]
    classes = frozenset(c.__name__ for c in RoundMachine.__mro__
                        if c.__module__.startswith("controller.table."))
    return Model(classes, RoundMachine.__name__, MODEL_HOME, parts)


def _package_sources() -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(PACKAGE.glob("*.py"))}


def test_every_attribute_of_the_round_is_written_in_one_module() -> None:
    """Each field of the round is written only in controller/table/machine.py, each field of
    a part (and of any other class of the package) only in the module defining it; nothing is
    written through the round's read-only views."""
    model = _round_model()
    outside, through_views = check(_package_sources(), model)
    assert not through_views, "\n".join(
        f"{w.module}.py:{w.line} writes {w.owner}.{w.field}, a read-only view"
        for w in through_views)
    unconverted = [w for w in outside if (w.owner, w.field) in NOT_YET_CONVERTED]
    wrong = [w for w in outside if (w.owner, w.field) not in NOT_YET_CONVERTED]
    assert not wrong, "\n".join(
        f"{w.module}.py:{w.line} writes {w.owner}.{w.field}, "
        + (f"in {w.writer}, not in {w.owner}'s own methods" if w.writer not in (None, w.owner)
           and w.owner != model.name else "owned by another module")
        for w in wrong)
    still = {(w.owner, w.field) for w in unconverted}
    assert still == NOT_YET_CONVERTED, (
        f"converted, drop from NOT_YET_CONVERTED: {sorted(NOT_YET_CONVERTED - still)}")


def test_the_round_is_composed_of_parts() -> None:
    """The round keeps its state in the parts the issue names, each an object of its own: the
    wager book (betting and the box maximum), the cards and their places, the deck, the holds,
    the options, the money and the table's memory, the devices, the clock gate. (Protection
    owns no state: it asks the deck to block.) Without them the rule above would hold only
    because the round wrote everything itself."""
    assert _round_model().parts == {
        "book": "WagerBook", "cards": "RoundCards", "deck": "Deck", "holds": "Holds",
        "options": "Options", "money": "Money", "devices": "Devices", "clock_gate": "ClockGate"}


ASKS: dict[str, frozenset[str]] = {
    "machine": frozenset({"deck", "devices", "money"}),  # a round opens
    "core": frozenset({"holds"}),  # the state a hold or the options resume to
    "betting": frozenset({"book", "cards", "deck"}),
    "intake": frozenset({"deck", "devices", "holds"}),
    "rulings": frozenset({"cards", "holds", "money", "options"}),
    "holds": frozenset({"book", "cards", "holds", "options"}),
    "settling": frozenset({"book", "cards", "holds", "money"}),
    "clockgate": frozenset({"clock_gate"}),
    "protection": frozenset({"deck"}),
}
"""Which parts each concern of the round asks (calls a method of), as docs/table.md's "asked
by" column says: a concern that starts asking another part is a change of design, made here
and in the docs, not by the way."""


def _asked(sources: Mapping[str, str], parts: Iterable[str]) -> dict[str, frozenset[str]]:
    """Per module, the round's parts it calls a method of (``self.<part>.<method>(...)``)."""
    names = set(parts)
    asked: dict[str, set[str]] = defaultdict(set)
    for module, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                chain = _chain(node.func.value)
                if chain is not None and len(chain) == 2 and chain[0] == "self" \
                        and chain[1] in names:
                    asked[module].add(chain[1])
    return {module: frozenset(found) for module, found in asked.items()}


def test_each_concern_asks_only_the_parts_it_says() -> None:
    """What each handler module may touch is stated (:data:`ASKS`) and is what it does."""
    model = _round_model()
    assert _asked(_package_sources(), model.parts) == ASKS


_PART = '''
from dataclasses import dataclass

@dataclass
class Book:
    wagers: dict
    def place(self, key, value):
        self.wagers[key] = value
'''

_ROUND = '''
class Round:
    def __init__(self):
        self.book = Book({})
        self.number = 0

    @property
    def wagers(self):
        return self.book.wagers
'''

_SECOND_WRITER = '''
class Rulings:
    def void(self):
        self.book.wagers = {}
'''

_ALIAS_WRITER = '''
class Rulings:
    def void(self):
        book = self.book
        book.wagers.clear()
'''

_UNRESOLVED_WRITER = '''
def void(book):
    book.wagers["w1"] = None
'''

_VIEW_WRITER = '''
class Rulings:
    def void(self):
        self.wagers["w1"] = None
'''

_ASKS = '''
class Rulings:
    def void(self):
        self.book.place("w1", None)
        self.number += 1
'''

_SELF_TEST_MODEL = Model(frozenset({"Round", "Rulings"}), "Round", "machine", {"book": "Book"})


def _violations(second: str) -> list[str]:
    outside, views = check({"book": _PART, "machine": _ROUND, "rulings": second},
                           _SELF_TEST_MODEL)
    return [f"{w.module}:{w.owner}.{w.field}" for w in (*outside, *views)]


@pytest.mark.parametrize("source", [_SECOND_WRITER, _ALIAS_WRITER, _UNRESOLVED_WRITER,
                                    _VIEW_WRITER],
                         ids=["assigned", "through-alias", "unresolved-base", "through-view"])
def test_the_checker_catches_a_second_writer(source: str) -> None:
    """A part's field written from a second module (directly, through a local alias, through
    a base the checker cannot resolve, or through the round's read-only view) is reported."""
    assert any(v.startswith("rulings:") and v.endswith(".wagers")
               for v in _violations(source)), _violations(source)


def test_the_checker_passes_a_module_that_asks() -> None:
    """A module that asks the part by a method (``place``) is not reported; the same module
    assigning one of the round's own fields (``number``) outside the round's home module is,
    once."""
    assert _violations(_ASKS) == ["rulings:Round.number"]


_NEIGHBOUR_WRITER = _PART + '''
class BettingMixin:
    def void(self):
        self.book.wagers = {}
'''


def test_the_checker_catches_a_writer_sharing_the_parts_module() -> None:
    """Issue 45: a concern of the round in the part's own module (a mixin beside the part,
    as ``HoldsMixin`` sits beside ``Holds``) assigning the part's field: the module is the
    part's, the writer is not, and it is reported; the part's own method is not."""
    model = Model(frozenset({"Round", "BettingMixin"}), "Round", "machine", {"book": "Book"})
    outside, views = check({"book": _NEIGHBOUR_WRITER, "machine": _ROUND}, model)
    assert [(w.module, w.owner, w.field, w.writer) for w in (*outside, *views)] == [
        ("book", "Book", "wagers", "BettingMixin")]
