"""The table: the ``transitions`` machine between the devices and settlement.

A :class:`~controller.table.table.Table` takes one input at a time (:meth:`~.table.Table.process`):
a typed device event (:mod:`drivers.events`) or an operator command
(:mod:`controller.table.commands`). It has no thread or queue of its own: the service's table
thread (:mod:`controller.service.wiring.tablethread`) is the one loop that feeds it, through the
journal; replay and recovery feed recorded inputs the same way. It emits round events
(:mod:`controller.table.events`) that settlement and the journal consume.

The round (:class:`~controller.table.machine.RoundMachine`) is one model driven by a declarative
transition list (:data:`~controller.table.machine.TRANSITIONS`); its state lives in parts, each
an object that alone writes its fields (the wager book, the cards and their places, the deck,
the holds, the options, the money and the table's memory, the devices, the clock gate), which
the rest of the round asks by method. The dealing
procedure (:mod:`~controller.table.procedure`), the irregularity rulings
(:mod:`~controller.table.irregularities`) and the "outcome established" test
(:mod:`~controller.table.established`) are pure functions of their inputs, so a replay of the same
inputs gives the same outputs.
"""

from __future__ import annotations

from controller.table.commands import Role
from controller.table.layout import DealingDevice, TableLayout
from controller.table.machine import RoundMachine, RoundState
from controller.table.table import Table

__all__ = ["DealingDevice", "Role", "RoundMachine", "RoundState", "Table", "TableLayout"]
