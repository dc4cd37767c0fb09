"""A slow disk: what others wait while one connection's wagers wait on the journal's fsync.

Issue 35 measured, with strace's syscall fault injection (not installed here), that on the
simulated table with journal durability ``always`` and every fsync delayed 500 ms, a second
connection's ``round.status`` took 985 ms (median) while a first connection placed 8 wagers:
the control socket answered commands inline on its selector thread. Goal: under 50 ms whatever
the fsync, since a reader is answered from the last published snapshot and never waits for the
writer's disk (STYLE.md, Threads).

For each fsync delay (0, 200 and 500 ms by default), in one run, this starts the service as
``tablectl run`` does (``controller.cli.main(["run", ...])`` in a child process; RWS-NC3P on the
simulated shuffler, durability ``always``), with every ``os.fsync`` and ``os.fdatasync`` of that
process preceded by the delay (a Python-level stand-in for strace's ``delay_enter``: the writer
calls them through the ``os`` module, and the sleep, like a blocked fsync, releases the GIL).
While connection A places 8 wagers (one per box, each answered only once its records are on
disk), it measures, each as median / p99 / max in milliseconds:

* ``status``: connection B's ``round.status``, asked back to back;
* ``watch_subscribe``: a new connection's ``watch`` request, until the subscription is answered;
* ``event_after_answer``: from A's answer to a wager to the watcher's copy of that wager's
  ``WagerAccepted`` (negative: the event came first);
* ``place`` (for scale): A's own ``wager.place``, which must wait for the disk;
* ``machine_sleep_over`` (the reference): how late a 1 ms sleep of this process wakes, the
  stall the machine itself adds; ``status_longest``: which wager A was waiting for when the
  longest ``round.status`` began, and how far into that wait.

Run: ``python benchmarks/slow_disk.py [--delays 0,200,500] [--wagers 8] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.service import notified_service, service_config  # noqa: E402
from controller.service.control.client import ControlClient  # noqa: E402

DELAYS_MS = (0, 200, 500)
WAGERS = 8
BOXES = tuple(str(box) for box in range(1, 9))
GOAL_MS = 50.0
READY_S = 60.0
CLIENT_TIMEOUT_S = 60.0
"""Bounds for things that are coming on a loaded machine, never a measure."""
PAUSE_S = 0.001
"""The reference sampler's sleep: how late this process wakes from it is what the machine
itself adds to every figure (a loaded, shared machine stalls a process now and then)."""
SERVICE = """\
import os, sys, time

delay = int(sys.argv[1]) / 1000


def slowed(real):
    def call(fd):
        time.sleep(delay)
        real(fd)
    return call


os.fsync, os.fdatasync = slowed(os.fsync), slowed(os.fdatasync)
from controller.cli import main

