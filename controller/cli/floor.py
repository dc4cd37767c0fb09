"""``tablectl floor [--config PATH]`` (the floor consumer) and ``tablectl floor status``
(the floor view): ``docs/feed.md``.

``status`` only reads: a database that does not exist, or a file that is not a floor database,
is one line naming it (exit 2), never an empty floor made in its place. The consumer makes its
database where none exists, and refuses a file that is not one rather than replace it."""

from __future__ import annotations

import argparse
from typing import Any

from controller.cli.argtypes import nonempty_path
from controller.cli.output import print_json

DEFAULT_CONFIG = "/etc/tablectl/floor.toml"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "floor", help="the floor: every table's events into one view (docs/feed.md)")
    parser.add_argument("action", nargs="?", choices=("run", "status", "web"), default="run",
                        help="run the consumer (default), print the floor view, or serve the "
                             "floor page (web: docs/floor-page.md)")
    parser.add_argument("--config", default=DEFAULT_CONFIG, type=nonempty_path,
                        help="floor config file with a [floor] section (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="status as JSON")
    _add_web_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.feed.config import load_floor_config

    config = load_floor_config(args.config)
    if args.action == "web":
        from controller.floor.page.server import run_floor_web
        return run_floor_web(config.database, web_config=args.web_config, listen=args.listen,
                             port=args.port, accounts=args.accounts,
                             local_role=args.local_role, shifts=args.shifts,
                             console_url=args.console_url)
    if args.action == "status":
        from controller.floor.machines import SCHEMA as MACHINES_SCHEMA
        from controller.floor.store import Store
        from controller.floor.view import floor_view, view_lines

        store = Store(config.database, read_only=True, schema_also=MACHINES_SCHEMA)
        try:
            view = floor_view(store)
        finally:
            store.close()
        if args.json:
            print_json(view)
        else:
            for line in view_lines(view):
                print(line)
        return 0
    from controller.floor.consumer import run_floor

    return run_floor(config)


def _add_web_arguments(parser: Any) -> None:
    """``tablectl floor web``'s options (docs/floor-page.md): where and to whom the page is
    served, by the rules and option names of ``tablectl web``."""
    from controller.cli.web import add_serving_arguments

    group = parser.add_argument_group("tablectl floor web (docs/floor-page.md)")
    group.add_argument("--web-config", type=nonempty_path, metavar="PATH",
                       help="a [web] file: listen, port, tls_cert, tls_key, accounts, "
                            "local_role (the rules of tablectl web; default 127.0.0.1 only)")
    add_serving_arguments(group, local_role_default="default supervisor without a "
                          "--web-config", accounts_help="accounts file (web.accounts; "
                          "tablectl web passwd)")
    group.add_argument("--shifts", metavar="HH:MM,...",
                       help="shift start times, UTC; the first starts the gaming day "
                            "(default 06:00,14:00,22:00)")
    group.add_argument("--console-url", metavar="TEMPLATE",
                       help="each table's surveillance console, with {table} and {site}, "
                            "e.g. https://{table}.pit.example:8640/console")
