"""The table service as a process: time to READY, idle CPU, memory after 1,000 rounds, rounds/s.

``measure_service()`` starts ``python -m controller run --config <tmp toml>`` (RWS-NC3P on the
simulated shuffler: firmware_sim on a real pty, the real driver, the journal) with a
NOTIFY_SOCKET bound here, and measures what issue 6 asks, from outside the process:

* ``ready_seconds``: from ``Popen`` to the READY=1 datagram (goal < 1.5 s);
* ``idle_cpu_percent``: utime+stime from ``/proc/PID/stat`` over ``idle_seconds`` of a table
  with no round (from :data:`SETTLE_SECONDS` after READY: start-up's own traffic is not
  idle), as a share of one core (goal < 1 %: no busy polling); the kernel counts in clock
  ticks, so over 10 s this is only good to 0.1 %;
* ``idle_wakeups_per_second``: over the same window, how often the service's threads blocked
  and woke (voluntary context switches of every thread, ``/proc/PID/task/*/status``): the
  finer measure of what costs the idle CPU (each poll, each tick, each heartbeat; goal < 5);
* ``rounds_per_second``: whole rounds driven through the control socket (open, two wagers, no
  more bets, the deal by the simulated shuffler, reveal, settle), end to end;
* ``rss_mb``: resident memory (``VmRSS`` from ``/proc/PID/status``) after those rounds
  (goal < 40 MB), and ``rss_ready_mb`` right after READY; ``anon_mb`` / ``file_mb`` split
  both (``RssAnon``: the heap and Python's objects, what grows; ``RssFile``: mapped code);
* ``rss_by_rounds``: every ``--rss-every`` rounds (default 1,000) the rounds so far, the
  seconds since the first and the RSS, so a long run shows where memory levels off (issue
  27: 100,000 rounds); with ``--progress PATH`` the figures so far are written to ``PATH``
  (replaced whole) at each of those points, for a run too long to wait for.

Run alone: ``python benchmarks/service.py [--rounds N] [--idle S] [--rss-every K]
[--progress PATH] [--durability always|money|none]``. ``none`` only stops the journal's
fsyncs (the same service and code path otherwise): about a fifth faster on this machine, for
runs of 100,000 rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.service.control.client import ControlClient  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GOALS = {"rss_mb": 40.0, "idle_cpu_percent": 1.0, "ready_seconds": 1.5,
         "idle_wakeups_per_second": 5.0}
SETTLE_SECONDS = 5.0
STOP_SECONDS = 180.0
"""A bound for the clean stop (the close moves the verified mark: it checks what the run
wrote), generous on a loaded machine; 30 s lost a whole run's figures."""

CONFIG = """\
[table]
id = "BENCH-SVC"
game = "rws-nc-three-pictures"
boxes = ["1", "2", "3"]

[device]
kind = "shuffler"
url = "sim"

[journal]
directory = "{journal}"
durability = "{durability}"
{journal_keys}
[control]
socket = "{socket}"
socket_group = ""
{control_keys}
[clock]
unsynchronised = "allow"
"""


def _drain(notify: socket.socket) -> None:
    """Read the later STATUS datagrams as systemd does, so the service never waits on them."""
    notify.settimeout(None)
    try:
        while notify.recv(4096):
            pass
    except OSError:  # closed at the end of the run
        pass


def service_config(tmp: Path, *, durability: str = "money", control_keys: str = "",
                   journal_keys: str = "") -> str:
    """:data:`CONFIG` for a service in ``tmp``, ``control_keys`` (TOML lines) in ``[control]``,
    ``journal_keys`` in ``[journal]``."""
    return CONFIG.format(journal=tmp / "journal", socket=tmp / "control.sock",
                         durability=durability, control_keys=control_keys,
                         journal_keys=journal_keys)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wakeups(pid: int) -> int:
    """Voluntary context switches of all the process's threads: one per block-and-wake."""
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            text = status.read_text()
        except OSError:  # the thread ended meanwhile
            continue
        total += int(text.split("voluntary_ctxt_switches:")[1].split()[0])
    return total


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _memory_mb(pid: int) -> dict[str, float]:
    """``VmRSS``, ``RssAnon`` and ``RssFile`` of ``/proc/PID/status``, in MB."""
    wanted = {"VmRSS:": "rss_mb", "RssAnon:": "anon_mb", "RssFile:": "file_mb"}
    found: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(maxsplit=1)[0] if line else ""
        if key in wanted:
            found[wanted[key]] = round(int(line.split()[1]) / 1024, 1)
    return found


def _write_progress(path: Path, result: dict[str, Any]) -> None:
    """The figures so far to ``path``, replaced whole (a reader never sees half a file)."""
    partial = path.with_name(path.name + ".part")
    partial.write_text(json.dumps(result, indent=2) + "\n")
    partial.replace(path)


def _round(client: ControlClient, events: Any, number: int) -> None:
    client.request("round.open")
    client.request("wager.place", {"wager_id": f"{number}a", "position": "1", "bet": "main",
                                   "amount": 500})
    client.request("wager.place", {"wager_id": f"{number}b", "position": "3", "bet": "main",
                                   "amount": 1000})
    client.request("round.close")
    for event in events:
        if event["type"] == "DealComplete":
            break
        if event["type"] in ("RoundVoided", "SupervisorRequired"):
            raise RuntimeError(f"round {number}: {event}")
    client.request("round.reveal")
    client.request("round.settle")


