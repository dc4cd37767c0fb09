"""The table: the ``transitions`` machine between the devices and settlement.

One thread owns a :class:`~controller.table.table.Table`; its one queue carries typed device events
(:mod:`drivers.events`) and operator commands (:mod:`controller.table.commands`). It emits round
events (:mod:`controller.table.events`) that settlement and the journal consume. The dealing
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
