"""``tablectl settle FILE|- [--json]``: settle a round described in JSON."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from controller import strictjson
from controller.cli.output import print_json, print_table
from controller.errors import RequestError
from controller.settlement.engine import settle
from controller.settlement.request import parse_request, render


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("settle", help="settle a round given as JSON")
    parser.add_argument("file", help="request file, or - for standard input")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def _read(path: str) -> Any:
    try:
        raw = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    except OSError as error:
        raise RequestError(f"cannot read {path}: {error.strerror}") from error
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RequestError(f"{path}: not UTF-8 text (byte 0x{raw[error.start]:02x} at offset "
                           f"{error.start}); a request is UTF-8 JSON") from error
    try:
        return strictjson.loads(text)
    except strictjson.StrictJsonError as error:
        raise RequestError(f"{path}: {error}") from error


def run(args: argparse.Namespace) -> int:
    round_ = parse_request(_read(args.file))
    output = render(round_, settle(round_))
    if args.json:
        print_json(output)
        return 0
    print_table(["position", "cards", "hand"],
                [[pos, " ".join(h["cards"]), h["name"]] for pos, h in output["hands"].items()])
    print()
    print_table(["wager", "outcome", "amount", "stake", "returned", "net", "rule"],
                [[r["id"], r["outcome"], r["amount"], r["stake"], r["returned"], r["net"],
                  r["rule"]] for r in output["results"]])
    return 0
