"""What grows in the table service's memory: ``tracemalloc`` snapshots of a service run in this
process, at READY and after each batch of rounds, compared by allocation site (issue 27: RSS
51.8 MB after 1,000 rounds against 45.6 MB at READY, the goal under 40 MB).

The service runs here exactly as ``tablectl run`` runs it (``controller.cli.main``, its config
from ``benchmarks/service.py``, the simulated shuffler on a real pty); the rounds are driven
through its control socket from a thread. ``tracemalloc`` slows every allocation, so the
figures here are *where* memory goes; how much the process holds is ``benchmarks/service.py``'s
RSS, measured from outside without tracing.

Run: ``python benchmarks/service_memory.py [--rounds N] [--batches B] [--top K] [--frames F]``.
With ``--frames 6`` each growth is named by its call path, which shows who holds what grows
(the simulator's list of executed commands was found so: one object, growing, count 0).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.service import _round, service_config  # noqa: E402
from controller.service.control.client import ControlClient, RequestRefused  # noqa: E402


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _top(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, top: int
         ) -> list[dict[str, Any]]:
    filters = [tracemalloc.Filter(False, tracemalloc.__file__),
               tracemalloc.Filter(False, "<frozen importlib._bootstrap*>")]
    group = "traceback" if tracemalloc.get_traceback_limit() > 1 else "lineno"
    stats = after.filter_traces(filters).compare_to(before.filter_traces(filters), group)
    return [{"where": [f"{frame.filename}:{frame.lineno}" for frame in stat.traceback],
             "grew_kb": round(stat.size_diff / 1024, 1), "count_diff": stat.count_diff}
            for stat in stats[:top]]


def _drive(sock: Path, rounds: int, batches: int, top: int, out: dict[str, Any]) -> None:
    deadline = time.monotonic() + 120
    while not sock.exists():  # the service binds its socket just before READY
        if time.monotonic() > deadline:
            out["error"] = "no control socket within 60 s"
            return
        time.sleep(0.05)
    with ControlClient(sock, timeout=60) as client, ControlClient(sock, timeout=60) as watcher:
        while True:  # "starting" until READY: asked again, bounded by the deadline
            try:
                client.request("round.status")
                break
            except RequestRefused:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        events = watcher.watch()
        ready = tracemalloc.take_snapshot()
        out["traced_ready_kb"] = round(tracemalloc.get_traced_memory()[0] / 1024)
        out["rss_ready_kb"] = _rss_kb()
        previous, number, out["batches"] = ready, 0, []
        for _ in range(batches):
            for _ in range(rounds // batches):
                number += 1
                _round(client, events, number)
            snapshot = tracemalloc.take_snapshot()
            out["batches"].append({
                "rounds": number, "rss_kb": _rss_kb(),
                "traced_kb": round(tracemalloc.get_traced_memory()[0] / 1024),
                "grew_since_last_batch": _top(previous, snapshot, top)})
            previous = snapshot
        out["grew_since_ready"] = _top(ready, previous, top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--frames", type=int, default=1,
                        help="frames kept per allocation; above 1, growth is grouped by the "
                             "whole call path, which names who holds a leak, not only where "
                             "it was allocated")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="tablectl-svc-mem-"))
    (tmp / "tablectl.toml").write_text(service_config(tmp, durability="none"))
    out: dict[str, Any] = {"rounds": args.rounds}

    def drive_then_stop() -> None:
        try:
            _drive(tmp / "control.sock", args.rounds, args.batches, args.top, out)
        except Exception as error:  # reported with what was measured
            out["error"] = f"{type(error).__name__}: {error}"
        print(json.dumps(out, indent=2), flush=True)
        os.kill(os.getpid(), 15)  # SIGTERM: the service's own clean stop

    tracemalloc.start(args.frames)
    threading.Thread(target=drive_then_stop, daemon=True, name="bench-driver").start()
    from controller.cli import main as tablectl

    tablectl(["run", "--config", str(tmp / "tablectl.toml")])
    return 1 if "error" in out else 0


if __name__ == "__main__":
    sys.exit(main())
