"""A fault storm: what a shuffler that refuses every command costs the table service.

The service's own wiring (as ``tablectl run`` builds it) opens a firmware_sim shuffler served
on a real pty as a device path; the simulator NAKs every SHUFFLE, DISPENSE_HAND, END_ROUND and
CLEAR_FAULT with BAD_STATE. One round is opened and closed; the device operator backs off and
holds for a supervisor. Measured (issue 10.5: before, ~2,000 journal records a second and a
core at 100 %):

* ``seconds_to_hold``: from "No more bets" to the operator's hold;
* ``commands``: commands the device executed by then; ``records``: journal records added;
* ``cpu_seconds``: this process's CPU (every thread: table, driver, operator, simulator) by
  then, and ``held_cpu_seconds`` / ``held_records`` / ``held_commands`` over ``--held`` more
  seconds of the hold (nothing should happen).

Run alone: ``python benchmarks/fault_storm.py [--held S]``.
"""

from __future__ import annotations

import argparse
import json
import queue
import tempfile
import time
from pathlib import Path
from typing import Any

from controller.service.config import parse_config
from controller.service.wiring.pipeline import Wiring
from controller.table import commands as cmd
from drivers.framed.messages import (
    ClearFault, DispenseHand, EndRound, Message, Nak, NakReason, Shuffle,
)
from firmware_sim.framed import bind_server
from firmware_sim.serve import PtyServer
from firmware_sim.shuffler import ShufflerSim

DEALER = {"actor": "dealer:bench", "role": cmd.Role.DEALER}


class RefusingShuffler(ShufflerSim):
    def execute(self, message: Message) -> Message:
        if isinstance(message, (Shuffle, DispenseHand, EndRound, ClearFault)):
            return Nak(NakReason.BAD_STATE)
        return super().execute(message)


def measure_fault_storm(held: float = 10.0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="storm-") as scratch:
        tmp = Path(scratch)
        sim = RefusingShuffler(seed=1, shuffle_seconds=0.0, dispense_seconds=0.0,
                               take_seconds=None)
        server = PtyServer(sim, name="shuffler", link=tmp / "shuffler")
        bind_server(sim, server)
        server.start()
        events: queue.Queue[Any] = queue.Queue()
        config = parse_config(
            f'[table]\nid = "STORM"\ngame = "rws-nc-three-pictures"\n\n[device]\n'
            f'kind = "shuffler"\nurl = "{tmp / "shuffler"}"\n\n[journal]\n'
            f'directory = "{tmp / "journal"}"\n\n[control]\nsocket = "{tmp / "c.sock"}"\n'
            f'socket_group = ""\n', source=str(tmp / "tablectl.toml"))
        wiring = Wiring(config, events.put)
        wiring.start()
        try:
            assert wiring.table is not None and wiring.writer is not None
            assert wiring.operator is not None
            _wait(lambda: wiring.device_status()["online"], 10.0)
            table, writer, operator = wiring.table, wiring.writer, wiring.operator
            for command in (cmd.OpenRound(**DEALER),
                            cmd.PlaceWager(**DEALER, wager_id="w", position="1", bet="main",
                                           amount=500),
                            cmd.CloseBets(**DEALER)):
                table.command(command, 5.0)
            records, commands = writer.seq, sim.commands_executed
            cpu, start = time.process_time(), time.monotonic()
            _wait(lambda: operator.status()["state"] == "held", 30.0)
            out = {"seconds_to_hold": round(time.monotonic() - start, 2),
                   "commands": sim.commands_executed - commands,
                   "records": writer.seq - records,
                   "cpu_seconds": round(time.process_time() - cpu, 3)}
            records, commands, cpu = writer.seq, sim.commands_executed, time.process_time()
            time.sleep(held)  # a measurement window, not a synchronisation
            out.update(held_seconds=held, held_records=writer.seq - records,
                       held_commands=sim.commands_executed - commands,
                       held_cpu_seconds=round(time.process_time() - cpu, 3))
            return out
        finally:
            wiring.close()
            server.close()


def _wait(condition: Any, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError("condition not reached")
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--held", type=float, default=10.0)
    print(json.dumps(measure_fault_storm(parser.parse_args().held)))


if __name__ == "__main__":
    main()
