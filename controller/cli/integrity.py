"""``tablectl integrity report JOURNAL... [--out DIR] [--json]``: the game-protection monitors
over journals, with plots and tables for surveillance (see :mod:`controller.analysis.integrity`),
and, when a monitor flagged a biased shuffle order, the risk in money per bet of the table's
game (:mod:`controller.analysis.risk`).

Paths that hold no journal record (a file of zeros, another program's file) are refused by name
before anything is read or written: the report over them said "0 decks" and exit 0, the same
as a journal whose table dealt nothing."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from controller.analysis.integrity import SURVEYED_EVENTS, render, summary_json, survey
from controller.analysis.risk import REPORT_DEALS, flagged_shelves, lines, risk_reports
from controller.cli.argtypes import nonempty_path
from controller.errors import RequestError
from controller.journal.damage import check_line
from controller.journal.errors import JournalFormatError
from controller.journal.files import expand_paths, read_lines
from controller.journal.reader import iter_records
from controller.journal.record import Record
from controller.protection.feed import Feed


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"at least 2 deals are needed, got {value}")
    return value


def _boxes_dealt(games: dict[str, int], hands: int, decks: int) -> dict[str, int]:
    """Each game's boxes as its decks dealt them on average (the hands a deck dealt, less the
    dealer's), at most the layout's: the risk is that of the table as it was played."""
    if not decks:
        return games
    typical = max(1, round(hands / decks) - 1)
    return {game: min(boxes, typical) if boxes else typical for game, boxes in games.items()}


def _holds_a_record(path: Path) -> bool:
    """Whether a line of ``path`` is a sound journal record (read until the first: a
    journal's first line is one)."""
    for _number, raw, terminated in read_lines(path):
        if terminated and raw.startswith(b'{"') and isinstance(check_line(raw, None), Record):
            return True
    return False


def _not_journals(paths: list[Path]) -> list[str]:
    """The paths given that hold no journal record: each that holds bytes but no record (an
    empty journal file, the newest just rotated, is a journal with nothing in it yet), or
    every path when none holds a record at all. A journal's bookkeeping files
    (``journal.head``, given by ``DIR/*``) are not record files and are passed over."""
    held = False
    without: list[str] = []
    for item in paths:
        files = expand_paths([item])
        if any(_holds_a_record(path) for path in files):
            held = True
        elif any(path.stat().st_size for path in files):  # none: bookkeeping files
            without.append(str(item))
    return without if held else [str(item) for item in paths]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "integrity", help="game protection: the card-stream monitors over journals")
    actions = parser.add_subparsers(dest="action", required=True, parser_class=type(parser))
    report = actions.add_parser("report", help="plots and tables for surveillance")
    report.add_argument("paths", nargs="+", metavar="JOURNAL", type=nonempty_path,
                        help="journal files or directories")
    report.add_argument("--out", type=nonempty_path, default="integrity-report",
                        help="directory for the plots and report.md (default integrity-report)")
    report.add_argument("--feed", choices=[feed.value for feed in Feed],
                        default=Feed.COLLECTED_REVERSED.value,
                        help="how the table fed its shuffler, as its [protection] feed says "
                             "(default collected-reversed, the table default; the bench: "
                             "new-deck)")
    report.add_argument("--risk-deals", type=_positive, default=REPORT_DEALS,
                        help="simulated deals for the risk in money of a flagged machine "
                             f"(default {REPORT_DEALS})")
    report.add_argument("--risk-seed", type=int, default=0,
                        help="seed of the risk simulation (default 0: the same figures "
                             "every run)")
    report.add_argument("--json", action="store_true",
                        help="print report.json's content instead of the text summary")
    report.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    feed = Feed(args.feed)
    not_journals = _not_journals(args.paths)
    if not_journals:
        raise JournalFormatError(
            f"no journal records in {', '.join(not_journals)}: "
            f"{'not a journal' if len(not_journals) == 1 else 'not journals'} (give a table's "
            f"journal files or its directory; `tablectl journal verify` checks one)")
    try:
        data = survey(iter_records(args.paths, only=SURVEYED_EVENTS), feed)
    except JournalFormatError as error:
        raise JournalFormatError(f"{error} (run `tablectl journal verify`)") from error
    totals = data.totals
    flags = [(found.monitor.value, found.detail) for found in totals.findings]
    flags += [(str(alert.get("monitor")), str(alert.get("detail")))
              for alert in data.recorded_alerts]
    shelves = flagged_shelves(flags)
    note = ""
    if shelves is not None:
        if feed is Feed.UNKNOWN:
            note = ("risk: a biased order was flagged, but with --feed unknown the machine's "
                    "input is unknown and its risk cannot be put in money")
        elif not data.games:
            raise RequestError("a biased order was flagged but the journal names no game (no "
                               "session_started record): give the journal's whole directory")
        else:
            data.risk = risk_reports(_boxes_dealt(data.games, totals.hands, totals.decks),
                                     shelves, feed, seed=args.risk_seed, deals=args.risk_deals)
    written = render(data, Path(args.out))
    if args.json:
        print(json.dumps(summary_json(data), indent=1, default=str))
        return 0
    print(f"{totals.decks} decks, {totals.hands} hands; {len(totals.findings)} alarm(s) found, "
          f"{len(data.recorded_alerts)} recorded live; wrote {len(written)} files to {args.out}")
    for found in totals.findings:
        print(f"  deck {found.decks}: {found.monitor.value}: {found.detail}")
    for report in data.risk or []:
        print("\n".join(lines(report)))
    if note:
        print(note)
    return 0
