"""Game protection: false alarms and power of every monitor against every shuffler model, the
live cost per card, and the integrity report's time (issue 15).

Decks are dealt straight from :mod:`firmware_sim.shuffle_models` into the monitors
(:class:`controller.protection.Guard`), seven three-card hands (21 cards) per deck, no ptys.

* ``false-alarms``: one long stream of fair decks; alarms per deck for each monitor.
* ``power``: for each faulty model, independent runs of ``--horizon`` decks; for each monitor
  the share of runs flagged within 1, 2, 5, 50 and ``horizon`` decks (by the deck the finding
  is about: a deck's scores are decided when the next shuffle closes it) and the median deck of
  the first finding.
* ``calibrate``: the CUSUM limits (numpy: fair decks' scores drawn exactly, 2,000,000 decks).
* ``cost``: the live guard's time per card (``TableGuard`` on ``CardSetDispensed`` events).
* ``report``: ``integrity report`` over 1,000,000 hands (decoded inputs; journal reading
  measured separately per record).

Run: ``python benchmarks/protection.py [--json] [--only power,cost] [--runs N] [--decks N]``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.games.cards import FULL_DECK  # noqa: E402
from controller.protection import Guard, MonitorId, TableGuard  # noqa: E402
from drivers import events as dev  # noqa: E402
from firmware_sim.shuffle_models import ShuffleModel, Shuffler  # noqa: E402

HANDS = 7
WITHIN = (1, 2, 5, 50)


def deal(guard: Guard, shuffler: Shuffler) -> list[Any]:
    """One deck: shuffle (the machine's own honest count), then seven hands."""
    return guard.deal(shuffler.order(), HANDS, shuffler.form)


def false_alarms(decks: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    shuffler, guard = Shuffler(ShuffleModel.FAIR, rng.randrange), Guard()
    alarms = dict.fromkeys((m.value for m in MonitorId), 0)
    started = time.perf_counter()
    for _ in range(decks):
        for found in deal(guard, shuffler):
            alarms[found.monitor.value] += 1
    for found in guard.finish():
        alarms[found.monitor.value] += 1
    return {"decks": decks, "seconds": round(time.perf_counter() - started, 1),
            "alarms": alarms, "per_deck": {m: n / decks for m, n in alarms.items()}}


def power(model: ShuffleModel, runs: int, horizon: int, seed: int) -> dict[str, Any]:
    first: dict[str, list[int | None]] = {m.value: [] for m in MonitorId}
    for run in range(runs):
        rng = random.Random(seed * 100_003 + run)
        shuffler, guard = Shuffler(model, rng.randrange), Guard()
        seen: dict[str, int] = {}
        for _ in range(horizon):
            for found in deal(guard, shuffler):
                seen.setdefault(found.monitor.value, found.decks)
        for found in guard.finish():
            seen.setdefault(found.monitor.value, found.decks)
        for monitor, decks in first.items():
            decks.append(seen.get(monitor))
    result: dict[str, Any] = {}
    for monitor, decks in first.items():
        hit = sorted(d for d in decks if d is not None)
        result[monitor] = {
            **{f"within_{n}": sum(1 for d in hit if d <= n) / runs
               for n in sorted({*(w for w in WITHIN if w < horizon), horizon})},
            "median_first": statistics.median(hit) if len(hit) * 2 > runs else None}
    return {"runs": runs, "horizon": horizon, "decks": runs * horizon, "monitors": result}


def calibrate(decks: int, seed: int) -> dict[str, Any]:
    import numpy as np

    from controller.protection.stats import eulerian_moments, valley_moments, valley_pmf

    rng = np.random.default_rng(seed)
    d = 3 * HANDS
    pmf = np.array(valley_pmf(d))
    mean, sd = valley_moments(d)
    one_pass = (mean - rng.choice(len(pmf), size=decks, p=pmf)) / sd
    perms = np.argsort(rng.random((decks, d)), axis=1)
    inverse = np.argsort(perms, axis=1)
    total = (perms[:, 1:] < perms[:, :-1]).sum(1) + (inverse[:, 1:] < inverse[:, :-1]).sum(1)
    emean, esd = eulerian_moments(d)
    sortedness = (2 * emean - total) / (esd * math.sqrt(2))
    out: dict[str, Any] = {"decks": decks, "cards": d}
    for name, scores in (("one_pass", one_pass), ("sortedness", sortedness)):
        rows = []
        for drift in (0.5, 1.0):
            for limit in (3.0, 4.0, 5.0, 6.0, 8.0):
                rows.append({"drift": drift, "limit": limit,
                             "per_deck": _cusum_rate(scores.tolist(), drift, limit)})
        out[name] = rows
    return out


def _cusum_rate(scores: list[float], drift: float, limit: float) -> float:
    value, alarms = 0.0, 0
    for score in scores:
        value = max(0.0, value + score - drift)
        if value > limit:
            alarms, value = alarms + 1, 0.0
    return alarms / len(scores)


def cost(decks: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    shuffler = Shuffler(ShuffleModel.FAIR, rng.randrange)
    stream: list[object] = []
    for _ in range(decks):
        order = shuffler.order()
        stream.append(dev.ShuffleDone("shuffler", counted=52))
        stream += [dev.CardSetDispensed("shuffler", cards=tuple(FULL_DECK[i] for i in
                                                                 order[3 * h:3 * h + 3]))
                   for h in range(HANDS)]
    guard = TableGuard()
    started = time.perf_counter()
    for item in stream:
        guard.before(item)
        guard.after(item)
    seconds = time.perf_counter() - started
    cards = decks * HANDS * 3
    return {"decks": decks, "cards": cards, "ms_per_card": round(seconds / cards * 1e3, 4),
            "ms_per_hand": round(seconds / (decks * HANDS) * 1e3, 4)}


def report_time(hands: int, seed: int) -> dict[str, Any]:
    from controller.analysis.integrity import Survey, render
    from controller.journal.reader import iter_records
    from controller.protection.tally import Surveyor

    decks = hands // HANDS
    rng = random.Random(seed)
    shuffler = Shuffler(ShuffleModel.FAIR, rng.randrange)
    surveyor = Surveyor()
    started = time.perf_counter()
    for _ in range(decks):
        order = shuffler.order()
        surveyor.see(dev.ShuffleDone("shuffler", counted=52))
        for h in range(HANDS):
            surveyor.see(dev.CardSetDispensed("shuffler", cards=tuple(
                FULL_DECK[i] for i in order[3 * h:3 * h + 3])))
    monitors = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        render(Survey(surveyor.totals()), Path(out))
        plots = time.perf_counter() - started
    reading = _journal_read_rate()
    return {"hands": decks * HANDS, "decks": decks, "monitors_seconds": round(monitors, 1),
            "plots_seconds": round(plots, 1), "journal_records_per_second": reading,
            "estimated_total_seconds": round(monitors + plots + (decks * (HANDS + 1)) /
                                             reading, 1) if reading else None}


def _journal_read_rate() -> float | None:
    """Records per second read and decoded from a bench journal (a real one, 30 rounds)."""
    from controller.bench import Bench
    from controller.journal.codec import decode_input
    from controller.journal.reader import iter_records

    with tempfile.TemporaryDirectory() as directory:
        Bench("rws-three-card-poker", 30, seed=1, journal_dir=directory).run()
        started = time.perf_counter()
        n = 0
        for record in iter_records([directory]):
            n += 1
            if record.event_type.startswith("input_"):
                decode_input(record.event_type, record.payload)
        return round(n / (time.perf_counter() - started))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", default="false-alarms,power,cost")
    parser.add_argument("--decks", type=int, default=200_000, help="fair decks for false alarms")
    parser.add_argument("--runs", type=int, default=200, help="runs per faulty model")
    parser.add_argument("--horizon", type=int, default=600, help="decks per run")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--models", default=",".join(m.value for m in ShuffleModel
                                                     if m is not ShuffleModel.FAIR))
    args = parser.parse_args()
    only = set(args.only.split(","))
    results: dict[str, Any] = {}
    if "calibrate" in only:
        results["calibrate"] = calibrate(2_000_000, args.seed)
    if "false-alarms" in only:
        results["false_alarms"] = false_alarms(args.decks, args.seed)
    if "power" in only:
        results["power"] = {model: power(ShuffleModel(model), args.runs, args.horizon,
                                         args.seed) for model in args.models.split(",")}
    if "cost" in only:
        results["cost"] = cost(20_000, args.seed)
    if "report" in only:
        results["report"] = report_time(1_000_000, args.seed)
    print(json.dumps(results, indent=1) if args.json else _text(results))
    return 0


def _text(results: dict[str, Any]) -> str:
    lines = []
    fa = results.get("false_alarms")
    if fa:
        lines.append(f"false alarms over {fa['decks']} fair decks ({fa['seconds']} s):")
        lines += [f"  {m:<12} {n:>5}  {fa['per_deck'][m]:.2e} per deck"
                  for m, n in fa["alarms"].items()]
    for model, row in results.get("power", {}).items():
        lines.append(f"{model}: {row['runs']} runs x {row['horizon']} decks")
        for monitor, r in row["monitors"].items():
            lines.append(f"  {monitor:<12} " + " ".join(f"{k}={v}" for k, v in r.items()))
    for key in ("cost", "report", "calibrate"):
        if key in results:
            lines.append(f"{key}: {json.dumps(results[key])}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
