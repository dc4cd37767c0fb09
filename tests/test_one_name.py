"""One name, one class (issue 35, "one rule, one place"; STYLE.md "Avoid").

Two classes of one name in the project are a trap for a reader and for an ``except`` clause:
``CommandRefused`` was both the table's round event and the control client's exception, two
``CheckResult`` classes met in one module and the second import silently replaced the first
(``ruff`` F811), and the service's config kept its own copy of the drivers' ``ShoeDialect``.
The class definitions of ``controller``, ``drivers`` and ``firmware_sim`` are read with
:mod:`ast` (nothing is imported), and a name defined in two modules fails unless
:data:`KNOWN_DUPLICATES` lists it with the exact modules and the reason it stays for now. The
list only shrinks: an entry whose duplicate is gone, or whose modules changed, fails too.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("controller", "drivers", "firmware_sim")

KNOWN_DUPLICATES: Mapping[str, tuple[frozenset[str], str]] = {
    name: (frozenset(modules), reason) for name, modules, reason in (
        ("Action", ("controller.table.irregularities", "drivers.conformance.session"),
         "a ruling's action on the round and a conformance scenario's step (the device "
         "operator's is DeviceAction)"),
        ("Bench", ("controller.bench.runner", "drivers.conformance.session"),
         "the bench's runner and the conformance kit's bench of one device; the kit is being "
         "moved (issue 35)"),
        ("Button", ("controller.web.dealer_actions", "drivers.framed.messages"),
         "a button on the dealer's screen and the framed protocol's device button message"),
        ("Command", ("controller.cli", "controller.table.commands"),
         "a ``tablectl`` subcommand and the table's command base class"),
        ("Connection", ("controller.service.control.connections", "controller.studio.client"),
         "a control-socket peer's connection and the studio client's HTTPS connection"),
        ("DealingDevice", ("controller.service.wiring.devices", "controller.table.layout"),
         "the wired device and the table's kind of dealing device; the device wiring is "
         "being reworked (simulators chosen by URL, issue 35)"),
        ("Deck", ("controller.protection.monitors", "controller.table.deck"),
         "a monitor's view of a deck and the table's deck ledger (the device operator's is "
         "DeckUse)"),
        ("Delivery", ("controller.journal.delivery", "controller.table.dealing"),
         "the journal's delivery to its readers and a card set's delivery to a box"),
        ("EncodedEvent", ("controller.service.control.server", "controller.studio.book"),
         "a watch line encoded once for every watcher, and the studio's copy of one"),
        ("Entry", ("controller.journal.reader", "controller.studio.ledger"),
         "a journal record and a studio ledger line"),
        ("Fault", ("controller.protection.monitors", "drivers.events"),
         "a protection monitor's finding and a device's fault event"),
        ("Feed", ("controller.feed.run", "controller.protection.feed"),
         "the MQTT feed process and how the table feeds its shuffler ([protection] feed)"),
        ("Head", ("controller.floor.chain", "controller.journal.head"),
         "the floor's view of a table's chain head and the journal's own head"),
        ("Layout", ("controller.protection.risk", "drivers.conformance.fields"),
         "a shuffle model's deck layout and a conformance field layout"),
        ("Ledger", ("controller.protection.monitors", "controller.studio.ledger"),
         "a monitor's card ledger and the studio's idempotency ledger"),
        ("Link", ("controller.feed.run", "firmware_sim.shoe_deck"),
         "the feed's broker link and the simulated shoe's deck link"),
        ("Machine", ("controller.floor.machines", "controller.protection.risk"),
         "a floor machine record and a modelled shuffling machine"),
        ("Message", ("controller.floor.consumer", "drivers.framed.messages"),
         "a floor MQTT message and the framed protocol's message base"),
        ("OpenRound", ("controller.studio.wire", "controller.table.commands"),
         "the studio's wire request and the table command it becomes"),
        ("Phase", ("controller.journal.recorder", "controller.table.irregularities"),
         "the recorder's phase and the round phase an irregularity is ruled in"),
        ("Refused", ("controller.table.states", "controller.web.commander"),
         "a machine transition refused and a web request the web refuses itself"),
        ("Result", ("controller.settlement.model", "drivers.conformance.runner"),
         "a wager's settlement result and a conformance scenario's result"),
        ("RoundView", ("controller.bench.round", "controller.studio.book"),
         "the bench's and the studio's views of a round (the device operator's is "
         "OperatorView)"),
        ("Session", ("controller.journal.recorder", "controller.web.auth",
                     "drivers.conformance.session"),
         "a journal session, a web login session and a conformance session"),
        ("Shuffler", ("drivers.shuffler", "firmware_sim.shuffle_models"),
         "the shuffler driver and a modelled shuffling machine"),
        ("Verdict", ("controller.floor.chain", "controller.selfcheck.manifest",
                     "drivers.conformance.runner"),
         "a chain check's, the software check's and a conformance run's verdict"),
        ("WagerBook", ("controller.journal.wagerbook", "controller.table.betting"),
         "the journal's wager book for replay and the round's wager book part (issue 35, "
         "in progress)"),
        ("_Pending", ("controller.studio.admission", "drivers.framed.link"),
         "module-private: a pending TLS handshake and a pending framed request"),
        ("_Round", ("controller.protection.risk", "controller.web.index"),
         "module-private: a risk model's round and an index row"),
    )
}
"""Names defined in more than one module today: name -> (the modules, why it stays for now)."""


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def class_definitions(root: Path, packages: Iterable[str] = PACKAGES
                      ) -> dict[str, frozenset[str]]:
    """Class name -> the modules that define a class of that name (at any depth)."""
    found: dict[str, set[str]] = defaultdict(set)
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            module = _module_name(root, path)
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    found[node.name].add(module)
    return {name: frozenset(modules) for name, modules in found.items()}


def duplicates(definitions: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    return {name: modules for name, modules in definitions.items() if len(modules) > 1}


def test_no_two_classes_share_a_name() -> None:
    """A class name is defined in one module, or is listed with its modules and reason."""
    found = duplicates(class_definitions(PROJECT_ROOT))
    new = {name: sorted(modules) for name, modules in found.items()
           if KNOWN_DUPLICATES.get(name, (frozenset(),))[0] != modules}
    assert not new, f"one name, one class: rename one of each (or list it, with why): {new}"


def test_the_known_duplicates_are_still_real() -> None:
    """A listed name that is no longer defined twice is taken off the list."""
    found = duplicates(class_definitions(PROJECT_ROOT))
    gone = sorted(name for name in KNOWN_DUPLICATES if name not in found)
    assert not gone, f"no longer duplicated, remove from KNOWN_DUPLICATES: {gone}"
    assert all(reason for _, reason in KNOWN_DUPLICATES.values())


def test_the_error_classes_and_codes_have_one_name_each() -> None:
    """The ones issue 35 named: one ``ErrorCode``, one ``ConfigError``, one ``CommandRefused``
    (the table's round event; the control client raises ``RequestRefused``), one
    ``CheckResult``, one ``ShoeDialect``, one ``Role``."""
    found = class_definitions(PROJECT_ROOT)
    assert found["CommandRefused"] == {"controller.table.events"}
    assert found["RequestRefused"] == {"controller.service.control.client"}
    for name in ("ErrorCode", "ConfigError", "CheckResult", "ShoeDialect", "Role"):
        assert len(found.get(name, ())) == 1, (name, found.get(name))


def test_the_check_catches_a_planted_duplicate(tmp_path: Path) -> None:
    """Two modules of a planted package defining one name are found; one module is not."""
    package = tmp_path / "controller"
    (package / "room").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "room" / "__init__.py").write_text("class Thing:\n    pass\n")
    (package / "other.py").write_text("def f():\n    class Thing:\n        pass\n")
    (package / "alone.py").write_text("class Alone:\n    pass\n")
    found = duplicates(class_definitions(tmp_path, ("controller",)))
    assert found == {"Thing": frozenset({"controller.room", "controller.other"})}
