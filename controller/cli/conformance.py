"""``tablectl conformance``: accept (or reject) a new shuffler or shoe model.

Runs the scripted scenario matrix of :mod:`drivers.conformance` against the device at ``--url``
and prints one row per scenario: pass, fail (with the clause of docs/protocols.md the device
breaks, and how) or not run (it needs a person at the device: run with ``--interactive`` and
do what each prompt says). Exit status: 0 when every scenario passed, 1 when any failed, 3 when
none failed but some were not run; 2 for a usage error or a device that cannot be opened.
"""

from __future__ import annotations

import argparse
from importlib import metadata
import queue
import sys
from typing import Any, TextIO

from controller.cli.output import print_json, print_table
from controller.errors import TablectlError
from drivers.conformance import KIT_VERSION, Result, Verdict, run_suite
from drivers.conformance.runner import run_reader_suite
from drivers.events import DeviceEvent
from drivers.conformance.session import Action
from drivers.transport import SerialTransport, Transport

EXIT_FAILED = 1
EXIT_NOT_RUN = 3


class ConformanceError(TablectlError):
    """A conformance run that cannot start (an unknown scenario)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "conformance", help="check a shuffler or shoe against docs/protocols.md")
    parser.add_argument("--device", choices=("shuffler", "shoe"), required=True)
    parser.add_argument("--url", required=True,
                        help="serial port, socket://HOST:PORT, or usb://VVVV:PPPP")
    parser.add_argument("--dialect", choices=("framed", "scanner", "beetek", "hid"),
                        default="framed", help="shoe dialect (default framed)")
    parser.add_argument("--interactive", action="store_true",
                        help="prompt for the physical steps (lift hands, cause a fault, draw)")
    parser.add_argument("--only", metavar="KEYS",
                        help="run only these scenarios (comma-separated, e.g. bad-crc,replay)")
    parser.add_argument("--json", action="store_true", help="one JSON document")
    parser.set_defaults(func=run)


class PromptOperator:
    """A person at the device: each physical step is a prompt on stderr, done on Enter."""

    def __init__(self, stdin: TextIO, stderr: TextIO) -> None:
        self.stdin = stdin
        self.stderr = stderr

    def act(self, action: Action, instruction: str) -> bool:
        print(f"ACTION ({action.value}): {instruction}", file=self.stderr, flush=True)
        return bool(self.stdin.readline())


def _transport(url: str) -> Transport:
    if url.startswith("usb://"):
        from drivers.usb_bulk import UsbBulkTransport

        return UsbBulkTransport.from_url(url)
    return SerialTransport(url)


def _scenarios(args: argparse.Namespace) -> Any:
    if args.device == "shuffler":
        from drivers.conformance.shuffler import SCENARIOS

        return SCENARIOS
    if args.dialect != "framed":
        from drivers.conformance.reader import SCENARIOS as READER

        return READER
    from drivers.conformance.shoe import SCENARIOS as SHOE

    return SHOE


def _selected(scenarios: Any, only: str | None) -> Any:
    if not only:
        return scenarios
    keys = [k.strip() for k in only.split(",") if k.strip()]
    known = {s.key for s in scenarios}
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise ConformanceError(f"unknown scenario {', '.join(unknown)}; known: "
                               f"{', '.join(s.key for s in scenarios)}")
    return tuple(s for s in scenarios if s.key in keys)


def _tablectl_version() -> str:
    """The installed tablectl's version (the kit ships with it)."""
    try:
        return metadata.version("tablectl")
    except metadata.PackageNotFoundError:
        return "unknown"


def _row(result: Result) -> list[str]:
    return [result.key, result.clause, result.verdict.value.upper(), result.detail]


def run(args: argparse.Namespace) -> int:
    scenarios = _selected(_scenarios(args), args.only)
    operator = PromptOperator(sys.stdin, sys.stderr) if args.interactive else None
    progress = None if not args.interactive else (  # context for the prompts
        lambda r: print(f"{r.key}: {r.verdict.value}", file=sys.stderr, flush=True))
    if args.device == "shoe" and args.dialect != "framed":
        from drivers.shoe import open_shoe

        events: queue.Queue[DeviceEvent] = queue.Queue()
        results = run_reader_suite(scenarios, open_shoe(args.dialect, args.url, events), events,
                                   operator=operator, progress=progress)
    else:
        results = run_suite(scenarios, _transport(args.url), operator=operator,
                            progress=progress)
    failed = sum(r.verdict is Verdict.FAIL for r in results)
    not_run = sum(r.verdict is Verdict.NOT_RUN for r in results)
    if args.json:
        print_json({"kit_version": KIT_VERSION, "tablectl_version": _tablectl_version(),
                    "document": "docs/protocols.md, protocol version 1",
                    "device": args.device, "url": args.url, "dialect": args.dialect,
                    "interactive": bool(args.interactive),
                    "passed": failed == 0 and not_run == 0,
                    "results": [{"scenario": r.key, "title": r.title, "clause": r.clause,
                                 "verdict": r.verdict.value, "detail": r.detail}
                                for r in results]})
    else:
        print_table(("scenario", "clause", "result", "detail"), [_row(r) for r in results])
        print(f"{len(results) - failed - not_run} passed, {failed} failed, {not_run} not run "
              f"of {len(results)} (clauses of docs/protocols.md; kit version {KIT_VERSION})")
        if not_run and not args.interactive:
            print("rows not run need a person at the device: run again with --interactive "
                  "and do what each ACTION line says, then press Enter (Ctrl-D: nobody there)",
                  file=sys.stderr)
    if failed:
        return EXIT_FAILED
    return EXIT_NOT_RUN if not_run else 0
