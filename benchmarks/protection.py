"""Game protection: false alarms and power of every monitor against every shuffler model, the
live cost per card, and the integrity report's time (issue 15).

Decks are dealt straight from :mod:`firmware_sim.shuffle_models` into the monitors
(:class:`controller.protection.Guard`), seven three-card hands (21 cards) per deck, no ptys.

* ``false-alarms``: one long stream of fair decks; alarms per deck for each monitor.
* ``power``: for each faulty model, independent runs of ``--horizon`` decks; for each monitor
  the share of runs flagged within 1, 2, 5, 50 and ``horizon`` decks (by the deck the finding
  is about: a deck's scores are decided when the next shuffle closes it) and the median deck of
  the first finding.
* ``calibrate``: the CUSUM limits from the monitors' own scores (``--decks`` fair decks).
* ``false-alarms-by-hands``: the same for every number of hands a deck deals (2 to 9), since
  a table's number of players changes the length of what is scored.
* ``sortedness-variance``: the table ``limits.SORTEDNESS_VARIANCE`` (200,000 decks a length).
* ``goals``: issue 25's goals at every table size (9 to 27 cards, and the bench's mixed
  sizes of 3 to 18 cards), the shuffler fed a new deck or the cards the table collected: the
  10-shelf one-pass machine within 5 decks (and the likelihood information a deck carries, so
  the optimal test's figure stands beside it), a card stuck at one position within 10, a
  duplicated card within 5 (and the most any test on the dealt cards can reach), and false
  alarms per monitor over ``--decks`` fair decks.
* ``lr-calibration``: ``limits.ONE_PASS_LR_ALONE``, the likelihood CUSUMs' limits fed a new
  deck, one per shelf count and deck length, for 1e-4 false alarms a fair deck (importance
  sampling, ``--excursions`` a rate); ``lr-check``: the rate the monitor's limits give, its
  shelf counts together, at every size.
* ``lr-count``: the likelihood monitor's false alarms counted over ``--decks`` fair decks fed a
  new deck, at 9 and 21 cards.
* ``lr-window``: ``limits.ONE_PASS_LR_WINDOW``, the window test's limits (importance sampling,
  ``--samples`` windows a deck length).
* ``lr-power``: issue 38's figures: ``one_pass_lr`` against the 10-shelf machine fed a new
  deck at 9, 12, 15 and 21 cards, within 5 and 7 decks, beside the bound (the exact 10-shelf
  likelihood test on that many decks at 1e-4, ``--samples`` sums) and a CUSUM alone.
* ``cost``: the live guard's time per card (``TableGuard`` on ``CardSetDispensed`` events).
* ``report``: the report's monitors and plots over 1,000,000 hands (decoded inputs; journal
  reading measured separately per record).
* ``report-journal``: ``tablectl integrity report`` as a process over a real-shaped journal of
  ``--hands`` hands (1,000,000: about 15 million records), and the report's way of reading
  against a full parse, side by side.

The short-deck power part (``goals``, ``lr-calibration``, ``lr-check``, ``lr-power``) is
``benchmarks/short_decks.py``, run from here.

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
from controller.logsetup import configure_logging  # noqa: E402
from controller.protection import Guard, MonitorId, TableGuard  # noqa: E402
from drivers import events as dev  # noqa: E402
from controller.protection.feed import Feed  # noqa: E402
from firmware_sim.shuffle_models import ShuffleModel, Shuffler  # noqa: E402
from benchmarks.short_decks import (  # noqa: E402
    SIZES,
    goals,
    lr_calibration,
    lr_check,
    lr_fair_count,
    lr_power,
    lr_window_calibration,
)

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
    """CUSUM false alarms per deck for a grid of drifts and limits, from the monitors' own
    scores (``OnePass.score``, ``SortednessMonitor.score``) of ``decks`` fair 21-card decks."""
    from controller.protection.monitors import OnePass, SortednessMonitor

    rng = random.Random(seed)
    d = 3 * HANDS
    one_pass, sortedness = OnePass(), SortednessMonitor()
    scores: dict[str, list[float]] = {"one_pass": [], "sortedness": []}
    for _ in range(decks):
        cards = rng.sample(range(52), d)
        scores["one_pass"].append(one_pass.score(cards))
        scores["sortedness"].append(sortedness.score(cards))
    out: dict[str, Any] = {"decks": decks, "cards": d}
    for name, values in scores.items():
        out[name] = [{"drift": drift, "limit": limit,
                      "per_deck": _cusum_rate(values, drift, limit)}
                     for drift in (0.5, 1.0) for limit in (3.0, 4.0, 5.0, 6.0, 8.0)]
    return out


def sortedness_variance(decks: int) -> dict[int, float]:
    """limits.SORTEDNESS_VARIANCE: the variance of the sortedness score's summed halves over
    ``decks`` fair decks of each length from 9 to 52 cards (seeded per length)."""
    from controller.protection.stats import descent_z, descents, rising_sequences

    table = {}
    for n in range(9, 53):
        rng = random.Random(1000 + n)
        scores = []
        for _ in range(decks):
            cards = rng.sample(range(52), n)
            scores.append((descent_z(n, descents(cards))
                           + descent_z(n, rising_sequences(cards) - 1)) / math.sqrt(2))
        table[n] = round(statistics.pvariance(scores), 3)
    return table


def false_alarms_by_hands(decks: int, seed: int) -> dict[int, dict[str, Any]]:
    """False alarms per fair deck for each number of hands a table deals (2 to 9 three-card
    sets a deck: 6 to 27 cards), ``decks`` decks each."""
    out = {}
    for hands in range(2, 10):
        rng = random.Random(seed * 100 + hands)
        shuffler, guard = Shuffler(ShuffleModel.FAIR, rng.randrange), Guard()
        alarms = dict.fromkeys((m.value for m in MonitorId), 0)
        for _ in range(decks):
            for found in guard.deal(shuffler.order(), hands, shuffler.form):
                alarms[found.monitor.value] += 1
        out[hands] = {"decks": decks, "cards": 3 * hands,
                      "per_deck": {m: round(n / decks, 7) for m, n in alarms.items()}}
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


def report_journal(hands: int, seed: int, keep: Path | None = None) -> dict[str, Any]:
    """``tablectl integrity report`` itself (a child process) over a journal of ``hands``
    hands: the records of a real 200-round RWS-3CP bench journal, round after round again,
    re-sealed in one chain and rotated at 64 MiB like the writer's files, each round's card sets
    taken in order from a fresh fair shuffle. Also, side by side on the first file: records per
    second read the report's way (``only=`` its kinds) and by a full parse."""
    import resource
    import subprocess

    from controller.bench import Bench
    from controller.journal.files import file_name
    from controller.journal.reader import iter_records
    from controller.analysis.integrity import SURVEYED_EVENTS
    from controller.journal.record import GENESIS_HASH, canonical_json, seal, to_jsonable

    with tempfile.TemporaryDirectory() as scratch:
        work = keep or Path(scratch)
        source = work / "source"
        Bench("rws-three-card-poker", 200, seed=seed, journal_dir=source).run()
        by_round: dict[str, list[dict[str, Any]]] = {}
        for record in iter_records([source]):
            if record.round_id is not None:
                by_round.setdefault(record.round_id, []).append(record.body())
        templates = list(by_round.values())
        journal = work / "journal"
        journal.mkdir()
        rng = random.Random(seed)
        started = time.perf_counter()
        prev, seq, written_hands, files, size = GENESIS_HASH, 0, 0, 1, 0
        out = (journal / file_name(files)).open("wb")
        rounds = 0
        while written_hands < hands:
            deck = list(FULL_DECK)
            rng.shuffle(deck)
            dealt = 0
            for body in templates[rounds % len(templates)]:
                body = dict(body)
                payload = body["payload"]
                if body["event"] == "input_device" and payload.get("type") == "CardSetDispensed":
                    fields = dict(payload["fields"])
                    fields["cards"] = [to_jsonable(card) for card in deck[dealt:dealt + 3]]
                    dealt += 3
                    written_hands += 1
                    body["payload"] = {**payload, "fields": fields}
                seq += 1
                body["seq"], body["prev"] = seq, prev
                sealed = seal(body, None)
                prev = sealed["hash"]
                line = canonical_json(sealed).encode() + b"\n"
                if size + len(line) > 64 * 1024 * 1024:
                    out.close()
                    files, size = files + 1, 0
                    out = (journal / file_name(files)).open("wb")
                out.write(line)
                size += len(line)
            rounds += 1
        out.close()
        generated = time.perf_counter() - started
        first = journal / file_name(1)
        started = time.perf_counter()
        full = sum(1 for _ in iter_records([first]))
        full_s = time.perf_counter() - started
        started = time.perf_counter()
        sum(1 for _ in iter_records([first], only=SURVEYED_EVENTS))
        only_s = time.perf_counter() - started
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "controller", "integrity", "report",
                                 str(journal), "--out", str(work / "report")],
                                capture_output=True, text=True, check=True)
        report_s = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        total_bytes = sum(p.stat().st_size for p in journal.iterdir())
    return {"hands": written_hands, "records": seq, "rounds": rounds, "files": files,
            "journal_mb": round(total_bytes / 2**20), "generated_seconds": round(generated, 1),
            "report_seconds": round(report_s, 1), "report_peak_rss_mb": round(peak_mb),
            "report_said": result.stdout.splitlines(),
            "first_file_records_per_second": {
                "full_parse": round(full / full_s), "report_kinds_only": round(full / only_s),
                "ratio": round(full_s / only_s, 1)}}


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
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES),
                        help="goals: three-card sets a deck (3..9) or 'mixed'")
    parser.add_argument("--feeds", default="new-deck,collected", help="goals: feeds")
    parser.add_argument("--hands", type=int, default=1_000_000,
                        help="hands in the report-journal journal")
    parser.add_argument("--samples", type=int, default=40_000,
                        help="lr-window, lr-power: windows drawn for a fair tail")
    parser.add_argument("--excursions", type=int, default=10_000,
                        help="lr-calibration: importance-sampled excursions a rate")
    parser.add_argument("--models", default=",".join(m.value for m in ShuffleModel
                                                     if m is not ShuffleModel.FAIR))
    args = parser.parse_args()
    configure_logging("WARNING")  # the bench tables' device chatter stays out of the figures
    only = set(args.only.split(","))
    results: dict[str, Any] = {}
    if "calibrate" in only:
        results["calibrate"] = calibrate(args.decks, args.seed)
    if "false-alarms" in only:
        results["false_alarms"] = false_alarms(args.decks, args.seed)
    if "power" in only:
        results["power"] = {model: power(ShuffleModel(model), args.runs, args.horizon,
                                         args.seed) for model in args.models.split(",")}
    if "sortedness-variance" in only:
        results["sortedness_variance"] = sortedness_variance(200_000)
    if "false-alarms-by-hands" in only:
        results["false_alarms_by_hands"] = false_alarms_by_hands(args.decks, args.seed)
    if "goals" in only:
        sizes = tuple(int(s) if s.isdigit() else s for s in args.sizes.split(","))
        results["goals"] = goals(args.runs, args.decks, args.seed,
                                 tuple(Feed(f) for f in args.feeds.split(",")), sizes)
    if "cost" in only:
        results["cost"] = cost(20_000, args.seed)
    if "report" in only:
        results["report"] = report_time(1_000_000, args.seed)
    if "report-journal" in only:
        results["report_journal"] = report_journal(args.hands, args.seed)
    if "lr-calibration" in only:
        results["lr_calibration"] = lr_calibration(args.excursions, args.seed)
    if "lr-check" in only:
        results["lr_check"] = lr_check(args.excursions, args.seed)
    if "lr-count" in only:
        results["lr_count"] = lr_fair_count(args.decks, args.seed)
    if "lr-window" in only:
        results["lr_window"] = lr_window_calibration(args.samples, args.seed)
    if "lr-power" in only:
        results["lr_power"] = lr_power(args.runs, args.seed, samples=args.samples)
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
    power = results.get("lr_power")
    if power:
        lines.append("one_pass_lr against the bound (the exact 10-shelf likelihood test on that "
                     "many decks at 1e-4), one-pass 10-shelf fed a new deck; budget shares "
                     f"{power['shares']}, windows {power['window_shares']}:")
        for cards, row in power["cards"].items():
            within = "; ".join(
                f"within {n} {row[f'within_{n}']:.3f} (bound {row[f'bound_within_{n}']:.3f}, "
                f"gap {row[f'bound_within_{n}'] - row[f'within_{n}']:.3f}; on the same decks "
                f"{row[f'paired_bound_within_{n}']:.3f}, gap "
                f"{row[f'paired_bound_within_{n}'] - row[f'within_{n}']:.3f}; a CUSUM alone "
                f"{row[f'cusum_within_{n}']:.3f})" for n in (5, 7))
            lines.append(f"  {cards:>2} cards, {row['runs']} runs: {within}; limits: CUSUM "
                         f"{row['monitor_limit']}, windows {row['window_limits']}, bound's "
                         f"{row['bound_limit_5']} / {row['bound_limit_7']}")
    if "lr_count" in results:
        lines.append(f"lr_count: {json.dumps(results['lr_count'])}")
    if "lr_window" in results:
        lines.append(f"lr_window: {json.dumps(results['lr_window'])}")
    for key in ("cost", "report", "report_journal", "calibrate", "false_alarms_by_hands",
                "sortedness_variance", "lr_calibration", "lr_check"):
        if key in results:
            lines.append(f"{key}: {json.dumps(results[key])}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
