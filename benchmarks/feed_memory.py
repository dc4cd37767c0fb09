"""The feed's memory on the table: ``python -m controller.feed`` (what the systemd unit runs)
publishing a bench journal to a real Mosquitto over TLS, its memory read from ``/proc``.

Two moments: *catching up* (a 30-round journal, about 2,000 records, all unpublished: the
feed's busiest, as after a broker outage) and *at rest* (started again with its cursor at the
journal's end, connected, waiting: the live-pace state). Three figures each: VmRSS (the goal's
measure), PSS (its share of pages shared with other processes) and private pages (what only
the feed holds: libpython, libssl and libcrypto are mapped by the table service too).

Measure with the interpreter of an install like the Pi's (the runtime lock and the tablectl
wheel, no test extras, not editable), e.g.::

    python3 -m venv /tmp/rt && /tmp/rt/bin/pip install --require-hashes --only-binary=:all: \\
        -r requirements.lock && /tmp/rt/bin/pip install --no-deps .
    python benchmarks/feed_memory.py --python /tmp/rt/bin/python [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testbed.floorlab import Mosquitto, feed_config, make_pki  # noqa: E402
from controller.bench import Bench  # noqa: E402
from controller.logsetup import configure_logging  # noqa: E402

SETTLE_S = 8.0


def memory_mb(pid: int) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    private = sum(int(kb) for kb in re.findall(r"Private_(?:Clean|Dirty):\s+(\d+)", rollup))
    kb = {name: int(re.search(rf"^{name}:\s+(\d+)", text, re.M).group(1))  # type: ignore[union-attr]
          for name, text in (("VmRSS", status), ("VmHWM", status), ("Pss", rollup))}
    return {"rss_mb": round(kb["VmRSS"] / 1024, 1), "peak_rss_mb": round(kb["VmHWM"] / 1024, 1),
            "pss_mb": round(kb["Pss"] / 1024, 1), "private_mb": round(private / 1024, 1)}


def _until_acknowledged(work: Path, last_seq: int, started: float) -> float:
    """Seconds from the feed's start until its cursor (saved after PUBACKs) reaches the end."""
    while time.monotonic() - started < SETTLE_S:
        for cursor in work.rglob("feed.cursor"):
            try:
                if json.loads(cursor.read_text())["seq"] == last_seq:
                    return time.monotonic() - started
            except (ValueError, KeyError, OSError):
                pass  # being replaced: read it again
        time.sleep(0.01)
    raise RuntimeError(f"the feed did not acknowledge {last_seq} records in {SETTLE_S} s")


def measure(python: str, work: Path, windows: list[int]) -> dict[str, object]:
    pki = make_pki(work / "pki", ["T000", "floor"])
    (work / "broker").mkdir()
    broker = Mosquitto(work / "broker", pki)
    broker.start()
    journal = work / "journal"
    Bench("rws-three-card-poker", 30, seed=3, journal_dir=journal).run()
    last_seq = sum(path.read_bytes().count(b"\n") for path in journal.glob("*.jsonl"))
    results: dict[str, object] = {"python": python, "records": last_seq}
    try:
        for window in windows:
            state = work / f"window-{window}"  # a cursor of its own: each catches up from 0
            state.mkdir()
            config = feed_config(state, pki, broker, "T000", journal, window=window)
            results[f"window {window}"] = _one_feed(python, config, state, last_seq)
    finally:
        broker.stop()
    return results


def _one_feed(python: str, config: Path, state: Path, last_seq: int) -> dict[str, object]:
    out: dict[str, object] = {}
    for moment in ("catching_up", "at_rest"):
        # cwd outside the source tree: the interpreter's own install is what runs
        started = time.monotonic()
        process = subprocess.Popen([python, "-m", "controller.feed", "--config", str(config)],
                                   cwd=tempfile.gettempdir(), stderr=subprocess.DEVNULL)
        try:
            if moment == "catching_up":
                out["catch_up_s"] = round(_until_acknowledged(state, last_seq, started), 2)
            time.sleep(max(0.0, started + SETTLE_S - time.monotonic()))
            out[moment] = memory_mb(process.pid)
        finally:
            process.terminate()
            process.wait(timeout=30)
    out["records_acknowledged"] = json.loads(next(state.rglob("feed.cursor")).read_text())["seq"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--windows", default="32,64",
                        help="records in flight, one feed each, side by side (default 32,64; "
                             "32 is the feed's default)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    configure_logging("WARNING")  # the bench table's debug lines are not this benchmark's
    windows = [int(window) for window in args.windows.split(",")]
    with tempfile.TemporaryDirectory() as work:
        results = measure(args.python, Path(work), windows)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for window in windows:
        one: dict[str, Any] = results[f"window {window}"]  # type: ignore[assignment]
        print(f"window {window}: {one['records_acknowledged']} of {results['records']} records "
              f"acknowledged {one['catch_up_s']} s after the start")
        for moment in ("catching_up", "at_rest"):
            print(f"  {moment:12s} " + ", ".join(f"{k} {v}" for k, v in one[moment].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