sys.exit(main(["run", "--config", sys.argv[2]]))
"""
"""The child: every fsync and fdatasync of the process waits the delay (``argv[1]``, ms)
first, then the service runs exactly as ``tablectl run --config CONFIG``."""


@contextmanager
def running_service(tmp: Path, delay_ms: int) -> Iterator[Path]:
    """The service in ``tmp`` with its fsyncs delayed ``delay_ms``, started and READY; its
    control socket. SIGTERM at the end, which must exit 0."""
    config = tmp / "tablectl.toml"
    config.write_text(service_config(tmp, durability="always").replace(
        'boxes = ["1", "2", "3"]', "boxes = [" + ", ".join(f'"{b}"' for b in BOXES) + "]"))
    with notified_service(tmp, ["-c", SERVICE, str(delay_ms), str(config)],
                          ready_s=READY_S):
        yield tmp / "control.sock"


def summary(samples_s: Sequence[float]) -> dict[str, float | int]:
    """Median, p99 and max in milliseconds, and the count."""
    if not samples_s:
        return {"count": 0}
    ordered = sorted(samples_s)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"count": len(ordered), "median_ms": round(statistics.median(ordered) * 1000, 1),
            "p99_ms": round(p99 * 1000, 1), "max_ms": round(ordered[-1] * 1000, 1)}


class Sampler(threading.Thread):
    """Times ``ask`` back to back until stopped; each sample is the wall time of one call, and
    :attr:`starts` when each began (to place the longest in A's timeline)."""

    def __init__(self, name: str, ask: Callable[[], object]) -> None:
        super().__init__(name=name, daemon=True)
        self.ask = ask
        self.samples: list[float] = []
        self.starts: list[float] = []
        self.done = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.done.is_set():
                started = time.monotonic()
                self.ask()
                self.starts.append(started)
                self.samples.append(time.monotonic() - started)
        except BaseException as error:  # reported with the figures, never lost
            self.error = error


def measure_delay(delay_ms: int, wagers: int = WAGERS) -> dict[str, Any]:
    """One service with fsyncs delayed ``delay_ms``: the figures of the module doc."""
    with tempfile.TemporaryDirectory(prefix="tablectl-slow-disk-") as name, \
            running_service(Path(name), delay_ms) as sock, \
            ControlClient(sock, timeout=CLIENT_TIMEOUT_S) as placer, \
            ControlClient(sock, timeout=CLIENT_TIMEOUT_S) as other, \
            ControlClient(sock, timeout=CLIENT_TIMEOUT_S) as watcher:
        events = watcher.watch()
        seen: dict[str, float] = {}

        def watch() -> None:
            for event in events:
                if event.get("type") == "WagerAccepted":
                    seen[str(event["wager"]["id"])] = time.monotonic()

        watching = threading.Thread(target=watch, name="watcher", daemon=True)
        watching.start()

        def subscribe() -> None:
            with ControlClient(sock, timeout=CLIENT_TIMEOUT_S) as fresh:
                fresh.watch()

        placer.request("round.open")
        status = Sampler("status", lambda: other.request("round.status"))
        subscribing = Sampler("watch-subscribe", subscribe)
        machine = Sampler("machine", lambda: time.sleep(PAUSE_S))
        status.start()
        subscribing.start()
        machine.start()
        answered: dict[str, float] = {}
        asked: dict[str, float] = {}
        place: list[float] = []
        for index in range(wagers):
            wager = f"w{index + 1}"
            started = asked[wager] = time.monotonic()
            reply = placer.request("wager.place", {
                "wager_id": wager, "position": BOXES[index % len(BOXES)], "bet": "main",
                "amount": 500})
            answered[wager] = time.monotonic()
            place.append(answered[wager] - started)
            if not reply.get("accepted"):
                raise RuntimeError(f"wager {wager} not accepted: {reply}")
        for sampler in (status, subscribing, machine):
            sampler.done.set()
            sampler.join(CLIENT_TIMEOUT_S)
        deadline = time.monotonic() + CLIENT_TIMEOUT_S
        while len(seen) < wagers and time.monotonic() < deadline:
            time.sleep(0.01)  # the last events on their way; bounded
        for sampler in (status, subscribing):
            if sampler.error is not None:
                raise RuntimeError(f"{sampler.name}: {sampler.error!r}") from sampler.error
    lag = [seen[wager] - answered[wager] for wager in answered if wager in seen]
    return {"fsync_delay_ms": delay_ms, "wagers": wagers,
            "status": summary(status.samples),
            "watch_subscribe": summary(subscribing.samples),
            "event_after_answer": summary(lag), "events_missing": wagers - len(lag),
            "place": summary(place), "status_longest": longest(status, asked, answered),
            "machine_sleep_over": summary([sample - PAUSE_S for sample in machine.samples])}


def longest(sampler: Sampler, asked: dict[str, float],
            answered: dict[str, float]) -> dict[str, Any]:
    """Where the longest sample began in A's timeline: which wager A was waiting for and how
    far into that wait (a stall that tracks the fsync, or one the machine made)."""
    if not sampler.samples:
        return {}
    index = max(range(len(sampler.samples)), key=sampler.samples.__getitem__)
    began = sampler.starts[index]
    during = next((wager for wager in asked
                   if asked[wager] <= began <= answered.get(wager, began)), None)
    return {"ms": round(sampler.samples[index] * 1000, 1), "during": during,
            "into_that_wager_ms": round((began - asked[during]) * 1000, 1) if during else None}


def measure(delays_ms: Sequence[int] = DELAYS_MS, wagers: int = WAGERS) -> dict[str, Any]:
    """Every delay in one run, and whether the others' waits met the goal at each."""
    result: dict[str, Any] = {
        "game": "rws-nc-three-pictures", "device": "sim shuffler (pty)",
        "journal_durability": "always", "goal_ms": GOAL_MS,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average": os.getloadavg()[0], "runs": []}
    for delay in delays_ms:
        run = measure_delay(delay, wagers)
        run["goal_met"] = all(
            run[name].get("max_ms", float("inf")) < GOAL_MS
            for name in ("status", "watch_subscribe"))
        result["runs"].append(run)
    return result


def _table(result: dict[str, Any]) -> str:
    lines = [f"{'fsync':>7}  {'what':<19} {'n':>5} {'median':>9} {'p99':>9} {'max':>9}"]
    for run in result["runs"]:
        for name in ("status", "watch_subscribe", "event_after_answer", "place",
                     "machine_sleep_over"):
            figures = run[name]
            lines.append(f"{run['fsync_delay_ms']:>5}ms  {name:<19} {figures['count']:>5} "
                         f"{figures.get('median_ms', '-'):>7}ms {figures.get('p99_ms', '-'):>7}ms "
                         f"{figures.get('max_ms', '-'):>7}ms")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delays", default=",".join(map(str, DELAYS_MS)),
                        help="fsync delays in ms, comma separated (default 0,200,500)")
    parser.add_argument("--wagers", type=int, default=WAGERS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        delays = [int(word) for word in args.delays.split(",")]
    except ValueError:
        parser.error(f"--delays: expected whole milliseconds, comma separated: {args.delays!r}")
    if any(delay < 0 for delay in delays) or not 1 <= args.wagers <= len(BOXES):
        parser.error(f"--delays must be >= 0 and --wagers 1..{len(BOXES)}")
    result = measure(delays, args.wagers)
    print(json.dumps(result, indent=2) if args.json else _table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
