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
    parser.add_argument("action", nargs="?", choices=("run", "status"), default="run",
                        help="run the consumer (default) or print the floor view")
    parser.add_argument("--config", default=DEFAULT_CONFIG, type=nonempty_path,
                        help="floor config file with a [floor] section (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="status as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.feed.config import load_floor_config

    config = load_floor_config(args.config)
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
