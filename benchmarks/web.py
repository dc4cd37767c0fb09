"""``python benchmarks/web.py``: the web process at scale (docs/web.md, "Measured").

1. A 1,000,000-record journal, written with the journal writer itself (durability ``none``):
   rounds shaped like the service's (``round_opened``, commands and device inputs, wagers,
   ``card_assigned``, rulings with clauses, supervisor decisions, ``round_settled`` /
   ``round_voided`` with the settlement), so the index and the pages see what a table writes.
2. The index built from it (time), then the rounds page through the real app (Starlette's
   in-process client: routing, query, template) for a mix of filters: p50/p95/max.
3. ``tablectl web`` as a process on a journal of 1,000 rounds: resident memory (VmRSS) after
   the index is built and every page kind has been served.
4. Its memory under attack, as the unit runs it (TLS, accounts, ``LimitNOFILE``): uploads, 500
   event streams, 900 idle TLS connections, against the unit's ``MemoryMax``
   (:mod:`benchmarks.web_attacks`; ``--attacks-only``).

Options: ``--records N`` (default 1,000,000), ``--keep DIR`` to reuse a generated journal.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testbed.journalgen import GAME, write_synthetic_journal  # noqa: E402

def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def measure_pages(journal: Path, work: Path) -> dict[str, float]:
    from starlette.testclient import TestClient

    from controller.web.app import WebApp
    from controller.web.auth import Authenticator, Role
    from controller.web.index import JournalIndex

    index_path = work / "index.sqlite"
    start = time.perf_counter()
    index = JournalIndex(journal, index_path)
    added = index.update()
    build = time.perf_counter() - start
    index.close()
    app = WebApp(journal_dir=journal, index_path=index_path, socket_path=None, key=None,
                 auth=Authenticator({}), local_role=Role.SURVEILLANCE, poll=3600)
    queries = ["", "voided=1", "clause=5.1.4", "voided=1&clause=5.1.2", "actor=chen",
               "card=AS", "result=push", "amount_over=20000", "irregular=1",
               "since=2020-01-01&until=2100-01-01&game=" + GAME,
               "actor=nobody-at-all", "card=AS&result=win&amount_over=5000"]
    out: dict[str, float] = {"records": added, "index_build_s": build,
                             "index_mb": index_path.stat().st_size / 1e6}
    with TestClient(app.asgi, base_url="http://127.0.0.1") as client:  # the kiosk: loopback
        client.get("/console")
        # First while the start-up check verifies the whole journal on its thread, then
        # once it is done (the steady state: incremental checks of a second's records).
        began = time.perf_counter()
        for label in ("during_verify", "steady"):
            if label == "steady":
                app.watcher.ready.wait(1800)
                out["startup_verify_s"] = time.perf_counter() - began
            timings: list[float] = []
            for _ in range(10):
                for query in queries:
                    start = time.perf_counter()
                    response = client.get("/console?" + query)
                    timings.append(time.perf_counter() - start)
                    assert response.status_code == 200, response.text[:200]
            out[f"rounds_{label}_p50_ms"] = 1000 * statistics.median(timings)
            out[f"rounds_{label}_p95_ms"] = 1000 * _percentile(timings, 0.95)
            out[f"rounds_{label}_max_ms"] = 1000 * max(timings)
        start = time.perf_counter()
        client.get("/console/round/1")
        out["timeline_ms"] = 1000 * (time.perf_counter() - start)
        out["requests"] = 2 * len(timings)
    return out


def measure_rss(work: Path) -> dict[str, float]:
    """``tablectl web`` as a process on a 1,000-round journal, after every page kind."""
    import urllib.request

    journal = work / "rss-journal"
    records = write_synthetic_journal(journal, 1000, seed=2)
    process = subprocess.Popen(
        [sys.executable, "-m", "controller", "web", "--journal", str(journal), "--socket",
         str(work / "none.sock"), "--port", "0", "--local-role", "surveillance",
         "--index", str(work / "rss.sqlite")],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd=ROOT)
    try:
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        url = line.split("listening on ")[1].split()[0].rstrip("/")
        with urllib.request.urlopen(url + "/console", timeout=30) as reply:
            reply.read()
        started = _rss(process.pid)
        for path in ("/console", "/console/round/1", "/console/recall", "/console/overrides",
                     "/dealer", "/console?voided=1", "/console/export?round=7"):
            for _ in range(20):
                with urllib.request.urlopen(url + path, timeout=30) as reply:
                    reply.read()
        rss, peak = _rss(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=10)
    return {"rss_records": records, "rss_started_mb": started[0], "rss_mb": rss,
            "rss_peak_mb": peak}


def _rss(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MB."""
    fields = dict(line.split(":", 1) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def measure_latency(work: Path, rounds: int = 20) -> dict[str, float]:
    """From a dealer's command to the dealer view on the server-sent event stream (what the
    page renders from), through ``tablectl run`` (the bench table) and ``tablectl web`` as
    processes: an upper bound of event-to-screen, since it includes the table's own work."""
    import http.client
    import json
    import queue
    import threading

    from controller.service.control.client import ControlClient

    runtime = work / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_STATE_HOME": str(work / "state"), "XDG_RUNTIME_DIR": str(runtime)}
    sock = runtime / "tablectl" / "control.sock"
    service = subprocess.Popen([sys.executable, "-m", "controller", "run"], env=env, cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    web = None
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with ControlClient(sock, timeout=1) as client:
                    client.request("round.status")
                break
            except Exception:  # noqa: BLE001 (not up yet)
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)  # polling a starting process, bounded by the deadline
        web = subprocess.Popen(
            [sys.executable, "-m", "controller", "web", "--journal",
             str(work / "state" / "tablectl" / "bench-journal"), "--socket", str(sock),
             "--port", "0", "--index", str(work / "lat.sqlite")],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert web.stderr is not None
        port = int(web.stderr.readline().decode().split("listening on ")[1].split(":")[2]
                   .split("/")[0])
        views: queue.Queue[dict[str, object]] = queue.Queue()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("GET", "/dealer/events")
        stream = connection.getresponse()

        def read() -> None:
            try:
                for raw in stream:
                    if raw.startswith(b"data: "):
                        views.put(json.loads(raw[6:]))
            except (OSError, ValueError, AttributeError):
                return  # the stream was closed at the end of the measurement

        threading.Thread(target=read, daemon=True).start()
        delays: list[float] = []

        def timed(verb: str, args: dict[str, object] | None, state: str) -> None:
            began = time.perf_counter()
            with ControlClient(sock) as client:
                client.request(verb, args)
            while views.get(timeout=10).get("state") != state:
                pass
            delays.append(time.perf_counter() - began)

        for number in range(rounds):
            timed("round.open", None, "betting")
            with ControlClient(sock) as client:
                client.request("wager.place", {"wager_id": f"w{number}", "position": "1",
                                               "bet": "ante", "amount": 500})
            timed("round.close", None, "decisions")
            timed("decide", {"position": "1", "choice": "fold"}, "dealt")
            timed("round.reveal", None, "revealed")
            timed("round.settle", None, "settled")
        connection.close()
    finally:
        for process in (web, service):
            if process is not None:
                process.terminate()
                process.wait(timeout=10)
    return {"screen_p50_ms": 1000 * statistics.median(delays),
            "screen_p95_ms": 1000 * _percentile(delays, 0.95),
            "screen_max_ms": 1000 * max(delays), "screen_samples": len(delays)}


def print_attacks(work: Path) -> int:
    """The memory under attack; exit 1 when the peak passes the unit's ``MemoryMax``."""
    from benchmarks.web_attacks import measure_attacks

    found = measure_attacks(work)
    print(json.dumps(found, indent=2))
    if found["peak_mb"] >= found["memory_max_mb"]:
        print(f"web: peak {found['peak_mb']:.0f} MB >= MemoryMax {found['memory_max_mb']:.0f} MB",
              file=sys.stderr)
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="journal directory to reuse (or create)")
    parser.add_argument("--rss-only", action="store_true", help="only the memory figure")
    parser.add_argument("--latency-only", action="store_true",
                        help="only the command-to-screen figure")
    parser.add_argument("--attacks-only", action="store_true",
                        help="only the memory under attack (uploads, streams, idle TLS)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="webbench"))
    try:
        journal = args.keep or work / "journal"
        if args.attacks_only:
            return print_attacks(work)
        if args.rss_only or args.latency_only:
            measured = measure_rss(work) if args.rss_only else measure_latency(work)
            for name, value in measured.items():
                print(f"{name}: {value:,.2f}" if isinstance(value, float) else f"{name}: {value:,}")
            return 0
        if not journal.exists() or not any(journal.glob("journal-*.jsonl")):
            began = time.perf_counter()
            count = write_synthetic_journal(journal, 0, records=args.records)
            print(f"journal: {count:,} records written in {time.perf_counter() - began:.1f} s")
        for name, value in {**measure_pages(journal, work), **measure_rss(work),
                            **measure_latency(work)}.items():
            print(f"{name}: {value:,.2f}" if isinstance(value, float) else f"{name}: {value:,}")
        attack = work / "attack"
        attack.mkdir()
        return print_attacks(attack)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
