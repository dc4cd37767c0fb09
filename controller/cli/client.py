"""Client verbs of the running service, over its Unix control socket (docs/service.md).

``tablectl round open|close|shuffled|reveal|settle|status``, ``tablectl wager
place|withdraw|list``, ``tablectl decide POS play|fold``, ``tablectl option POS
continue|withdraw``, ``tablectl options close``, ``tablectl deck replace|counted N``,
``tablectl report KIND [--position P] [--source device|dealer] ...``, ``tablectl supervisor
continue|void|reconstruct|order|swap|clear-fault|answer|clock-override ...``, ``tablectl journal
acknowledge REASON``, ``tablectl watch``: every verb of the control socket
(:data:`controller.service.protocol.VERBS`) has its command, and a test holds them together.

The socket is ``--socket PATH``, else the one named by ``--config PATH``, else the service's
default (``/run/tablectl/control.sock``) when it exists, else the simulated bench table's.
Exit status: 0 done; **1** the table (or the socket's access rules) refused, or the service is
busy (too many connections), one line saying why; **2** a usage or connection problem (no
service, bad arguments); **3** (``watch`` only) the service closed the connection (it stopped or
restarted, or dropped a watcher that fell behind): a log shipper restarts ``watch`` on it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from controller import strictjson
from controller.cli.argtypes import nonempty_path
from controller.cli.output import json_text, printable
from controller.errors import RequestError, TablectlError
from controller.strictjson import StrictJsonError
from controller.service.control.client import ControlClient, RequestRefused
from controller.service.config import DEFAULT_CONTROL_SOCKET, bench_runtime_dir, load_config
from controller.service.errors import ControlError
from controller.service.protocol import MAX_BATCH_ROWS, MAX_BATCH_WAGERS, VERBS, ErrorCode
from controller.table.commands import REPORTED_SOURCES, IrregularityKind

EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_CLOSED = 3
_REFUSALS = {ErrorCode.REFUSED, ErrorCode.FORBIDDEN, ErrorCode.UNAVAILABLE, ErrorCode.BUSY}
ANSWERS = next(arg.choices for arg in VERBS["supervisor.answer"].args if arg.name == "answer")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--socket", metavar="PATH", type=nonempty_path,
                        help="the service's control socket")
    parser.add_argument("--config", metavar="PATH", type=nonempty_path,
                        help="take the socket from this config")
    parser.add_argument("--actor", metavar="WHO",
                        help="who at the table gives the command (e.g. dealer:1042), journaled")
    parser.add_argument("--json", action="store_true", help="print the service's answer as JSON")
    parser.add_argument("--timeout", type=float, default=10.0, help=argparse.SUPPRESS)


def _round_number(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a round number (0 or more)")
    return int(text)


def _round_verb(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """``round ACTION``; ``round events N`` alone takes a round number (refused elsewhere, and
    refused missing there, before anything is sent)."""
    if args.action == "events":
        if args.number is None:
            raise RequestError("round events: give the round number (as `tablectl journal "
                             "rounds` or the events show it)")
        return "round.events", {"round": args.number}
    if args.number is not None:
        raise RequestError(f"round {args.action} takes no round number")
    return f"round.{args.action}", {}


def register(subparsers: Any) -> None:
    round_ = subparsers.add_parser("round", help="open, close, reveal, settle a round; status; "
                                   "events N (a round's events from the journal)")
    round_.add_argument("action", choices=("open", "close", "shuffled", "reveal", "settle",
                                           "status", "events"))
    round_.add_argument("number", nargs="?", type=_round_number, metavar="N",
                        help="the journal round (round events only)")
    _common(round_)
    round_.set_defaults(func=run, verb=_round_verb)

    wager = subparsers.add_parser(
        "wager", help="place, batch-place or withdraw wagers, or list this round's wagers")
    wager_sub = wager.add_subparsers(dest="action", required=True)
    place = wager_sub.add_parser("place", help="place a wager: POS BET AMOUNT (minor units)")
    place.add_argument("position")
    place.add_argument("bet")
    place.add_argument("amount", type=int)
    place.add_argument("--id", dest="wager_id", help="wager id (default: POS-BET)")
    place.add_argument("--player")
    place.add_argument("--seated", action="store_true")
    _common(place)
    place.set_defaults(func=run, verb=_wager_place)
    batch = wager_sub.add_parser(
        "place-batch", help="place many wagers in one input: FILE holds a JSON list of "
        "objects with wager_id, position, bet, amount and optionally player, seated (at most "
        f"{MAX_BATCH_WAGERS}), or of arrays [wager_id, position, bet, amount, player] (the "
        f"compact form, at most {MAX_BATCH_ROWS}); '-' reads standard input")
    batch.add_argument("wagers", metavar="FILE", type=_wager_file)
    _common(batch)
    batch.set_defaults(func=run, verb=_wager_batch)
    withdraw = wager_sub.add_parser("withdraw", help="withdraw a wager while bets are open: ID")
    withdraw.add_argument("wager_id", metavar="ID")
    _common(withdraw)
    withdraw.set_defaults(func=run, verb=lambda a: ("wager.withdraw", {"wager_id": a.wager_id}))
    listing = wager_sub.add_parser("list", help="this round's wagers")
    _common(listing)
    listing.set_defaults(func=run, verb=lambda a: ("wager.list", {}))

    decide = subparsers.add_parser("decide", help="a player's play or fold (RWS-3CP 3.8)")
    decide.add_argument("position")
    decide.add_argument("choice", choices=("play", "fold"))
    _common(decide)
    decide.set_defaults(func=run, verb=lambda a: ("decide", {"position": a.position,
                                                             "choice": a.choice}))

    option = subparsers.add_parser("option", help="one player's option after a dealing error "
                                                   "or interruption (continue or withdraw)")
    option.add_argument("position")
    option.add_argument("choice", choices=("continue", "withdraw"))
    option.add_argument("--player", help="the player answering (each player at a box answers "
                                         "for himself; needed when several are still to "
                                         "answer there: round status options_pending_players)")
    _common(option)
    option.set_defaults(func=run, verb=_option)

    options = subparsers.add_parser("options", help="close the players' options (those who "
                                                     "did not answer continue)")
    options.add_argument("action", choices=("close",))
    _common(options)
    options.set_defaults(func=run, verb=lambda a: ("options.close", {}))

    deck = subparsers.add_parser("deck", help="after a wrong deck count: the deck was replaced, "
                                               "or counted by hand (RWS-NC3P 5.5.2, MBS-R3P 5.9)")
    deck_sub = deck.add_subparsers(dest="action", required=True)
    replace = deck_sub.add_parser("replace", help="a fresh, complete deck replaces the old one")
    counted = deck_sub.add_parser("counted", help="the deck was counted by hand: N cards (52 "
                                                  "resumes dealing)")
    counted.add_argument("count", type=int, metavar="N")
    for parser in (replace, counted):
        _common(parser)
        parser.set_defaults(func=run, verb=_deck)

    report = subparsers.add_parser("report", help="report an irregularity no device reports: "
                                                   "KIND [--position P] ...")
    report.add_argument("kind", type=lambda text: text.replace("-", "_"), metavar="KIND",
                        choices=[k.value for k in IrregularityKind],
                        help=", ".join(k.value for k in IrregularityKind))
    report.add_argument("--position", metavar="P", help="the box (or dealer) it concerns")
    handled = report.add_mutually_exclusive_group()
    handled.add_argument("--handled", action="store_true", default=None,
                         help="players had handled their cards (default: the table infers it)")
    handled.add_argument("--not-handled", dest="handled", action="store_false",
                         help="no player had handled their cards")
    report.add_argument("--exposed-before-drop", action="store_true",
                        help="a dropped card was exposed before it left the camera (LIVE-3P)")
    report.add_argument("--round", type=int, metavar="N",
                        help="the round it happened in, when it is an earlier one")
    report.add_argument("--details", metavar="TEXT", help="what happened, for the journal")
    report.add_argument("--source", choices=tuple(s.value for s in REPORTED_SOURCES),
                        help="an exposed card: found in the shoe/shuffler (device) or exposed "
                             "by the dealer (default: a supervisor is asked)")
    _common(report)
    report.set_defaults(func=run, verb=_report)

    sup = subparsers.add_parser("supervisor", help="a Pit Supervisor's decision")
    sup_sub = sup.add_subparsers(dest="action", required=True)
    cont = sup_sub.add_parser("continue", help="continue the held round")
    cont.add_argument("--reason", default=None)
    void = sup_sub.add_parser("void", help="void the round: REASON [--clause C]")
    void.add_argument("reason")
    void.add_argument("--clause")
    recon = sup_sub.add_parser("reconstruct", help="confirm a reconstruction "
                                                   "[--move FROM:TO ...] [--hand POS=C1,C2,C3 ...]")
    recon.add_argument("--move", action="append", default=[], metavar="FROM:TO")
    recon.add_argument("--hand", action="append", default=[], metavar="POS=C1,C2,C3")
    recon.add_argument("--reason", default=None)
    order = sup_sub.add_parser("order", help="the order of simultaneously drawn cards")
    order.add_argument("cards", nargs="+")
    order.add_argument("--reason", default=None)
    swap = sup_sub.add_parser("swap", help="swap the complete hands of two positions")
    swap.add_argument("first")
    swap.add_argument("second")
    swap.add_argument("--reason", default=None)
    clear = sup_sub.add_parser("clear-fault", help="the device is fixed (jam cleared, door "
                                                   "closed): send it CLEAR_FAULT")
    clear.add_argument("--device", default=None, help="the device (default: shuffler)")
    clear.add_argument("--reason", default=None)
    clock = sup_sub.add_parser("clock-override", help="let rounds open although the clock "
                                                      "cannot be trusted (journaled)")
    clock.add_argument("--reason", required=True, help="why, for the journal")
    answer = sup_sub.add_parser("answer", help="answer the fact a held ruling asks for: where "
                                               "an exposed card was seen (in_device, by_dealer), "
                                               "whether a jam stops the round (interrupts), "
                                               "not_reconstructable")
    answer.add_argument("answer", choices=ANSWERS)
    answer.add_argument("--reason", default=None)
    for parser in (cont, void, recon, order, swap, clear, clock, answer):
        _common(parser)
        parser.set_defaults(func=run, verb=_supervisor)

    watch = subparsers.add_parser("watch", help="stream round events as JSON lines")
    _common(watch)
    watch.set_defaults(func=run_watch)


# arguments -> (verb, args) -------------------------------------------------------------------
def _wager_place(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    args: dict[str, Any] = {"wager_id": a.wager_id or f"{a.position}-{a.bet}",
                            "position": a.position, "bet": a.bet, "amount": a.amount}
    if a.player:
        args["player"] = a.player
    if a.seated:
        args["seated"] = True
    return "wager.place", args


def _wager_batch(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """Objects go as ``wagers``; a list of arrays as ``rows`` (the compact form)."""
    if a.wagers and all(isinstance(wager, list) for wager in a.wagers):
        return "wager.place-batch", {"rows": a.wagers}
    return "wager.place-batch", {"wagers": a.wagers}


def _wager_file(name: str) -> list[Any]:
    """The wagers of ``wager place-batch``: read and parsed here, so a missing file or bad JSON
    is a usage error naming the file, not a traceback; the service checks each object."""
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
        wagers = strictjson.loads(text)
    except (OSError, UnicodeDecodeError, StrictJsonError) as error:
        raise argparse.ArgumentTypeError(f"cannot read wagers from {name}: {error}") from None
    if not isinstance(wagers, list):
        raise argparse.ArgumentTypeError(f"{name}: expected a JSON list of wager objects, got "
                                         f"{type(wagers).__name__}")
    return wagers


def _option(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    args = {"position": a.position, "choice": a.choice}
    if a.player:
        args["player"] = a.player
    return "option", args


def _deck(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if a.action == "counted":
        return "deck.counted", {"count": a.count}
    return "deck.replace", {}


def _report(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    args: dict[str, Any] = {"kind": a.kind}
    for name in ("position", "handled", "round", "details", "source"):
        if getattr(a, name) is not None:
            args[name] = getattr(a, name)
    if a.exposed_before_drop:
        args["exposed_before_drop"] = True
    return "irregularity.report", args


def _supervisor(a: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    args: dict[str, Any] = {}
    if getattr(a, "reason", None):
        args["reason"] = a.reason
    if a.action == "void" and a.clause:
        args["clause"] = a.clause
    elif a.action == "reconstruct":
        if a.move:
            args["moves"] = [_pair(m, ":", "--move FROM:TO") for m in a.move]
        if a.hand:
            hands = {}
            for text in a.hand:
                position, cards = _pair(text, "=", "--hand POS=C1,C2,C3")
                hands[position] = [c for c in cards.split(",") if c]
            args["hands"] = hands
    elif a.action == "order":
        args["cards"] = list(a.cards)
    elif a.action == "swap":
        args["positions"] = [a.first, a.second]
    elif a.action == "clear-fault" and a.device:
        args["device"] = a.device
    elif a.action == "answer":
        args["answer"] = a.answer
    return f"supervisor.{a.action}", args


def register_acknowledge(actions: Any) -> None:
    """``tablectl journal acknowledge REASON``: beside the journal's other verbs, sent to the
    running service (a supervisor acknowledges the damage its start-up check found)."""
    ack = actions.add_parser("acknowledge", help="a supervisor acknowledges the journal damage "
                                                 "the service found at start: REASON "
                                                 "(journaled); dealing resumes")
    ack.add_argument("reason", metavar="REASON")
    _common(ack)
    ack.set_defaults(func=run, verb=lambda a: ("journal.acknowledge", {"reason": a.reason}))


def _pair(text: str, sep: str, form: str) -> list[str]:
    left, found, right = text.partition(sep)
    if not found or not left or not right:
        raise TablectlError(f"{text!r}: expected {form}")
    return [left, right]


# running ---------------------------------------------------------------------------------------
def socket_path(args: argparse.Namespace) -> Path:
    if args.socket:
        return Path(args.socket)
    if args.config:
        return load_config(args.config).control.socket
    if DEFAULT_CONTROL_SOCKET.exists():
        return DEFAULT_CONTROL_SOCKET
    return bench_runtime_dir() / "control.sock"


def _refused(args: argparse.Namespace, error: RequestRefused) -> int:
    code = error.code
    if code in _REFUSALS:
        print(f"tablectl {args.command}: {getattr(code, 'value', code)}: "
              f"{printable(error.message)}", file=sys.stderr)
        return EXIT_REFUSED
    print(f"tablectl {args.command}: {printable(error.message)}", file=sys.stderr)
    return EXIT_USAGE


def run(args: argparse.Namespace) -> int:
    verb, request_args = args.verb(args)
    try:
        with ControlClient(socket_path(args), timeout=args.timeout) as client:
            result = client.request(verb, request_args, actor=args.actor)
    except RequestRefused as error:
        return _refused(args, error)
    except (ControlError, OSError) as error:
        print(f"tablectl {args.command}: {printable(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json_text(result, indent=2))
    else:
        for line in describe(verb, result):
            print(printable(line))
    return 0


def run_watch(args: argparse.Namespace) -> int:
    """One JSON line per round event, flushed at once (for ``| jq`` and log shippers)."""
    try:
        path = socket_path(args)
        with ControlClient(path, timeout=None) as client:
            # the clock's state first (surveillance reads the stream against camera time);
            # later changes arrive as ClockStatus / ClockStepped events
            for line in _clock_lines(client.request("round.status")):
                print(f"tablectl watch: {printable(line)}", file=sys.stderr)
            events = client.watch()
            print(f"tablectl watch: watching round events on {path} (Ctrl-C to stop)",
                  file=sys.stderr, flush=True)
            for event in events:
                sys.stdout.write(json_text(event) + "\n")
                sys.stdout.flush()
    except RequestRefused as error:
        return _refused(args, error)
    except (ControlError, OSError) as error:
        print(f"tablectl {args.command}: {printable(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    # the stream has no end of its own: it ends only when the service hangs up
    print(f"tablectl watch: the service closed the connection on {path} (stopped, restarted, "
          "or this watcher fell behind)", file=sys.stderr, flush=True)
    return EXIT_CLOSED


def _clock_lines(result: Mapping[str, Any]) -> list[str]:
    """The host clock as ``round.status`` tells it: trusted or why not, and the policy."""
    clock = result.get("clock") or {}
    if not clock:
        return []
    bound = clock.get("max_error_us")
    line = ("clock: synchronised" if clock.get("synchronised") else "clock: NOT synchronised")
    line += f", error bound {bound / 1000:.1f} ms" if isinstance(bound, int) else ""
    line += f", source {clock.get('source', 'unknown')}"
    if not clock.get("trusted"):
        line += f" ({clock.get('reason')})"
    lines = [line]
    if result.get("clock_blocks"):
        lines.append(f"rounds refused: {result['clock_blocks']}; a supervisor may override: "
                     f"tablectl supervisor clock-override --reason TEXT")
    elif result.get("clock_override"):
        lines.append(f"clock policy overridden by {result['clock_override']}")
    return lines


def describe(verb: str, result: Mapping[str, Any]) -> list[str]:
    """Short human lines for an answer."""
    if verb == "round.status":
        lines = [f"table {result.get('table')} ({result.get('game')}): round "
                 f"{result.get('round') or '-'} {result.get('state')}"]
        device = result.get("device") or {}
        if device:
            lines.append(f"{device.get('name')}: {'online' if device.get('online') else 'offline'}"
                         f" ({device.get('url')})" + (f"; {device['last_error']}"
                                                      if device.get("last_error") else ""))
        for key in ("held_for", "deck_blocked"):
            if result.get(key):
                lines.append(f"{key.replace('_', ' ')}: {result[key]}")
        for wait in result.get("waits") or []:
            lines.append(f"waits for {wait['waits_for']}: {wait['way_out']}"
                         + (f" ({wait['role']})" if wait.get("role") else ""))
        lines.extend(_clock_lines(result))
        if result.get("decisions_due"):
            lines.append(f"decisions due: {' '.join(result['decisions_due'])}")
        for position, cards in (result.get("hands") or {}).items():
            lines.append(f"  {position:>7}: "
                         + " ".join(card or "??" for card in cards))  # ?? face down
        return lines
    if verb == "wager.list":
        wagers = result.get("wagers") or []
        lines = [f"round {result.get('round') or '-'} ({result.get('state')}): "
                 f"{len(wagers)} wager(s)"]
        lines += [f"  {w['id']:<16} box {w['position']:>3} {w['bet']:<14} {w['amount']:>8}"
                  + (f"  {w['player']}" if w.get("player") else "") for w in wagers]
        return lines
    if verb == "wager.place-batch" and "refusals" in result:  # sent as rows
        refusals = result.get("refusals") or []
        return [f"round {result.get('round') or '-'}: {result.get('placed')} of "
                f"{result.get('placed', 0) + len(refusals)} wager(s) placed"] + [
            f"  refused row {index}: {reason}" for index, reason in refusals]
    if verb == "wager.place-batch":
        outcomes = result.get("wagers") or []
        placed = sum(1 for w in outcomes if w.get("status") == "accepted")
        return [f"round {result.get('round') or '-'}: {placed} of {len(outcomes)} wager(s) "
                "placed"] + [f"  refused {w['wager_id']}: {w.get('reason')}"
                             for w in outcomes if w.get("status") != "accepted"]
    if verb == "journal.acknowledge":
        return ["acknowledged (journaled): commands are taken again"]
    events = [e.get("type", "?") for e in result.get("events", [])]
    return [f"accepted: round {result.get('round') or '-'}, now {result.get('state')}"
            + (f" ({', '.join(events)})" if events else "")]
