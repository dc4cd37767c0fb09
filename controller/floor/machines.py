"""One machine across tables: each shuffler's evidence pooled by its serial number.

A shuffler is moved between tables, and its slow evidence (the position and category batches,
a bias worth a fraction of a nat a deck) outlasts any one table's stay. The floor receives
every table's cards, so it runs the same monitors (:mod:`controller.protection`) once per
machine: a table's ``device_identified`` record (written by the service whenever its shuffler
answers IDENTIFY with a new identity, ahead of that machine's cards; an older journal's
``DeviceOnline`` input carrying the identity counts too) names the serial of the shuffler now at
it, and every deck that table deals afterwards goes into that serial's guard, whichever table,
whichever day. The floor view lists each machine with the tables it served, its decks and its alerts
(``tablectl floor status``).

What a machine's decks are judged against is the feed ``[protection] feed`` of the tables
(default: the table default, collected cards reversed); the first deck after a move is judged
against the cards collected at the table before, which costs that deck's power, not the null
(a fair machine's output is independent of any reference). The guards live in the floor
process: after a floor restart the pooled evidence starts again (the tables' own monitors keep
theirs, docs/game-protection.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.journal.codec import decode_input
from controller.journal.errors import JournalFormatError
from controller.protection.feed import Feed
from controller.protection.guard import Guard, TableGuard
from drivers import events as dev

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS machines (
        serial TEXT PRIMARY KEY, tables TEXT NOT NULL, decks BIGINT NOT NULL,
        alerts BIGINT NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS machine_alerts (
        serial TEXT NOT NULL, table_id TEXT NOT NULL, seq BIGINT NOT NULL,
        monitor TEXT NOT NULL, detail TEXT NOT NULL, PRIMARY KEY (serial, table_id, seq,
        monitor))""",
)
_CARD_INPUTS = frozenset({"ShuffleDone", "CardSetDispensed", "CardRead", "ConfirmShuffle"})


@dataclass(slots=True)
class Machine:
    serial: str
    guard: TableGuard
    tables: list[str] = field(default_factory=list)
    table: str | None = None
    """The table whose deck is open in the guard."""


@dataclass(frozen=True, slots=True)
class MachineAlert:
    serial: str
    table: str
    seq: int
    report: dev.ProtectionReport


class Machines:
    """The per-serial guards; :meth:`see` each applied record, in each table's chain order."""

    def __init__(self, feed: Feed = Feed.COLLECTED_REVERSED) -> None:
        self.feed = feed
        self.machines: dict[str, Machine] = {}
        self.serial_at: dict[tuple[str, str], str] = {}
        """(table, device name) -> the serial of the machine now there."""

    def see(self, table: str, seq: int, event: str,
            payload: Mapping[str, Any]) -> list[MachineAlert]:
        if event == "device_identified":  # the journal's record of a device's identify() answer
            identity = payload.get("identity")
            serial = identity.get("serial") if isinstance(identity, Mapping) else None
            if isinstance(serial, str) and serial and isinstance(payload.get("device"), str):
                self.serial_at[(table, payload["device"])] = serial
            return []
        if event not in ("input_device", "input_command"):
            return []
        if payload.get("type") not in _CARD_INPUTS | {"DeviceOnline"}:
            return []
        try:
            item = decode_input(event, payload)
        except JournalFormatError:
            return []  # the floor's chain check reports what it must; the pool goes on
        if isinstance(item, dev.DeviceOnline):
            if item.identity is not None and item.identity.serial:
                self.serial_at[(table, item.device)] = item.identity.serial
            return []
        device = getattr(item, "device", None)
        serial = (self.serial_at.get((table, device)) if device is not None
                  else self._only_serial(table))
        if serial is None:
            return []
        machine = self.machines.get(serial)
        if machine is None:
            machine = self.machines[serial] = Machine(
                serial, TableGuard(Guard(feed=self.feed)))
        if table not in machine.tables:
            machine.tables.append(table)
        if machine.table != table and not isinstance(item, (dev.ShuffleDone,)):
            machine.guard.guard.finish()  # another table's deck left open: closed unscored
        machine.table = table
        reports = machine.guard.before(item) + machine.guard.after(item)
        return [MachineAlert(serial, table, seq, report) for report in reports]

    def record(self, store: Any, record: Any) -> list[MachineAlert]:
        """The floor's hook: one applied journal record; the machine it touched and its alerts
        saved in the floor database (in the transaction applying the record)."""
        before = {serial: m.guard.guard.decks for serial, m in self.machines.items()}
        alerts = self.see(record.table_id, record.seq, record.event_type, record.payload)
        touched = {serial for serial, m in self.machines.items()
                   if before.get(serial) != m.guard.guard.decks} | {a.serial for a in alerts}
        if touched:
            with store.transaction() as cursor:
                self.save(cursor, alerts, touched)
        return alerts

    def _only_serial(self, table: str) -> str | None:
        """A dealer's command (``ConfirmShuffle``) names no device: the table's one machine."""
        serials = {s for (t, _), s in self.serial_at.items() if t == table}
        return serials.pop() if len(serials) == 1 else None

    def save(self, cursor: Any, alerts: list[MachineAlert], serials: set[str]) -> None:
        """Write the machines touched and their alerts (inside the floor's transaction)."""
        for serial in sorted(serials):
            machine = self.machines[serial]
            cursor.execute(
                "INSERT INTO machines (serial, tables, decks) VALUES (?, ?, ?) "
                "ON CONFLICT (serial) DO UPDATE SET tables = excluded.tables, "
                "decks = excluded.decks",
                (serial, ",".join(machine.tables), machine.guard.guard.decks))
        for alert in alerts:
            cursor.execute(
                "INSERT INTO machine_alerts (serial, table_id, seq, monitor, detail) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (alert.serial, alert.table, alert.seq, alert.report.monitor,
                 alert.report.detail))
            cursor.execute("UPDATE machines SET alerts = alerts + 1 WHERE serial = ?",
                           (alert.serial,))


def create_schema(store: Any) -> None:
    store.create_tables(SCHEMA)


def machine_view(store: Any) -> dict[str, Any]:
    """Per serial: the tables it served (in order), decks, and its alerts."""
    create_schema(store)
    machines: dict[str, Any] = {}
    for serial, tables, decks, alerts in store.query(
            "SELECT serial, tables, decks, alerts FROM machines ORDER BY serial"):
        machines[serial] = {"tables": tables.split(",") if tables else [], "decks": decks,
                            "alerts": []}
    for serial, table, seq, monitor, detail in store.query(
            "SELECT serial, table_id, seq, monitor, detail FROM machine_alerts "
            "ORDER BY serial, table_id, seq"):
        if serial in machines:
            machines[serial]["alerts"].append({"table": table, "seq": seq,
                                               "monitor": monitor, "detail": detail})
    return machines


def machine_lines(machines: Mapping[str, Any]) -> list[str]:
    lines = []
    for serial, row in machines.items():
        lines.append(f"shuffler {serial}: {row['decks']} decks at {', '.join(row['tables'])}; "
                     f"{len(row['alerts'])} alert(s)")
        lines += [f"    {a['table']} seq {a['seq']} {a['monitor']}: {a['detail']}"
                  for a in row["alerts"]]
    return lines
