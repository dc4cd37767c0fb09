"""A floor database of simulated tables, made the way the floor makes it.

Each table's records are a bench journal rehomed as that table's own chain
(:func:`testbed.journalgen.rehome`, the generator of the feed tests and benchmarks), applied
through the floor's own apply path (:meth:`Store.apply` and :meth:`Machines.record`, as the
consumer does for a record it judged ``APPLY``), with the retained status the table's feed
publishes (:class:`controller.feed.status.TableStatus`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from controller.feed.status import TableStatus
from controller.floor.machines import Machines, create_schema
from controller.floor.store import Store
from controller.journal.record import Record
from testbed.journalgen import rehome

SITE = "site1"


def table_records(journal: Path, table: str) -> list[Record]:
    return [Record.from_dict(json.loads(line)) for line in rehome(journal, table)]


def apply_records(store: Store, machines: Machines, records: list[Record], *,
                  online: bool = True, site: str = SITE) -> None:
    """Apply ``records`` (one table's, in chain order) and publish its status after them."""
    if not records:
        return
    status = TableStatus(site, records[0].table_id)
    with store.transaction():
        for record in records:
            if store.apply(site, record):
                machines.record(store, record)
            status.note(record)
    store.set_status(status.table, online, status.payload(online=online).decode())


Applier = Callable[[Store, Machines, str, list[Record]], list[Record]]
"""How :func:`fill_floor` applies one table's records (store, machines, table, its records):
what it applied, so that a test can stop a table at a hold, leave it behind or offline."""


def apply_all(store: Store, machines: Machines, table: str, records: list[Record]
              ) -> list[Record]:
    """The plain :data:`Applier`: every record, the table online."""
    del table
    apply_records(store, machines, records)
    return records


def fill_floor(database: Path | str, journals: list[Path], tables: int, *,
               apply: Applier = apply_all) -> dict[str, list[Record]]:
    """``tables`` tables ``T001``... over ``journals`` in turn (into a SQLite file or a
    ``postgresql://`` URL), each applied by ``apply``; what was applied, by table."""
    store = Store(str(database))
    create_schema(store)
    machines = Machines()
    made: dict[str, list[Record]] = {}
    try:
        for number in range(1, tables + 1):
            table = f"T{number:03d}"
            records = table_records(journals[(number - 1) % len(journals)], table)
            made[table] = apply(store, machines, table, records)
    finally:
        store.close()
    return made
