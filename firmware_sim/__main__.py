"""Run a simulated device standalone: ``python -m firmware_sim shuffler|shoe [options]``.

The first line on stdout says where to connect (``PTY /dev/pts/N`` or ``TCP host:port``) and is
flushed at once, so a test or an integrator's script can read it and open the device. The
simulator then serves until SIGTERM or SIGINT, and exits 0. Lines on stdin drive it, optionally:
``draw`` (a shoe deals a card; ``draw burn`` deals it as a burn card, ``draw game`` as a game
card, whatever the shoe's burn mode: the Bee-Tek's ``[Manual Burn Cards]`` section, the framed
shoe's CARD burn flag; a scanner marks no burns; each card out is said on stderr, ``dealt
QH``, read or not), ``take`` (the dealer lifts the shuffler's hand), ``fault SPEC``.
End of stdin only ends the commands, not the device: a script's background job or a service
manager starts it with stdin on /dev/null, and a device does not vanish because nobody types.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys
import time
from collections.abc import Sequence
from typing import Any

from firmware_sim.faults import FaultSpec, FaultSpecError, parse_fault
from controller.logsetup import configure_logging
from firmware_sim.serve import PtyServer, TcpServer

EXIT_USAGE = 2


class _Stop(Exception):
    """Raised from a signal handler to leave the serve loop."""


def _fault(text: str) -> FaultSpec:
    try:
        return parse_fault(text)
    except FaultSpecError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m firmware_sim", description=__doc__.split("\n")[0])
    parser.add_argument("device", choices=("shuffler", "shoe"))
    parser.add_argument("--dialect", choices=("framed", "scanner", "beetek"), default="framed",
                        help="shoe output format (default framed)")
    parser.add_argument("--log-level", default="WARNING", help="operational log level (stderr)")
    parser.add_argument("--listen", default="pty", help="pty or tcp:HOST:PORT (port 0 picks one)")
    parser.add_argument("--seed", type=int, default=None, help="reproducible shuffles")
    parser.add_argument("--fault", type=_fault, action="append", default=[], metavar="SPEC",
                        help="inject a fault (repeatable), e.g. jam, count:51, stall:0.5")
    parser.add_argument("--autodraw", type=float, default=None, metavar="SECONDS",
                        help="shoe: draw a card every SECONDS")
    parser.add_argument("--link", default=None, help="pty: keep a symlink to the pty here")
    return parser


def make_device(kind: str, dialect: str, seed: int | None, faults: Sequence[FaultSpec]) -> Any:
    if kind == "shuffler":
        from firmware_sim.shuffler import ShufflerSim

        return ShufflerSim(seed, faults)
    if dialect == "framed":
        from firmware_sim.shoe_framed import FramedShoeSim

        return FramedShoeSim(seed, faults)
    if dialect == "scanner":
        from firmware_sim.scanner import ScannerShoeSim

        return ScannerShoeSim(seed, faults)
    from firmware_sim.beetek import BeeTekShoeSim

    return BeeTekShoeSim(seed, faults)


def make_server(listen: str, device: Any, link: str | None) -> PtyServer | TcpServer:
    if listen == "pty":
        return PtyServer(device, link=link)
    scheme, _, rest = listen.partition(":")
    host, _, port = rest.rpartition(":")
    if scheme != "tcp" or not host or not port.isdigit():
        raise ValueError(f"--listen must be 'pty' or 'tcp:HOST:PORT', got {listen!r}")
    return TcpServer(device, host, int(port))


DRAW_AS = {"": None, "burn": True, "game": False}
"""``draw [burn|game]``: the card's section, or the shoe's own burn mode when not said."""


def _draw(device: Any, arg: str) -> None:
    """One card out of the shoe. What came out is said on stderr (``dealt QH``): the person at
    the bench has no card in the hand to look at, and a card the reader missed (a no-read) is
    the one the supervisor then enters by hand."""
    said = arg.strip().lower()
    if said not in DRAW_AS:
        print(f"firmware_sim: draw {arg.strip()!r}: say 'draw', 'draw burn' or 'draw game'",
              file=sys.stderr, flush=True)
        return
    if DRAW_AS[said] is None:
        card = device.draw()
    elif not hasattr(device, "burn"):  # a scanner sends the card only: no burn marker
        print(f"firmware_sim: this shoe marks no burn cards; 'draw {said}' refused",
              file=sys.stderr, flush=True)
        return
    else:
        card = device.draw(burn=DRAW_AS[said])
    print(f"firmware_sim: dealt {card if card is not None else 'a card not of the deck'}",
          file=sys.stderr, flush=True)


def _command(device: Any, line: str) -> None:
    word, _, arg = line.strip().partition(" ")
    if not word:
        return
    if word == "draw" and hasattr(device, "draw"):
        _draw(device, arg)
    elif word == "take" and hasattr(device, "take_hand"):
        device.take_hand()
    elif word == "fault":
        device.inject(parse_fault(arg))
    else:
        print(f"firmware_sim: unknown command {line.strip()!r} (draw [burn|game], take, fault SPEC)",
              file=sys.stderr, flush=True)


def _stdin_fd() -> int | None:
    """stdin's descriptor, or None when there is none to read commands from."""
    try:
        return sys.stdin.fileno() if sys.stdin is not None else None
    except (OSError, ValueError):  # closed, or replaced by an object without a descriptor
        return None


def serve(args: argparse.Namespace) -> int:
    device = make_device(args.device, args.dialect, args.seed, args.fault)
    server = make_server(args.listen, device, args.link)
    if hasattr(device, "unplug_hook"):
        from firmware_sim.framed import bind_server

        bind_server(device, server)

    def stop(signum: int, frame: object) -> None:
        raise _Stop

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with server:
        where = f"PTY {server.path}" if isinstance(server, PtyServer) else \
            f"TCP {server.host}:{server.port}"
        print(where, flush=True)
        next_draw = time.monotonic() + args.autodraw if args.autodraw else None
        # Read stdin's descriptor directly: select() on a buffered file misses lines that
        # Python already pulled into its buffer, so several "draw" lines arriving together
        # would be served late or lost.
        stdin_fd: int | None = _stdin_fd()
        pending = b""
        try:
            while True:
                wait = 0.5 if next_draw is None else max(0.0, next_draw - time.monotonic())
                watched = [] if stdin_fd is None else [stdin_fd]
                ready, _, _ = select.select(watched, [], [], wait)
                if ready and stdin_fd is not None:
                    chunk = os.read(stdin_fd, 4096)
                    if not chunk:  # end of the commands (a last one without a newline counts)
                        stdin_fd, chunk = None, b"\n"  # the device serves on
                        print("firmware_sim: stdin closed; serving until SIGINT or SIGTERM",
                              file=sys.stderr, flush=True)
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        try:
                            _command(device, line.decode("utf-8", "replace"))
                        except FaultSpecError as error:
                            print(f"firmware_sim: {error}", file=sys.stderr, flush=True)
                if next_draw is not None and time.monotonic() >= next_draw:
                    next_draw += args.autodraw
                    device.draw()
        except _Stop:
            pass
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Logs go to stderr: stdout carries the "PTY <path>" / "TCP <host:port>" line.
    configure_logging(args.log_level)
    if args.autodraw is not None and (args.device != "shoe" or args.autodraw <= 0):
        parser.error("--autodraw needs 'shoe' and a positive number of seconds")
    try:
        return serve(args)
    except (ValueError, FaultSpecError, OSError) as error:
        print(f"firmware_sim: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
