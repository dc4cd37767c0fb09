"""``tablectl journal verify|rounds``: surveillance's tools for the journal.

``verify`` exits 0 when the journal is intact, 1 when it found damage (naming the first bad
file, line, sequence number and kind), 2 when it could not do its job (unreadable file, bad key
file). ``rounds`` is provisional until the table's round events are final.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from controller.cli.output import print_json, print_table
from controller.journal.keys import load_hmac_key
from controller.journal.reader import iter_records
from controller.journal.rounds import summarise_rounds
from controller.journal.verify import VerifyReport, verify

EXIT_DAMAGED = 1


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("journal", help="verify and review the surveillance journal")
    actions = parser.add_subparsers(dest="action", required=True,
                                    parser_class=type(parser))
    check = actions.add_parser("verify", help="prove the journal intact or name its first damage")
    check.add_argument("paths", nargs="+", metavar="PATH", help="journal files or directories")
    check.add_argument("--hmac-key", metavar="FILE", help="key file (hex) to check HMACs")
    check.add_argument("--allow-unanchored", action="store_true",
                       help="accept an excerpt whose start nothing vouches for")
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(func=run_verify)
    rounds = actions.add_parser("rounds", help="one row per round (provisional)")
    rounds.add_argument("paths", nargs="+", metavar="PATH", help="journal files or directories")
    rounds.add_argument("--json", action="store_true", help="print JSON")
    rounds.set_defaults(func=run_rounds)


def _print_report(report: VerifyReport) -> None:
    span = f"seq {report.first_seq}..{report.last_seq}" if report.records else "no records"
    if report.problem is None:
        hmac = "HMAC verified" if report.hmac_checked else \
            "HMAC not checked" if report.hmac_present else "no HMAC"
        anchor = report.anchor.value if report.anchor else "-"
        print(f"OK: {report.records} records ({span}) in {len(report.files)} file(s); "
              f"chain intact from {anchor}; {hmac}")
    else:
        print(f"DAMAGED: {report.problem.describe()}")
        print(f"  {report.records} records verified before it ({span}) "
              f"in {len(report.files)} file(s)")
    for note in report.notes:
        print(f"  note: {note}")


def run_verify(args: argparse.Namespace) -> int:
    key = load_hmac_key(args.hmac_key) if args.hmac_key else None
    report = verify(args.paths, hmac_key=key, allow_unanchored=args.allow_unanchored)
    if args.json:
        print_json(report.to_dict())
    else:
        _print_report(report)
    if not report.ok:
        assert report.problem is not None
        print(f"tablectl journal: {report.problem.describe()}", file=sys.stderr)
        return EXIT_DAMAGED
    return 0


def run_rounds(args: argparse.Namespace) -> int:
    rows = summarise_rounds(iter_records(args.paths))
    if args.json:
        print_json({"provisional": True, "rounds": [row.to_dict() for row in rows]})
        return 0
    print_table(
        ("round", "first", "last", "game", "cards", "burns", "outcome"),
        [(row.round_id, row.first_ts, row.last_ts, row.game or "-",
          "; ".join(f"{pos}: {' '.join(cards)}" for pos, cards in row.cards.items()) or "-",
          " ".join(row.burns) or "-",
          (f"void ({row.void['reason']}, {row.void['clause']})" if row.void else
           "settled" if row.settled else "open")) for row in rows],
    )
    return 0
