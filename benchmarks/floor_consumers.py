"""Floor consumers benchmark (issue 37): one site's records shared by a group of floor
consumers (an MQTT 5 shared subscription on Mosquitto) applying into one PostgreSQL.

Three parts, one run, each on a fresh database of one private PostgreSQL (``initdb``/``pg_ctl``,
as the tests start it) behind one Mosquitto (TLS, the ACL):

* **Scaling**: 1, 2 and 4 consumers (``tablectl floor`` processes of one ``group``), the same
  offered load each time: K generator processes (``benchmarks/feed.py``'s direct generator:
  each table's own TLS identity, the feed's topic, message and signature, QoS 1) publish
  ``--tables`` tables at ``--pace`` records/s per table for ``--seconds``; the figure is
  records applied per CPU-second of the consumers (their ``utime + stime`` from ``/proc``,
  summed, until the last record is applied) and the wall time to apply them.
* **Sustained rate**: 2 consumers beside the generators at each ``--rates`` offered rate; a
  rate is sustained when the generators published what was offered (95 %), the
  publish-to-applied p99 stays under 1 s and the floor has everything 2 s after they stop.
* **Take-over**: ``--takeover-tables`` tables, each with its real feed (``python -m
  controller.feed``) following a journal written live, 2 consumers; one SIGKILLed mid-stream.
  The figures: seconds from the kill until every record written before it is applied (what the
  dead one held is asked for again from the feeds, ``docs/feed.md``), and until every table
  has applied a record written after it (the dead one's tables moving again: with leases, once
  they expired and were taken over); ``--kills`` times, a new consumer started after each kill
  (an added consumer taking its share).

Each part runs once per ``--assign`` mode: ``shared`` (the broker hands each record to one
consumer) and ``lease`` (each table leased to one consumer, ``controller.floor.leases``).

Every run checks its records: none lost (each table's seqs 1..n, the generator's count), none
applied twice (the (table, seq) key; duplicates dropped are counted), none out of order (in
each table, ``applied_ns`` grows with ``seq``), no problem reported.

The machine is shared: wall-clock figures are noisy; CPU-seconds are the figure to compare.

Run: ``python benchmarks/floor_consumers.py [--tables 40 --pace 25 --seconds 20
--consumers 1,2,4 --assign shared,lease --rates 500,1000,2000 --takeover-tables 6 --kills 5]
[--json]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.feed import _generate, _pct, _proc  # noqa: E402
from testbed.floorlab import (  # noqa: E402
    Mosquitto,
    feed_config,
    floor_config,
    make_pki,
    start_program,
)
from controller.bench import Bench  # noqa: E402
from controller.feed.config import Assign  # noqa: E402
from controller.logsetup import configure_logging  # noqa: E402
from testbed.journalgen import rehome, write_live  # noqa: E402

GROUP = "floor"
DRAIN_S = 300.0
"""How long a run may take to apply its backlog after the generators stop, at most."""
START_S = 30.0


def with_assign(path: Path, assign: Assign) -> Path:
    """A group consumer's file (``floorlab.floor_config``) dividing the tables by ``assign``."""
    path.write_text(path.read_text().replace("[floor]\n", f'[floor]\nassign = "{assign.value}"\n',
                                             1))
    return path


