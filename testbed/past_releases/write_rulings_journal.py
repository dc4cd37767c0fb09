"""Write an RWS-NC3P journal of placements that later releases rule differently, with the
release whose checkout runs it (``.venv/bin/python THIS OUT_DIR`` from that checkout).

In-process, through the release's own recovery and journaled table (the public names every
release since the journal's first has: ``JournalWriter``, ``recover``, ``TableLayout``, the
commands and device events), so the records are exactly what that release's service writes
for the same inputs. One round, main bet limits 500-5,000 a box:

* box 1: the Seated Player's 4,500, then a Standing Player's 1,000 (over what is left of the
  box maximum: RWS-NC3P 5.1);
* box 2: a Bet of 300, under the minimum (5.2);
* box 3: two players each marked seated (1.15: one Seated Player a box);
* box 4: a batch of two rows, the second naming a bet the game does not have;
then the deal, the reveal and the settlement.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from controller.games.cards import parse_cards
from controller.journal import JournalWriter
from controller.journal.recovery import recover
from controller.journal.startup import advance_mark, mark_new_journal
from controller.settlement.model import BetLimit
from controller.table import commands as cmd
from controller.table.layout import TableLayout
from drivers import events as dev

DEALER = {"actor": "dana", "role": cmd.Role.DEALER}
IDENTITY = dev.DeviceIdentity("Sim", "HF-3", "SIM-0001", "2.3.1", "abcd", 1)
HANDS = ("QD JD KD", "2C 3C 4C", "5H 6H 7H", "9S TS 8S", "AD 2D 3D")


def main(out: Path) -> None:
    layout = dataclasses.replace(TableLayout.for_game("rws-nc-three-pictures"),
                                 limits={"main": BetLimit(500, 5000)})
    writer = JournalWriter(out, table_id=layout.table_id)
    table, _report = recover(writer, layout)
    mark_new_journal(writer.directory, writer.path, None)  # as the service marks a new journal
    table.process(dev.DeviceOnline("shuffler", identity=IDENTITY))
    table.process(cmd.OpenRound(**DEALER))
    place = [("s1", "1", 4500, "p1", True), ("t1", "1", 1000, "p2", False),
             ("u2", "2", 300, "p3", None),
             ("s3", "3", 1000, "p4", True), ("t3", "3", 1000, "p5", True)]
    for wager_id, box, amount, player, seated in place:
        table.process(cmd.PlaceWager(**DEALER, wager_id=wager_id, position=box, bet="main",
                                     amount=amount, player=player, seated=seated))
    table.process(cmd.PlaceWagers(**DEALER, wagers=(
        cmd.WagerOrder(wager_id="b4", position="4", bet="main", amount=1000, player="p6"),
        cmd.WagerOrder(wager_id="x4", position="4", bet="no-such-bet", amount=100,
                       player="p6"))))
    table.process(cmd.CloseBets(**DEALER))
    table.process(dev.ShuffleDone("shuffler", counted=52))
    for number, cards in enumerate(HANDS, 1):
        table.process(dev.CardSetDispensed("shuffler", cards=parse_cards(cards.split()),
                                           hand_number=number))
    table.process(cmd.RevealDealer(**DEALER))
    table.process(cmd.SettleRound(**DEALER))
    writer.close()
    # as the service leaves its journal at a stop: the verified mark at the last record
    advance_mark(out, None, layout.table_id)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
