"""``python benchmarks/studio_attacks.py``: the game server's requests to the studio gateway,
idle and under the two connection attacks of issue 33, side by side in one run
(docs/studio.md, "Security").

The real parts, as in production: ``tablectl run`` (LIVE-3P, a simulated shoe) and ``tablectl
studio`` with mutual TLS (a PKI made by openssl), its default bounds (``max_connections`` 16,
``max_pending`` 4096, ``max_pending_per_address`` 128). The attackers run in a process of their
own (this script, ``--attacker``), on loopback, from the game server's own address:

1. **idle**: nothing else;
2. **flood**: 1,000 plain TCP connections that never start TLS, each reopened as soon as the
   gateway drops it (finding 2);
3. **trickle**: 100 TLS connections certified as gs2 (a listed game server) that send a
   request's header a byte a second, each reopened when the gateway closes it (finding 4);
4. **hello**: 1,000 connections that send the first 11 bytes of a ClientHello and stall (each
   costs the gateway its TLS state, not only a socket), reopened as they are dropped;
5. **both**: the flood and the trickle at once (issue 33: "the game server always served
   within 1 s while 1,000 plain TCP and 100 trickling TLS connections are held").

In each phase gs1 makes ``--requests`` (200) requests, each on a new connection (TCP, the TLS
handshake, ``GET /v1/status``, the answer): p50, p99, max and the failures; a request on a kept
connection (keep-alive) too. Reported with the gateway's resident memory (VmRSS at the phase's
end, VmHWM the peak so far), its threads, and the attacker's connections opened.

Options: ``--requests`` (200), ``--flood`` (1000), ``--tricklers`` (100),
``--max-pending-per-address`` (the gateway's default, 128: the flood, from one address, is
then dropped and reopened as fast as the attacker can; 2000: it is held, and dropped only at
the handshake deadline), ``--json``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import selectors
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testbed.floorlab import free_port, make_pki  # noqa: E402
from benchmarks.studio import (  # noqa: E402
    _memory,
    _percentiles,
    _service_toml,
    studio_processes,
)

SETTLE_SECONDS = 3.0
"""Each attack runs this long before the game server's requests are timed."""
TRICKLE_REQUEST = b"GET /v1/status HTTP/1.1\r\nHost: studio\r\nX-Pad: " + b"p" * 200 + b"\r\n\r\n"


def _raise_files() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = max(soft, 65536)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _studio_toml(tmp: Path, pki: Path, port: int, per_address: int | None) -> str:
    return (f'[studio]\nlisten = "127.0.0.1"\nport = {port}\n'
            f'certificate = "{pki / "server.pem"}"\nprivate_key = "{pki / "server.key"}"\n'
            f'client_ca = "{pki / "ca.pem"}"\nclients = ["gs1", "gs2"]\n'
            f'control_socket = "{tmp / "control.sock"}"\n'
            f'ledger = "{tmp / "ledger.jsonl"}"\n'
            + (f"max_pending_per_address = {per_address}\n" if per_address else ""))


# --- the attacker process ---------------------------------------------------------------

PARTIAL_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"
"""A TLS record header announcing a 512-byte ClientHello, and its first 6 bytes: the
gateway's TLS state is made for it, and waits for the rest."""


def flood(port: int, count: int, stop: threading.Event, counts: dict[str, int],
          first: bytes = b"") -> None:
    """``count`` connections that send ``first`` (nothing: plain TCP) and then nothing, each
    reopened when the gateway drops it."""
    selector = selectors.DefaultSelector()

    def open_one() -> None:
        sock = socket.socket()
        if first:
            sock.settimeout(30)
            try:
                sock.connect(("127.0.0.1", port))
                sock.sendall(first)
            except OSError:
                pass
        sock.setblocking(False)
        if not first:
            sock.connect_ex(("127.0.0.1", port))
        selector.register(sock, selectors.EVENT_READ)
        counts["opened"] += 1

    for _ in range(count):
        open_one()
    while not stop.is_set():
        for key, _ in selector.select(0.2):
            selector.unregister(key.fileobj)
            key.fileobj.close()  # type: ignore[union-attr]
            open_one()
    for key in list(selector.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    selector.close()


def trickle(port: int, pki: Path, stop: threading.Event, counts: dict[str, int]) -> None:
    """One trickler, reconnecting whenever the gateway answers or closes."""
    context = ssl.create_default_context(cafile=str(pki / "ca.pem"))
    context.load_cert_chain(pki / "gs2.pem", pki / "gs2.key")
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as raw, \
                    context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                counts["opened"] += 1
                for index in range(len(TRICKLE_REQUEST)):
                    tls.sendall(TRICKLE_REQUEST[index:index + 1])
                    if stop.wait(1.0):
                        return
                    tls.setblocking(False)
                    try:
                        if tls.recv(4096) is not None:
                            counts["answered_or_closed"] += 1
                            break
                    except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                        pass
                    finally:
                        tls.settimeout(30)
        except OSError:
            counts["answered_or_closed"] += 1
            stop.wait(0.2)


def attacker(kind: str, port: int, pki: Path, count: int, tricklers: int) -> int:
    """Runs until stdin closes; prints its counts as JSON."""
    _raise_files()
    stop = threading.Event()
    counts = {"opened": 0, "answered_or_closed": 0}
    threads: list[threading.Thread] = []
    if kind in ("flood", "hello", "both"):
        first = PARTIAL_HELLO if kind == "hello" else b""
        threads.append(threading.Thread(target=flood, args=(port, count, stop, counts, first)))
    if kind == "trickle":
        tricklers = count
    if kind in ("trickle", "both"):
        threads += [threading.Thread(target=trickle, args=(port, pki, stop, counts))
                    for _ in range(tricklers)]
    for thread in threads:
        thread.start()
    print("started", flush=True)
    sys.stdin.read()
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    print(json.dumps(counts), flush=True)
    return 0


# --- the game server's requests --------------------------------------------------------

def _context(pki: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki / "ca.pem"))
    context.load_cert_chain(pki / "gs1.pem", pki / "gs1.key")
    return context


