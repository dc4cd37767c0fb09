"""The control socket under load: the service's memory with 1,000 idle connections and with a
client that never reads its replies (issue 11).

``measure_control()`` starts ``python -m controller run --config <tmp toml>`` (the same table as
``benchmarks/service.py``: RWS-NC3P on the simulated shuffler) and reads its resident memory
(``VmRSS``) and peak (``VmHWM``) from ``/proc/PID/status``:

* ``rss_ready_mb``: right after READY;
* ``idle_1000``: after 1,000 connections are opened and left idle, with the default
  ``control.max_connections`` (64: the rest are told ``busy``) and again with
  ``max_connections = 1000`` (every one held), with the CPU the service spent meanwhile and
  whether a new client is still answered;
* ``non_reader``: a client sends up to 400,000 ``round.status`` requests and never reads
  (before the fix this took the service from 48 to 509 MB): how many it got to send before the
  service dropped it, and the memory after.

Run alone: ``python benchmarks/control.py``.
"""

from __future__ import annotations

import json
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.service import _cpu_seconds, _rss_mb, running_service  # noqa: E402
from controller.service.control.client import ControlClient  # noqa: E402

IDLE_CONNECTIONS = 1000
NON_READER_REQUESTS = 400_000
STATUS = b'{"id": 1, "verb": "round.status"}\n'


def _hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def _idle(pid: int, sock: Path) -> dict[str, Any]:
    """Open 1,000 connections and leave them idle; memory, CPU, and a fresh client's answer."""
    cpu = _cpu_seconds(pid)
    held = []
    try:
        for _ in range(IDLE_CONNECTIONS):
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(str(sock))
            held.append(client)
        started = time.monotonic()
        try:  # the server accepts in order: once this is answered, all 1,000 were handled
            with ControlClient(sock, timeout=10) as late:
                late.request("round.status")
            answered = "round.status answered"
        except Exception as error:  # the figure is whether it is answered, and how
            answered = str(error)
        late_seconds = time.monotonic() - started
        rss = _rss_mb(pid)
        turned_away = 0
        for client in held:
            client.settimeout(0)
            try:
                turned_away += b'"busy"' in client.recv(4096)
            except BlockingIOError:
                pass
        return {"rss_mb": round(rss, 1), "turned_away_busy": turned_away,
                "new_client": answered,
                "new_client_seconds": round(late_seconds, 3),
                "cpu_seconds": round(_cpu_seconds(pid) - cpu, 2)}
    finally:
        for client in held:
            client.close()


def _non_reader(pid: int, sock: Path) -> dict[str, Any]:
    """Send round.status requests and never read a reply, until the service drops us."""
    batch = STATUS * 1000
    sent = 0
    started = time.monotonic()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(30)
        client.connect(str(sock))
        try:
            while sent < NON_READER_REQUESTS:
                client.sendall(batch)
                sent += 1000
            outcome = "not dropped"
        except (BrokenPipeError, ConnectionResetError):
            outcome = "dropped by the service"
        except TimeoutError:
            outcome = "send blocked 30 s"
    return {"requests_sent": sent, "outcome": outcome,
            "seconds": round(time.monotonic() - started, 2),
            "rss_mb": round(_rss_mb(pid), 1), "peak_rss_mb": round(_hwm_mb(pid), 1)}


def measure_control() -> dict[str, Any]:
    """Start the service (twice: default cap, and every connection held), measure, stop."""
    with tempfile.TemporaryDirectory(prefix="tablectl-ctl-bench-") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "capped").mkdir()
        (tmp / "held").mkdir()
        with running_service(tmp / "capped") as (pid, sock, _):
            ready = _rss_mb(pid)
            capped = _idle(pid, sock)
            non_reader = _non_reader(pid, sock)
            with ControlClient(sock, timeout=10) as after:
                after.request("round.status")
        with running_service(tmp / "held", extra="max_connections = 1000\n") as (pid, sock, _):
            held = _idle(pid, sock)
    return {"rss_ready_mb": round(ready, 1),
            "idle_1000_default_cap_64": capped, "idle_1000_all_held": held,
            "non_reader": non_reader,
            "served_after_non_reader": True}


def main() -> int:
    print(json.dumps(measure_control(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
