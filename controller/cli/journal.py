"""``tablectl journal verify|rounds|show|recall|replay``: surveillance's tools for the journal;
``journal acknowledge REASON`` goes to the running service (:mod:`controller.cli.client`).

``verify`` exits 0 when the journal is intact and everything it carries was checked, 1 when it
found damage (naming the first bad file, line, sequence number and kind; a journal that ends
before its head is ``truncated``), 2 when it could not do its job (unreadable file, bad key
file), 3 when the chain is intact but what the journal says it carries could not be checked
(HMACs without ``--hmac-key``, no ``journal.head`` to hold its end against). ``replay`` exits 0
when every recorded decision and settlement is reproduced by today's rules from the recorded
inputs, 4 when every difference is one a listed rule change since the journal's release makes of
an honest record (each named with the change), 1 on any unexplained divergence (named first, by
sequence number) and 1 when there was nothing to replay (no service session), saying so, and 2
when a session was written by a later release than this one (not replayed: use that release).
The review verbs read ``PATH...`` or, by default, the journal directory (``--dir``, default
``/var/lib/tablectl/journal``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from controller.cli.client import register_acknowledge
from controller.cli.output import print_json, print_table
from controller.journal import clocktime
from controller.journal.codec import INPUT_EVENT_TYPES
from controller.cli.argtypes import nonempty_path
from controller.journal.errors import JournalFormatError, MixedJournals
from controller.journal.keys import load_hmac_key
from controller.journal.reader import iter_one_journal
from controller.journal.record import canonical_json, format_ts
from controller.journal.replay import ReplayVerdict, replay_records
from controller.journal.rounds import RoundSummary, recall, round_timeline, summarise_rounds
from controller.journal.verify import VerifyReport, verify

EXIT_DAMAGED = 1
EXIT_UNCHECKED = 3
EXIT_DIVERGED = 1
EXIT_LATER_RELEASE = 2
EXIT_EXPLAINED = 4
DEFAULT_DIR = "/var/lib/tablectl/journal"
RECALL_GAMES = 10


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("journal", help="verify and review the surveillance journal")
    actions = parser.add_subparsers(dest="action", required=True,
                                    parser_class=type(parser))
    check = actions.add_parser("verify", help="prove the journal intact or name its first damage")
    check.add_argument("paths", nargs="+", metavar="PATH", type=nonempty_path,
                       help="journal files or directories")
    check.add_argument("--hmac-key", metavar="FILE", type=nonempty_path,
                       help="key file (hex) to check HMACs")
    check.add_argument("--head", metavar="FILE", type=nonempty_path,
                       help="the journal head to hold the end against (default: journal.head "
                            "beside the newest file)")
    check.add_argument("--allow-unanchored", action="store_true",
                       help="accept an excerpt whose start nothing vouches for and which has "
                            "no head")
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(func=run_verify)
    register_acknowledge(actions)  # to the running service: its control socket

    def review(name: str, help_text: str, func: Any) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help_text)
        sub.add_argument("--dir", default=DEFAULT_DIR, type=nonempty_path,
                         help=f"journal directory when no PATH is given (default {DEFAULT_DIR})")
        sub.add_argument("--json", action="store_true", help="print JSON")
        sub.set_defaults(func=func)
        return sub

    rounds = review("rounds", "one row per round", run_rounds)
    rounds.add_argument("paths", nargs="*", metavar="PATH", type=nonempty_path,
                        help="journal files or directories")
    show = review("show", "one round's full timeline", run_show)
    show.add_argument("round", metavar="ROUND", help="round id (as in `rounds`)")
    show.add_argument("paths", nargs="*", metavar="PATH", type=nonempty_path,
                      help="journal files or directories")
    last = review("recall", f"the last {RECALL_GAMES} games (game recall)", run_recall)
    last.add_argument("paths", nargs="*", metavar="PATH", type=nonempty_path,
                      help="journal files or directories")
    again = review("replay", "re-run the recorded inputs through the rules and compare",
                   run_replay)
    again.add_argument("paths", nargs="*", metavar="PATH", type=nonempty_path,
                       help="journal files or directories")


def _paths(args: argparse.Namespace) -> list[str]:
    return list(args.paths) or [args.dir]


def _records(args: argparse.Namespace) -> list[Any]:
    """One journal's records: two tables' or two chains' files in one read are refused
    (:class:`MixedJournals` names both files), never merged into rounds that never happened."""
    try:
        return list(iter_one_journal(_paths(args)))
    except MixedJournals:
        raise
    except JournalFormatError as error:
        raise JournalFormatError(f"{error} (run `tablectl journal verify`)") from error


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
    for why in report.unchecked:
        print(f"  NOT CHECKED: {why}")


def run_verify(args: argparse.Namespace) -> int:
    key = load_hmac_key(args.hmac_key) if args.hmac_key else None
    options: dict[str, Any] = {} if args.head is None else {"head": args.head}
    report = verify(args.paths, hmac_key=key, allow_unanchored=args.allow_unanchored,
                    **options)
    if args.json:
        print_json(report.to_dict())
    else:
        _print_report(report)
    if not report.ok:
        assert report.problem is not None
        print(f"tablectl journal: {report.problem.describe()}", file=sys.stderr)
        return EXIT_DAMAGED
    if report.unchecked:
        print(f"tablectl journal: not fully checked: {report.unchecked[0]}", file=sys.stderr)
        return EXIT_UNCHECKED
    return 0


def _cards(row: RoundSummary) -> str:
    return "; ".join(f"{pos}: {' '.join(cards)}" for pos, cards in row.cards.items()) or "-"


def _overrides(row: RoundSummary) -> str:
    return "; ".join(f"{o['actor']} {o['action']}" + (f" ({o['clause']})" if o["clause"] else "")
                     for o in row.overrides) or "-"


def _print_rows(rows: list[RoundSummary]) -> None:
    print_table(
        ("round", "first", "last", "game", "cards", "burns", "outcome", "overrides"),
        [(row.round_id, row.first_ts, row.last_ts, row.game or "-", _cards(row),
          " ".join(row.burns) or "-", row.outcome, _overrides(row)) for row in rows],
    )


def run_rounds(args: argparse.Namespace) -> int:
    rows = summarise_rounds(_records(args))
    if args.json:
        print_json({"rounds": [row.to_dict() for row in rows]})
    else:
        _print_rows(rows)
    return 0


def run_recall(args: argparse.Namespace) -> int:
    rows = recall(_records(args), RECALL_GAMES)
    if args.json:
        print_json({"games": [row.to_dict() for row in rows]})
    else:
        _print_rows(rows)
    return 0


def run_show(args: argparse.Namespace) -> int:
    """One round's records, each with its time's error bound and marks (clocktime): a record
    written on an unsynchronised clock or before a step also shows its corrected time."""
    records = _records(args)
    times = clocktime.annotate(records)
    timeline = round_timeline(records, args.round)
    if not timeline:
        print(f"tablectl journal: no records of round {args.round!r}", file=sys.stderr)
        return EXIT_DAMAGED
    if args.json:
        print_json({"round": args.round,
                    "records": [{**r.to_dict(), "time": times[r.seq].to_dict()}
                                for r in timeline]})
        return 0
    for record in timeline:
        payload = dict(record.payload)
        payload.pop("round", None)
        time = times[record.seq]
        column = clocktime.describe(time)
        if time.corrected_ns is not None and (time.unsynchronised or time.before_step_ns):
            column += f" -> {format_ts(datetime.fromtimestamp(time.corrected_ns / 1e9, UTC))}"
        print(f"{record.seq:>8}  {record.ts} {column}  {record.event_type:<22} "
              f"{record.actor or '-':<18} {canonical_json(payload)}")
    return 0


def _not_replayed(records: list[Any]) -> str:
    """The record types in a journal without a service session, most frequent first."""
    counts = Counter(record.event_type for record in records)
    return ", ".join(f"{kind} {n}" for kind, n in counts.most_common())


def run_replay(args: argparse.Namespace) -> int:
    records = _records(args)
    report = replay_records(records)
    nothing = report.sessions == 0 and bool(records)
    if args.json:
        out = report.to_dict()
        if nothing:
            out["ok"] = False
            out["not_replayed"] = dict(Counter(r.event_type for r in records).most_common())
        print_json(out)
    elif nothing:
        # An "OK" over zero inputs would read as a proof it is not (issue 16: auditor traps).
        inputs = sum(1 for r in records if r.event_type in INPUT_EVENT_TYPES)
        print(f"NOT REPLAYED: none of the {len(records)} record(s) is in a service session "
              f"(no session_started record), so there is no table to replay them into; "
              f"{inputs} service input record(s). A `tablectl bench --journal-dir` journal "
              f"records the bench's own steps; check it with `journal verify` (chain) and "
              f"`journal rounds`.")
        print(f"  record types: {_not_replayed(records)}")
    else:
        verdict = report.verdict
        if verdict is ReplayVerdict.UNEXPLAINED:
            print(f"DIVERGED: {len(report.unexplained)} unexplained divergence(s) after "
                  f"{report.inputs} input(s)"
                  + (f"; {len(report.explained)} more explained by listed rule changes"
                     if report.explained else ""))
        elif verdict is ReplayVerdict.LATER_RELEASE:
            print("NOT REPLAYED: part of the journal was written by a later release than this "
                  "one; replay it with that release or a later one")
        else:
            print(f"OK: {report.inputs} input(s) replayed in {report.sessions} session(s); "
                  f"{report.outputs_checked} output(s) reproduced, of which "
                  f"{report.money_checked} money decision(s) and "
                  f"{report.settlements_checked} settlement(s)/void(s)")
            if verdict is ReplayVerdict.EXPLAINED:
                print(f"  EXPLAINED: {len(report.explained)} recorded decision(s) differ from "
                      f"today's rules exactly as listed rule changes since the journal's "
                      f"release make them of an honest record (docs/journal.md, \"Replay "
                      f"across releases\"):")
        for divergence in report.ordered():
            print(f"  {divergence.describe()}")
    if report.unrecorded_tail and not args.json:
        print(f"  note: {report.unrecorded_tail} output(s) of the last input are not recorded "
              f"(journal cut off mid-input; recovery records them)")
    if nothing:
        print("tablectl journal: nothing replayed: no service session in the journal",
              file=sys.stderr)
        return EXIT_DIVERGED
    verdict = report.verdict
    if verdict is ReplayVerdict.UNEXPLAINED:
        print(f"tablectl journal: replay diverged at {report.ordered()[0].describe()}",
              file=sys.stderr)
        return EXIT_DIVERGED
    if verdict is ReplayVerdict.LATER_RELEASE:
        print(f"tablectl journal: {report.ordered()[0].describe()}", file=sys.stderr)
        return EXIT_LATER_RELEASE
    return EXIT_EXPLAINED if verdict is ReplayVerdict.EXPLAINED else 0
