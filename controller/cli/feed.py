"""``tablectl feed [--config PATH]``: publish this table's journal to the floor's MQTT broker
(``docs/feed.md``); systemd runs it as ``tablectl-feed.service``."""

from __future__ import annotations

import argparse
from typing import Any

DEFAULT_CONFIG = "/etc/tablectl/tablectl.toml"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "feed", help="publish the journal to the floor's MQTT broker (docs/feed.md)")
    parser.add_argument("--config", default=DEFAULT_CONFIG,
                        help="the table's config file with a [feed] section "
                             "(default %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.feed.config import load_feed_config
    from controller.feed.log import configure
    from controller.feed.run import run_feed

    configure(args.log_level)
    return run_feed(load_feed_config(args.config))
