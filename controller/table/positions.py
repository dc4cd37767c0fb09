"""Every position a command names checked against the table's layout before anything acts on it.

A position is text the operator types (``--position 42``); unchecked, a box that is not on the
cloth reached rulings, holds and the journal as if it were a hand (issue 24, finding 7). The
check is one pure function of the layout and the command, run before the command's handler, so
each refusal names the table's boxes the same way whichever command carried the bad position.
"""

from __future__ import annotations

from collections.abc import Iterable

from controller.table import commands as cmd
from controller.table.layout import TableLayout
from controller.table.states import Refused


def named_positions(command: cmd.Command) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(what the position is, the positions) a command names; empty for one that names none.
    ``PlaceWager`` is left to betting, which names the bet's own positions."""
    if isinstance(command, (cmd.PlayerDecision, cmd.PlayerOption)):
        return (("box", (command.position,)),)
    if isinstance(command, cmd.ReportIrregularity) and command.position is not None:
        return (("position", (command.position,)),)
    if isinstance(command, cmd.SupervisorDecision):
        moved = tuple(p for move in command.moves for p in move)
        return (("move", moved), ("hand", tuple(p for p, _ in command.hands)))
    return ()


def check_positions(layout: TableLayout, command: cmd.Command) -> None:
    """Refuse ``command`` if it names a position this table does not have: a player's decision
    or option needs one of the table's boxes; an irregularity, a move or a reconstructed hand
    may also name the dealer's (banker's) hand."""
    boxes = tuple(layout.boxes)
    hands = (*boxes, layout.rules.dealer)
    for what, positions in named_positions(command):
        allowed = boxes if what == "box" else hands
        unknown = list(dict.fromkeys(p for p in positions if p not in allowed))
        if unknown:
            raise Refused(f"{what} {_listed(unknown)} is not on this table: its "
                          f"{'boxes' if what == 'box' else 'hands'} are {_listed(allowed)}")


def _listed(positions: Iterable[str]) -> str:
    """Plain names as they are; anything else quoted and escaped (a control or bidi character
    typed as a position must not reach a terminal raw)."""
    return ", ".join(repr(p) if not p.isalnum() else p for p in positions)