class Lab:
    """The broker, the PostgreSQL server, the PKI and the journal lines of every table."""

    def __init__(self, work: Path, tables: int, takeover_tables: int) -> None:
        from testbed.postgres import Postgres

        self.work = work
        self.names = [f"T{i:03d}" for i in range(max(tables, takeover_tables))]
        source = work / "bench-journal"
        Bench("rws-three-card-poker", 60, seed=7, faults="0.1", journal_dir=source).run()
        self.lines = [rehome(source, name) for name in self.names]
        self.pki = make_pki(work / "pki", [*self.names, "floor"])
        (work / "broker").mkdir()
        self.broker = Mosquitto(work / "broker", self.pki)
        self.broker.start()
        self.postgres = Postgres()
        self.postgres.start()
        self.runs = 0

    def database(self) -> str:
        """A new, empty database on the server for one run."""
        import psycopg

        self.runs += 1
        name = f"floor_run{self.runs}"
        with psycopg.connect(self.postgres.url, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.postgres.url.rsplit("/", 1)[0] + f"/{name}"

    def consumers(self, database: str, count: int, first: int = 0,
                  assign: Assign = Assign.SHARED) -> list[subprocess.Popen[bytes]]:
        """``count`` consumers of the group on ``database`` (numbered from ``first``), each
        subscribed (bounded); with leases, until every consumer holds some."""
        run = self.work / f"run{self.runs}"
        run.mkdir(exist_ok=True)
        procs = []
        for index in range(first, first + count):
            config = with_assign(floor_config(run, self.pki, self.broker, database,
                                              group=GROUP, consumer=str(index)), assign)
            log = run / f"floor-{index}.log"
            procs.append(start_program(["controller", "--log-level", "INFO", "floor",
                                        "--config", str(config)], log))
        deadline = time.monotonic() + START_S
        while not all(b"floor subscribed" in (run / f"floor-{i}.log").read_bytes()
                      for i in range(first, first + count)):  # bounded start-up
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError("a consumer did not subscribe: see " + str(run))
            time.sleep(0.1)
        names = [f"tablectl-floor-{index}" for index in range(first, first + count)]
        if assign is Assign.LEASE and _wait(lambda: _holders(database, names) == count,
                                            START_S) == float("inf"):
            raise RuntimeError("a consumer holds no lease: see " + str(run))
        return procs

    def close(self) -> None:
        self.broker.stop()
        self.postgres.stop()


def _cpu(procs: list[subprocess.Popen[bytes]]) -> float:
    return sum(_proc(p.pid)["cpu_s"] for p in procs if p.poll() is None)


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def _query(database: str, text: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(database) as connection:
        return list(connection.execute(text).fetchall())


def _holders(database: str, names: list[str]) -> int:
    """How many of the consumers ``names`` (their client ids, before ``-<host>-<pid>``) hold
    a live lease."""
    import psycopg

    with psycopg.connect(database) as connection:
        return int(connection.execute(
            "SELECT COUNT(DISTINCT consumer) FROM floor_leases WHERE expires > "
            "clock_timestamp() AND consumer LIKE ANY(%s)",
            ([f"{name}-%" for name in names],)).fetchone()[0])


def _applied(database: str) -> int:
    return int(_query(database, "SELECT COUNT(*) FROM records")[0][0])


def _wait(probe: Any, bound: float) -> float:
    """Poll ``probe`` until true or ``bound`` s: the seconds it took (``inf`` if never)."""
    began = time.monotonic()
    while time.monotonic() - began < bound:
        if probe():
            return time.monotonic() - began
        time.sleep(0.2)
    return float("inf")


def integrity(database: str, published: dict[str, int] | None) -> dict[str, int]:
    """Lost, applied twice, out of order and problems, from the database (``published``: the
    records each table sent, when known)."""
    rows = _query(database, "SELECT table_id, COUNT(*), COUNT(DISTINCT seq), MIN(seq), "
                            "MAX(seq) FROM records GROUP BY table_id")
    lost = sum(int(last) - int(count) + int(first) - 1 for _, count, _, first, last in rows)
    if published is not None:
        have = {table: int(last) for table, _, _, _, last in rows}
        lost += sum(max(0, sent - have.get(table, 0)) for table, sent in published.items())
    twice = sum(int(count) - int(distinct) for _, count, distinct, _, _ in rows)
    out_of_order = _query(database, """
        SELECT COUNT(*) FROM (SELECT applied_ns < LAG(applied_ns) OVER (
            PARTITION BY table_id ORDER BY seq) AS back FROM records) AS s WHERE back""")[0][0]
    return {"lost": lost, "applied_twice": twice, "out_of_order": int(out_of_order),
            "problems": int(_query(database, "SELECT COUNT(*) FROM problems")[0][0]),
            "duplicates_dropped": int(_query(
                database, "SELECT COALESCE(SUM(duplicates), 0) FROM tables")[0][0]),
            "records_bytes_per_record": round(float(_query(
                database, "SELECT pg_total_relation_size('records')::float8 "
                          "/ GREATEST(COUNT(*), 1) FROM records")[0][0]))}


def generated(lab: Lab, database: str, consumers: int, tables: int, pace: float,
              seconds: float, generators: int, assign: Assign) -> dict[str, Any]:
    """``consumers`` consumers, generators offering ``tables * pace`` records/s for
    ``seconds``; everything applied, then the figures."""
    procs = lab.consumers(database, consumers, assign=assign)
    try:
        context = multiprocessing.get_context("fork")
        counters = [context.Value("q", 0, lock=False) for _ in range(generators)]
        chunks = [list(range(tables))[g::generators] for g in range(generators)]
        gens = [context.Process(target=_generate, args=(
            [lab.names[i] for i in chunk], [lab.lines[i] for i in chunk], 1.0 / pace, seconds,
            lab.work / f"run{lab.runs}", lab.pki, lab.broker, counters[g]))
            for g, chunk in enumerate(chunks)]
        cpu_before = [_cpu([p]) for p in procs]
        for gen in gens:
            gen.start()
        for gen in gens:
            gen.join(timeout=seconds + 120)
        expected = sum(counter.value for counter in counters)
        _wait(lambda: _applied(database) >= expected, DRAIN_S)
        cpu_each = [_cpu([p]) - before for p, before in zip(procs, cpu_before, strict=True)]
        cpu_s = sum(cpu_each)
        (first_sent, last_sent, last_applied), = _query(
            database, "SELECT MIN(sent_ns), MAX(sent_ns), MAX(applied_ns) FROM records")
        published = {}
        for g, chunk in enumerate(chunks):  # a generator publishes its tables step by step
            steps, extra = divmod(counters[g].value, len(chunk))
            published |= {lab.names[i]: steps + (1 if k < extra else 0)
                          for k, i in enumerate(chunk)}
        latency = [(a - s) / 1e6 for s, a in _query(
            database, "SELECT sent_ns, applied_ns FROM records WHERE sent_ns IS NOT NULL")]
        applied = _applied(database)
        return {
            "assign": assign.value, "consumers": consumers, "tables": tables,
            "offered_per_s": round(tables * pace),
            "published": expected,
            "published_per_s": round(expected / max((last_sent - first_sent) / 1e9, 1e-9)),
            "applied": applied, "consumer_cpu_s": round(cpu_s, 1),
            "consumer_cpu_s_each": [round(c, 1) for c in cpu_each],
            "records_per_cpu_s": round(applied / max(cpu_s, 1e-9)),
            "applied_per_wall_s": round(applied / max((last_applied - first_sent) / 1e9, 1e-9)),
            "caught_up_s_after_stop": round(max(0, last_applied - last_sent) / 1e9, 1),
            "publish_to_applied_ms": {"p50": _pct(latency, 50), "p99": _pct(latency, 99)},
            **integrity(database, published),
        }
    finally:
        _stop(procs)


def takeover(lab: Lab, database: str, tables: int, pace: float, kills: int,
             assign: Assign) -> dict[str, Any]:
    """Real feeds following live journals, 2 consumers; ``kills`` times the older consumer is
    SIGKILLed mid-stream and a new one started (an added consumer joining the group)."""
    run = lab.work / f"run{lab.runs}"
    run.mkdir(exist_ok=True)
    names = lab.names[:tables]
    # about 15 s of stream per kill, ending with a round's end: a journal cut inside a round
    # keeps its dealer's face-down card, and what follows it, on the table (the hold rule)
    count = max(i + 1 for i, line in enumerate(lab.lines[0][:int(pace * 15 * (kills + 1))])
                if json.loads(line)["event"] in ("round_settled", "round_voided"))
    procs = lab.consumers(database, 2, assign=assign)
    written = dict.fromkeys(names, 0)
    stop = threading.Event()

    def write() -> None:
        streams = {n: write_live(run / f"journal-{n}", lab.lines[i][:count], 1.0 / pace)
                   for i, n in enumerate(names)}
        while streams and not stop.is_set():
            for name, stream in list(streams.items()):
                value = next(stream, None)
                if value is None:
                    del streams[name]
                else:
                    written[name] = value

    def heads() -> dict[str, int]:
        return dict(_query(database, "SELECT table_id, last_seq FROM tables"))

    writer = threading.Thread(target=write, name="bench-journal-writer")
    writer.start()
    feeds = [start_program(["controller.feed", "--config", str(feed_config(
        run, lab.pki, lab.broker, n, run / f"journal-{n}"))], run / f"feed-{n}.log")
        for n in names]
    take_over: list[float] = []
    resumed: list[float] = []
    try:
        for kill in range(kills):
            _wait(lambda k=kill: _applied(database) >= tables * count * (k + 1) // (kills + 1),
                  120)
            victim = procs.pop(0)
            victim.kill()  # SIGKILL, mid-stream
            before = dict(written)
            victim.wait(timeout=30)
            killed_at = time.monotonic()
            take_over.append(_wait(
                lambda b=before: all(heads().get(n, 0) >= b[n] for n in names), DRAIN_S))
            # every table moving again (the dead one's too): a record written after the kill
            # applied (its seconds from the kill: the wait above is part of it)
            _wait(lambda b=before: all(heads().get(n, 0) >= min(b[n] + 1, count)
                                       for n in names), DRAIN_S)
            resumed.append(time.monotonic() - killed_at)
            procs += lab.consumers(database, 1, first=kill + 2, assign=assign)  # one joins
        _wait(lambda: heads() == dict.fromkeys(names, count), DRAIN_S)
        asks = sum((run / f"feed-{n}.log").read_bytes().count(b"feed resending at the floor")
                   for n in names)
        return {"assign": assign.value, "tables": tables, "records_per_s": round(tables * pace),
                "records": tables * count, "kills": kills,
                "take_over_s": [round(t, 2) for t in take_over],
                "take_over_s_max": round(max(take_over, default=0.0), 2),
                "resumed_s": [round(t, 2) for t in resumed],
                "resumed_s_max": round(max(resumed, default=0.0), 2),
                "resends_asked": asks, **integrity(database, dict.fromkeys(names, count))}
    finally:
        stop.set()
        writer.join(timeout=60)
        _stop([*feeds, *procs])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--pace", type=float, default=25.0,
                        help="records/s per table in the scaling runs (default 25)")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--generators", type=int, default=2)
    parser.add_argument("--consumers", default="1,2,4")
    parser.add_argument("--assign", default="shared,lease",
                        help="how the group divides the tables, each mode in turn "
                             "(shared, lease; default both)")
    parser.add_argument("--rates", default="500,1000,2000",
                        help="offered records/s for the sustained-rate runs with 2 consumers")
    parser.add_argument("--takeover-tables", type=int, default=6)
    parser.add_argument("--takeover-pace", type=float, default=20.0)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    configure_logging("WARNING")
    try:
        modes = [Assign(mode) for mode in args.assign.split(",") if mode]
    except ValueError as error:
        parser.error(f"--assign: {error}; use shared, lease")
    results: dict[str, Any] = {"scaling": [], "sustained_2_consumers": [], "takeover": []}
    with tempfile.TemporaryDirectory(prefix="tablectl-floor-consumers-") as work:
        lab = Lab(Path(work), args.tables, args.takeover_tables)
        try:
            for consumers in (int(c) for c in args.consumers.split(",") if c):
                for mode in modes:  # side by side: the box's load changes over a run
                    results["scaling"].append(generated(
                        lab, lab.database(), consumers, args.tables, args.pace, args.seconds,
                        args.generators, mode))
                    _show(results["scaling"][-1], args.json)
            for rate, mode in ((int(r), m) for r in args.rates.split(",") if r for m in modes):
                row = generated(lab, lab.database(), 2, args.tables, rate / args.tables,
                                args.seconds, args.generators, mode)
                row["sustained"] = (row["published"] >= 0.95 * rate * args.seconds
                                    and row["publish_to_applied_ms"]["p99"] < 1000
                                    and row["caught_up_s_after_stop"] <= 2)
                results["sustained_2_consumers"].append(row)
                _show(row, args.json)
            for mode in modes if args.takeover_tables else []:
                results["takeover"].append(takeover(lab, lab.database(), args.takeover_tables,
                                                    args.takeover_pace, args.kills, mode))
                _show(results["takeover"][-1], args.json)
        finally:
            lab.close()
    if args.json:
        print(json.dumps(results))
    return 0


def _show(row: dict[str, Any], quiet: bool) -> None:
    if not quiet:
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
