"""``tablectl web [--config PATH]``: the dealer's screen and the surveillance console
(docs/web.md); ``tablectl web passwd`` adds an account; ``tablectl web verify-export FILE``
re-verifies an export against the journal (exit 0 verified, 1 not)."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from controller.cli.argtypes import nonempty_path
from controller.roles import PERSON_ROLES, person_role

EXIT_NOT_VERIFIED = 1
PERSON_CHOICES = tuple(role.value for role in PERSON_ROLES)


def _listen(text: str) -> str:
    """``--listen``: refused here, by name, when it is no address (``web.listen``'s own check,
    :func:`controller.web.config.listen_problem`); it used to reach the config's remote-access
    rules and be blamed on missing TLS."""
    try:
        from controller.web.config import listen_problem
    except ImportError:  # without the [web] extra: run() names the missing package
        return text
    problem = listen_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: {problem}")
    return text


def add_serving_arguments(parser: Any, *, local_role_default: str,
                          accounts_help: str = "accounts file (web.accounts)") -> None:
    """``--listen``, ``--port``, ``--accounts`` and ``--local-role``: where and to whom a page is
    served, with one set of names and checks for ``tablectl web`` and ``tablectl floor web``
    (``parser`` may be an argument group)."""
    parser.add_argument("--listen", type=_listen, metavar="ADDRESS",
                        help="an IP address or a host name (web.listen; default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (web.port; default 8640, 0: any)")
    parser.add_argument("--accounts", type=nonempty_path, metavar="FILE", help=accounts_help)
    parser.add_argument("--local-role", choices=PERSON_CHOICES,
                        help="without accounts (loopback only): every viewer's role "
                             f"({local_role_default})")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("web", help="the dealer's screen and the surveillance console")
    parser.add_argument("--config", type=nonempty_path, metavar="PATH",
                        help="web config (TOML, one [web] table)")
    parser.add_argument("--journal", type=nonempty_path, metavar="DIR",
                        help="journal directory (web.journal)")
    parser.add_argument("--socket", type=nonempty_path, metavar="PATH",
                        help="the table's control socket (web.socket)")
    add_serving_arguments(parser, local_role_default="web.local_role; default dealer")
    parser.add_argument("--index", type=nonempty_path, metavar="FILE",
                        help="SQLite index file (web.index)")
    parser.add_argument("--hmac-key", dest="hmac_key_file", type=nonempty_path, metavar="FILE",
                        help="journal key (web.hmac_key_file)")
    parser.add_argument("--timezone", help="local times beside UTC in this IANA zone "
                        "(web.timezone; default the machine's)")
    parser.add_argument("--video-url", dest="video_url",
                        help="surveillance video link template with {table}, {utc}, {epoch} "
                             "(web.video_url)")
    actions = parser.add_subparsers(dest="action", parser_class=type(parser))
    passwd = actions.add_parser("passwd", help="add or replace an account (password on stdin "
                                "or asked for)")
    passwd.add_argument("file", type=nonempty_path, metavar="FILE", help="accounts file")
    passwd.add_argument("name")
    passwd.add_argument("role", choices=PERSON_CHOICES)
    passwd.add_argument("--pin", action="store_true",
                        help="also set a PIN (asked for, or the second line on stdin): a "
                             "supervisor answers a hold with it at the dealer's screen; a "
                             "dealer logs in with it at the kiosk, by name button and PIN pad")
    passwd.add_argument("--badge", action="store_true",
                        help="a supervisor: also set the badge the kiosk's reader reads "
                             "(present it to a reader that types into this terminal, or type "
                             "its id; the next line on stdin otherwise)")
    check = actions.add_parser("verify-export", help="re-verify an export against the journal")
    check.add_argument("file", type=nonempty_path, metavar="FILE", help="the export (JSON)")
    check.add_argument("--journal", dest="export_journal", required=True, type=nonempty_path,
                       metavar="DIR", help="journal directory")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.action == "passwd":
        return _passwd(args)
    if args.action == "verify-export":
        return _verify_export(args)
    import sqlite3

    from controller.web.config import load_web_config
    from controller.web.errors import WebConfigError
    from controller.web.server import serve
    config = load_web_config(args.config, journal=args.journal, socket=args.socket,
                             listen=args.listen, port=args.port, accounts=args.accounts,
                             local_role=args.local_role, index=args.index,
                             hmac_key_file=args.hmac_key_file, timezone=args.timezone,
                             video_url=args.video_url)
    try:
        return serve(config)
    except sqlite3.Error as error:
        raise WebConfigError(f"the index {config.index_path()}: {error}") from error


def _passwd(args: argparse.Namespace) -> int:
    from controller.web.auth import add_account
    password = getpass.getpass("password: ") if sys.stdin.isatty() \
        else sys.stdin.readline().rstrip("\n")
    pin = None
    if args.pin:
        pin = getpass.getpass("PIN: ") if sys.stdin.isatty() \
            else sys.stdin.readline().rstrip("\n")
    badge = None
    if args.badge:
        # hidden like a password: a badge id is a credential, never echoed
        badge = getpass.getpass("badge (present it to the reader): ").strip() \
            if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n").strip()
    add_account(args.file, args.name, person_role(args.role), password, pin, badge)
    extras = [what for what, given in (("a PIN", pin), ("a badge", badge)) if given]
    print(f"account {args.name} ({args.role}{', with ' + ' and '.join(extras) if extras else ''})"
          f" written to {args.file}")
    return 0


def _verify_export(args: argparse.Namespace) -> int:
    from controller.web.errors import ExportError
    from controller.web.export import export_seqs, journal_hashes, verify_export
    try:
        data = args.file.read_bytes()
    except OSError as error:
        raise ExportError(f"{args.file}: {error.strerror or error}") from error
    check = verify_export(data, journal_hashes(args.export_journal, export_seqs(data)))
    print(check.describe())
    return 0 if check.ok else EXIT_NOT_VERIFIED