@contextmanager
def running_service(tmp: Path, *, durability: str = "money", extra: str = "",
                    journal_keys: str = "") -> Iterator[tuple[int, Path, float]]:
    """The service started in ``tmp`` with :data:`CONFIG` (``extra``: more ``[control]`` keys,
    written inside that table: appended after ``[clock]`` they were the clock's, and the
    service refused its config): (pid, control socket, seconds from ``Popen`` to READY=1).
    SIGTERM at the end, which must exit 0."""
    config = tmp / "tablectl.toml"
    config.write_text(service_config(tmp, durability=durability, control_keys=extra,
                                     journal_keys=journal_keys))
    with notified_service(tmp, ["-m", "controller", "run", "--config", str(config)],
                          ready_s=30.0) as (pid, ready):
        yield pid, tmp / "control.sock", ready


@contextmanager
def notified_service(tmp: Path, args: list[str], *,
                     ready_s: float) -> Iterator[tuple[int, float]]:
    """``python <args>`` started in the repository as systemd starts the unit (a
    ``NOTIFY_SOCKET`` in ``tmp``, its log in ``tmp/service.log``) and waited for until READY=1
    (``ready_s`` a bound, never a measure): (pid, seconds from ``Popen`` to READY=1). SIGTERM
    at the end, which must exit 0 within :data:`STOP_SECONDS`. The one place every benchmark
    starts and stops the service."""
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
    notify.bind(str(tmp / "notify"))
    notify.settimeout(ready_s)
    # the service's log to a file, not a pipe nobody reads until the end: a pipe's 64 KiB of
    # warnings (a busy machine makes more) blocked the service's logging mid-run, and the run
    # ended "no answer within 30 s" after 10,000 rounds
    log = (tmp / "service.log").open("w+")
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, *args], cwd=ROOT,
        env={**os.environ, "NOTIFY_SOCKET": str(tmp / "notify")},
        stdout=subprocess.DEVNULL, stderr=log, text=True)
    try:
        while not notify.recv(4096).startswith(b"READY=1"):
            pass
        ready = time.monotonic() - started
        # read every later STATUS as systemd does: unread, the queue filled and the service
        # could not stop (issue 27; its notifications no longer block either way)
        threading.Thread(target=_drain, args=(notify,), daemon=True,
                         name="notify-drain").start()
        yield process.pid, ready
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=STOP_SECONDS)
        if process.returncode != 0:
            log.seek(0)
            raise RuntimeError(f"service exited {process.returncode}: {log.read()[-500:]}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        notify.close()
        log.close()


def measure_service(rounds: int = 1000, idle_seconds: float = 10.0,
                    durability: str = "money", rss_every: int = 1000,
                    progress: Path | None = None) -> dict[str, Any]:
    """Start the service, measure, stop it (SIGTERM); see the module doc."""
    result: dict[str, Any] = {
        "game": "rws-nc-three-pictures", "device": "sim shuffler (pty)",
        "journal_durability": durability, "rounds": rounds, "idle_seconds": idle_seconds,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average": os.getloadavg()[0],
    }
    with tempfile.TemporaryDirectory(prefix="tablectl-svc-bench-") as tmp_name, \
            running_service(Path(tmp_name), durability=durability) as (pid, sock, ready):
        memory_ready = _memory_mb(pid)
        # idle is measured once start-up has settled: the simulated link ticks every 50 ms for
        # 2 s after its last message, and on a loaded machine the device comes online after
        # READY; those wake-ups are start-up's, not an idle table's
        time.sleep(SETTLE_SECONDS)  # part of the method, not synchronisation
        cpu_before, wall_before = _cpu_seconds(pid), time.monotonic()
        wakeups_before = _wakeups(pid)
        time.sleep(idle_seconds)  # the measurement window itself, not synchronisation
        wakeups = _wakeups(pid) - wakeups_before
        window = time.monotonic() - wall_before
        idle = (_cpu_seconds(pid) - cpu_before) / window
        result.update({
            "ready_seconds": round(ready, 3), "idle_cpu_percent": round(idle * 100, 3),
            "idle_wakeups_per_second": round(wakeups / window, 1),
            "rss_ready_mb": memory_ready["rss_mb"], "anon_ready_mb": memory_ready["anon_mb"],
            "file_ready_mb": memory_ready["file_mb"], "rss_by_rounds": []})
        with ControlClient(sock, timeout=30) as client, \
                ControlClient(sock, timeout=30) as watcher:
            events = watcher.watch()
            begun = time.monotonic()
            for number in range(1, rounds + 1):
                _round(client, events, number)
                if number % rss_every == 0 or number == rounds:
                    result["rss_by_rounds"].append({
                        "rounds": number, "seconds": round(time.monotonic() - begun, 1),
                        **_memory_mb(pid)})
                    if progress is not None:
                        _write_progress(progress, result)
            elapsed = time.monotonic() - begun
        memory = _memory_mb(pid)
    result.update({"rss_mb": memory["rss_mb"], "anon_mb": memory["anon_mb"],
                   "file_mb": memory["file_mb"],
                   "rounds_per_second": round(rounds / elapsed, 1)})
    result["goals_met"] = {name: result[name] < goal for name, goal in GOALS.items()}
    if progress is not None:
        _write_progress(progress, result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--durability", default="money", choices=("always", "money", "none"))
    parser.add_argument("--rss-every", type=int, default=1000, metavar="K",
                        help="record the RSS every K rounds (rss_by_rounds)")
    parser.add_argument("--progress", type=Path, metavar="PATH",
                        help="write the figures so far to PATH at every record")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.rss_every < 1:
        parser.error("--rounds and --rss-every must be at least 1")
    print(json.dumps(measure_service(args.rounds, args.idle, args.durability, args.rss_every,
                                     args.progress), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