def time_requests(port: int, pki: Path, count: int) -> dict[str, Any]:
    """``count`` requests on new connections, then ``count`` on one kept connection."""
    context = _context(pki)
    fresh, failures = [], []
    for _ in range(count):
        started = time.perf_counter()
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=context,
                                                 timeout=60)
        try:
            connection.request("GET", "/v1/status")
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                fresh.append((time.perf_counter() - started) * 1000)
            else:
                failures.append(str(response.status))
        except OSError as error:
            failures.append(type(error).__name__)
        finally:
            connection.close()
    kept: list[float] = []
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=60)
    try:
        for _ in range(count):
            started = time.perf_counter()
            connection.request("GET", "/v1/status")
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                kept.append((time.perf_counter() - started) * 1000)
    except OSError as error:
        failures.append(f"kept: {type(error).__name__}")
    finally:
        connection.close()
    return {"new_connection_ms": _percentiles(fresh), "kept_connection_ms": _percentiles(kept),
            "over_1s": sum(1 for ms in (*fresh, *kept) if ms > 1000.0),
            "failures": len(failures), "failed_as": sorted(set(failures))}


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def _open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def run(requests: int, flood_count: int, tricklers: int,
        per_address: int | None = None) -> dict[str, Any]:
    _raise_files()
    load_before = [round(x, 2) for x in os.getloadavg()]
    phases: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="studio-attacks-") as name:
        tmp = Path(name)
        pki = make_pki(tmp / "pki", ["gs1", "gs2"])
        (tmp / "tablectl.toml").write_text(_service_toml(tmp))
        port = free_port()
        (tmp / "studio.toml").write_text(_studio_toml(tmp, pki, port, per_address))
        with studio_processes(tmp) as (_service, gateway):
            time_requests(port, pki, 10)  # warm
            for phase, count in (("idle", 0), ("flood", flood_count),
                                 ("trickle", tricklers), ("hello", flood_count),
                                 ("both", flood_count)):
                phases[phase] = _phase(phase, count, port, pki, requests, gateway.pid,
                                       tricklers)
    return {"requests_per_phase": requests, "max_pending_per_address": per_address or 128,
            "phases": phases,
            "load_average_before": load_before,
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def _phase(phase: str, count: int, port: int, pki: Path, requests: int,
           gateway_pid: int, tricklers: int) -> dict[str, Any]:
    attack = None
    if count:
        attack = subprocess.Popen([sys.executable, __file__, "--attacker", phase,
                                   "--port", str(port), "--pki", str(pki), "--count",
                                   str(count), "--tricklers", str(tricklers)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert attack.stdout is not None and attack.stdout.readline().strip() == "started"
        time.sleep(SETTLE_SECONDS)  # the attack in full before the timing starts
    started = time.monotonic()
    result = time_requests(port, pki, requests)
    result["seconds"] = round(time.monotonic() - started, 1)
    result["gateway_kib"] = _memory(gateway_pid)
    result["gateway_threads"] = _threads(gateway_pid)
    result["gateway_open_files"] = _open_files(gateway_pid)
    if attack is not None:
        out, _ = attack.communicate("", timeout=120)
        result["attacker"] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--flood", type=int, default=1000)
    parser.add_argument("--tricklers", type=int, default=100)
    parser.add_argument("--max-pending-per-address", type=int, default=None,
                        help="studio.max_pending_per_address (default: the gateway's, 128)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--attacker", choices=("flood", "trickle", "hello", "both"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pki", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attacker:
        return attacker(args.attacker, args.port, args.pki, args.count, args.tricklers)
    result = run(args.requests, args.flood, args.tricklers, args.max_pending_per_address)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{'':34} " + "".join(f"{phase:>20}" for phase in result["phases"]))
    rows = [("new connection + request p50 ms", lambda r: r["new_connection_ms"].get("p50")),
            ("new connection + request p99 ms", lambda r: r["new_connection_ms"].get("p99")),
            ("new connection + request max ms", lambda r: r["new_connection_ms"].get("max")),
            ("kept connection p50 ms", lambda r: r["kept_connection_ms"].get("p50")),
            ("kept connection p99 ms", lambda r: r["kept_connection_ms"].get("p99")),
            ("failures", lambda r: r["failures"]),
            ("answered after more than 1 s", lambda r: r["over_1s"]),
            ("gateway VmRSS KiB", lambda r: r["gateway_kib"].get("VmRSS")),
            ("gateway VmHWM KiB", lambda r: r["gateway_kib"].get("VmHWM")),
            ("gateway threads", lambda r: r["gateway_threads"]),
            ("gateway open files", lambda r: r["gateway_open_files"]),
            ("attacker connections opened", lambda r: r.get("attacker", {}).get("opened", "-")),
            ("phase seconds", lambda r: r["seconds"])]
    for label, value in rows:
        print(f"{label:34} " + "".join(f"{value(r)!s:>20}"
                                       for r in result["phases"].values()))
    print(f"load average before {result['load_average_before']}, after "
          f"{result['load_average']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
