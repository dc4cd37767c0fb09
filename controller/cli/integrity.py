"""``tablectl integrity report JOURNAL... [--out DIR]``: the game-protection monitors over
journals, with plots and tables for surveillance (see :mod:`controller.analysis.integrity`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from controller.analysis.integrity import SURVEYED_EVENTS, render, survey
from controller.journal.errors import JournalFormatError
from controller.journal.reader import iter_records
from controller.protection.feed import Feed


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "integrity", help="game protection: the card-stream monitors over journals")
    actions = parser.add_subparsers(dest="action", required=True, parser_class=type(parser))
    report = actions.add_parser("report", help="plots and tables for surveillance")
    report.add_argument("paths", nargs="+", metavar="JOURNAL",
                        help="journal files or directories")
    report.add_argument("--out", default="integrity-report",
                        help="directory for the plots and report.md (default integrity-report)")
    report.add_argument("--feed", choices=[feed.value for feed in Feed],
                        default=Feed.COLLECTED_REVERSED.value,
                        help="how the table fed its shuffler, as its [protection] feed says "
                             "(default collected-reversed, the table default; the bench: "
                             "new-deck)")
    report.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    try:
        data = survey(iter_records(args.paths, only=SURVEYED_EVENTS), Feed(args.feed))
    except JournalFormatError as error:
        raise JournalFormatError(f"{error} (run `tablectl journal verify`)") from error
    written = render(data, Path(args.out))
    totals = data.totals
    print(f"{totals.decks} decks, {totals.hands} hands; {len(totals.findings)} alarm(s) found, "
          f"{len(data.recorded_alerts)} recorded live; wrote {len(written)} files to {args.out}")
    for found in totals.findings:
        print(f"  deck {found.decks}: {found.monitor.value}: {found.detail}")
    return 0
