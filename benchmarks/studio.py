"""``python benchmarks/studio.py``: the studio gateway under a game server's load
(docs/studio.md, "Measured").

The real parts, as in production: ``tablectl run`` (LIVE-3P, a simulated shoe on a pty,
journal durability ``money``), ``tablectl studio`` with mutual TLS (a PKI made by openssl) and
``tablectl studio-client`` as the only source of wagers. Reported:

* each batch's time from the game server's request to its answer: p50, p99, max;
* from the journal's record of the round's last card to its ``round_settled`` record (the
  gateway settles a complete deal at once): p50, p99, max; and as the game server sees it,
  from receiving the last card to receiving the result (0 when both come in one answer);
* the service's and the gateway's resident memory (VmRSS, and VmHWM the peak) at the end;
* the CPU seconds the shift cost the service, the gateway and the client, and the machine's
  load average before and at the end (on shared cores the wall times above depend on it);
* whether every settlement matched the client's own arithmetic.

Goals (issue 28): a batch of 500 in under 100 ms p99; the result within 100 ms of the last
card; 2,000 wagers a round for 100 rounds with the service under 60 MB RSS.

Options: ``--rounds`` (100), ``--wagers`` (2,000), ``--batch`` (500), ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testbed.floorlab import free_port, make_pki  # noqa: E402

READY_SECONDS = 60.0


def _service_toml(tmp: Path) -> str:
    return (f'[table]\nid = "STUDIO-1"\ngame = "live-three-pictures"\n'
            f'settle_on_deal_complete = true\n\n'
            f'[device]\nkind = "live"\ndialect = "beetek"\nurl = "sim"\n\n'
            f'[journal]\ndirectory = "{tmp / "journal"}"\ndurability = "money"\n'
            f'hmac_key_file = ""\n\n'
            f'[control]\nsocket = "{tmp / "control.sock"}"\nsocket_group = ""\n\n'
            f'[clock]\nunsynchronised = "allow"\n')


def _studio_toml(tmp: Path, pki: Path, port: int, batch: int) -> str:
    return (f'[studio]\nlisten = "127.0.0.1"\nport = {port}\n'
            f'certificate = "{pki / "server.pem"}"\nprivate_key = "{pki / "server.key"}"\n'
            f'client_ca = "{pki / "ca.pem"}"\nclients = ["gs1"]\n'
            f'control_socket = "{tmp / "control.sock"}"\n'
            f'ledger = "{tmp / "ledger.jsonl"}"\nmax_batch = {max(batch, 500)}\n')


def _memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM in KiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0])
    return found


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a running process (``/proc/PID/stat`` fields 14 and 15):
    what a shift costs the process, whatever else the machine is doing."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)


def _wait_ready(notify: socket.socket) -> threading.Thread:
    """READY=1; then the service's STATUS datagrams are read on until it stops (a full
    notify socket would hold the service's sd_notify and so its stop)."""
    notify.settimeout(READY_SECONDS)
    while not notify.recv(4096).startswith(b"READY=1"):
        pass
    notify.settimeout(None)

    def drain() -> None:
        try:
            while notify.recv(4096):
                pass
        except OSError:
            return  # closed at the end of the run

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    return thread


def _card_to_settled(journal: Path) -> list[float]:
    """Per round, from the journal's record of the last card to its ``round_settled`` (both
    ``mono_ns``): the table's part of "the result out after the last card"."""
    from controller.journal.reader import iter_records

    last: dict[str | None, int] = {}
    gaps = []
    for record in iter_records([journal]):
        if record.event_type == "card_assigned":
            last[record.round_id] = record.mono_ns
        elif record.event_type == "round_settled" and record.round_id in last:
            gaps.append((record.mono_ns - last[record.round_id]) / 1e6)
    return gaps


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50": round(pick(0.5), 1), "p99": round(pick(0.99), 1),
            "max": round(ordered[-1], 1), "n": len(ordered)}


def run(rounds: int, wagers: int, batch: int) -> dict[str, Any]:
    load_before = [round(x, 2) for x in os.getloadavg()]
    python = [sys.executable, "-m", "controller"]
    with tempfile.TemporaryDirectory(prefix="studio-bench-") as name:
        tmp = Path(name)
        pki = make_pki(tmp / "pki", ["gs1"])
        (tmp / "tablectl.toml").write_text(_service_toml(tmp))
        port = free_port()
        (tmp / "studio.toml").write_text(_studio_toml(tmp, pki, port, batch))
        with studio_processes(tmp) as (service, gateway):
            started = time.monotonic()
            cpu_before = {name: _cpu_seconds(process.pid)
                          for name, process in (("service", service), ("gateway", gateway))}
            children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
            client = subprocess.run([
                *python, "studio-client", "--url", f"https://127.0.0.1:{port}",
                "--cert", str(pki / "gs1.pem"), "--key", str(pki / "gs1.key"),
                "--ca", str(pki / "ca.pem"), "--rounds", str(rounds), "--wagers", str(wagers),
                "--batch", str(batch), "--shift", "bench"],
                cwd=ROOT, capture_output=True, text=True, check=False)
            elapsed = time.monotonic() - started
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = {f"{name}_cpu_s": round(_cpu_seconds(process.pid) - cpu_before[name], 2)
                   for name, process in (("service", service), ("gateway", gateway))}
            cpu["client_cpu_s"] = round(children.ru_utime + children.ru_stime
                                        - children_before.ru_utime
                                        - children_before.ru_stime, 2)
            lines = [json.loads(line) for line in client.stdout.splitlines() if line]
            reports, summary = lines[:-1], (lines[-1] if lines else {})
            return {
                "rounds": rounds, "wagers_per_round": wagers, "batch": batch,
                "shift_seconds": round(elapsed, 1), "client_exit": client.returncode,
                "summary": summary,
                "batch_ms": _percentiles([ms for r in reports for ms in r["batch_ms"]]),
                "result_after_last_card_ms": _percentiles(
                    [r["result_ms"] for r in reports if r.get("result_ms") is not None]),
                "journal_last_card_to_settled_ms": _percentiles(
                    _card_to_settled(tmp / "journal")),
                "service_kib": _memory(service.pid), "gateway_kib": _memory(gateway.pid),
                **cpu, "load_average_before": load_before,
                "load_average": [round(x, 2) for x in os.getloadavg()],
                "client_stderr": client.stderr[-500:],
            }


@contextmanager
def studio_processes(tmp: Path
                     ) -> Iterator[tuple[subprocess.Popen[Any], subprocess.Popen[str]]]:
    """The table service (``tmp/tablectl.toml``, READY on its notify socket) and the gateway
    (``tmp/studio.toml``, "listening") as processes, stopped with SIGTERM afterwards (killed
    if a stop hangs: the figures are taken, do not lose them to a stop)."""
    python = [sys.executable, "-m", "controller"]
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp / "notify"))
    env = {**os.environ, "NOTIFY_SOCKET": str(tmp / "notify")}
    service = subprocess.Popen([*python, "run", "--config", str(tmp / "tablectl.toml")],
                               cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    gateway = None
    try:
        _wait_ready(notify)
        gateway = subprocess.Popen([*python, "studio", "--config", str(tmp / "studio.toml")],
                                   cwd=ROOT, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)
        assert gateway.stdout is not None and \
            gateway.stdout.readline().startswith("listening")
        yield service, gateway
    finally:
        for process in (gateway, service):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=60)
        notify.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--wagers", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.rounds, args.wagers, args.batch)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:28} {value}")
    return 0 if result["client_exit"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
