"""A floor on this machine: Mosquitto (TLS, per-table certificates, ACL), two bench tables
(RWS-3CP and MBS-3P, 20 rounds each, their journals under the ids T1 and T2), a feed process
per table, the floor consumer on SQLite, then ``tablectl floor status``.

Needs ``mosquitto`` and ``openssl`` (Debian: ``apt-get install -y mosquitto openssl``).
Run: ``.venv/bin/python examples/floor_demo.py [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.bench import Bench  # noqa: E402
from controller.logsetup import configure_logging  # noqa: E402
from testbed.floorlab import Mosquitto, feed_config, floor_config, make_pki  # noqa: E402
from testbed.journalgen import rehome, write_all  # noqa: E402

TABLES = {"T1": "rws-three-card-poker", "T2": "mbs-three-pictures"}


def _tablectl(*args: str, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "controller", "--log-level", "INFO", *args],
                            cwd=ROOT, stderr=log.open("ab"), stdout=subprocess.DEVNULL)


def demo(work: Path) -> int:
    expected = 0
    for table, game in TABLES.items():
        print(f"bench table {table}: {game}, 20 rounds", flush=True)
        Bench(game, 20, seed=1, journal_dir=work / f"bench-{table}").run()
        lines = rehome(work / f"bench-{table}", table)
        write_all(work / f"journal-{table}", lines)
        expected += len(lines)
    pki = make_pki(work / "pki", [*TABLES, "floor"])
    (work / "broker").mkdir()
    broker = Mosquitto(work / "broker", pki)
    broker.start()
    print(f"mosquitto: TLS on 127.0.0.1:{broker.port}, ACL {work / 'broker' / 'acl'}")
    processes = []
    try:
        config = floor_config(work, pki, broker)
        processes.append(_tablectl("floor", "--config", str(config), log=work / "floor.log"))
        deadline = time.monotonic() + 30
        while b"floor subscribed" not in (work / "floor.log").read_bytes():
            if time.monotonic() > deadline:
                raise SystemExit("the floor did not subscribe; see " + str(work / "floor.log"))
            time.sleep(0.1)
        for table in TABLES:
            processes.append(_tablectl("feed", "--config", str(feed_config(
                work, pki, broker, table, work / f"journal-{table}")), log=work / "feed.log"))
        deadline = time.monotonic() + 120
        applied = 0
        while applied < expected and time.monotonic() < deadline:
            time.sleep(0.5)
            with sqlite3.connect(work / "floor.sqlite3") as db:
                applied = db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        print(f"floor applied {applied} of {expected} records")
        subprocess.run([sys.executable, "-m", "controller", "floor", "status", "--config",
                        str(config)], cwd=ROOT, check=False)
        return 0 if applied == expected else 1
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
        broker.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", default=None, help="work in this directory and keep it")
    args = parser.parse_args()
    configure_logging("WARNING")  # the bench tables' device chatter would bury the floor view
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        return demo(Path(args.keep))
    with tempfile.TemporaryDirectory(prefix="tablectl-floor-demo-") as work:
        return demo(Path(work))


if __name__ == "__main__":
    raise SystemExit(main())
