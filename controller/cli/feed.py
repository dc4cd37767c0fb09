"""``tablectl feed [--config PATH]``: publish this table's journal to the floor's MQTT broker
(``docs/feed.md``); systemd runs it as ``tablectl-feed.service``. ``tablectl feed keygen``:
make this table's signing key (the file ``[feed] signing_key`` names, mode 0400) and print the
line the floor's config needs."""

from __future__ import annotations

import argparse
from typing import Any

from controller.cli.argtypes import nonempty_path

DEFAULT_CONFIG = "/etc/tablectl/tablectl.toml"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "feed", help="publish the journal to the floor's MQTT broker (docs/feed.md)")
    parser.add_argument("action", nargs="?", choices=("run", "keygen"), default="run",
                        help="run the feed (default), or make this table's signing key: run "
                             "keygen as the feed's user (sudo -u tablectl-feed)")
    parser.add_argument("--config", type=nonempty_path, default=DEFAULT_CONFIG, metavar="PATH",
                        help="the table's config file with a [feed] section "
                             "(default %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.feed.config import load_feed_config
    from controller.feed.log import configure

    config = load_feed_config(args.config)
    if args.action == "keygen":
        from controller.feed.keys import generate_key_file

        public = generate_key_file(config.signing_key)
        print(f"signing key written: {config.signing_key} (mode 0400; owner: this user)")
        print("give the floor this table's public key, in its config's [floor.keys]:")
        print(f'{config.table_id} = "{public}"')
        return 0
    from controller.feed.run import run_feed

    configure(args.log_level)
    return run_feed(config)
