"""``python -m controller.feed [--config PATH] [--log-level LEVEL]``: the feed alone, without
loading every other ``tablectl`` command (the systemd unit runs this: far less memory on the
table than ``tablectl feed``, which is the same program behind the full command line;
docs/feed.md, "Memory")."""

from __future__ import annotations

import getopt
import sys

from controller.errors import TablectlError
from controller.feed.deferred import defer_unused_imports
from controller.feed.log import LEVELS, configure

defer_unused_imports()  # before paho is imported (in main, below): controller.feed.deferred

PROG = "python -m controller.feed"
USAGE = f"usage: {PROG} [--config PATH] [--log-level {'|'.join(LEVELS)}]"
DEFAULT_CONFIG = "/etc/tablectl/tablectl.toml"
HELP = f"""Publish this table's journal to the floor's MQTT broker (docs/feed.md).

  --config PATH      the table's config file with a [feed] section ({DEFAULT_CONFIG})
  --log-level LEVEL  the lowest level logged (WARNING)"""
EXIT_USAGE = 2


class UsageError(TablectlError):
    """A command line this program does not take."""


def parse_args(argv: list[str]) -> tuple[str, str] | None:
    """``(config, log_level)``, or None for ``--help``. getopt rather than argparse: two
    options do not need argparse's 0.3 MB on the table (docs/feed.md, "Memory")."""
    try:
        options, extra = getopt.gnu_getopt(argv, "h", ["config=", "log-level=", "help"])
    except getopt.GetoptError as error:
        raise UsageError(str(error)) from error
    if extra:
        raise UsageError(f"unexpected argument {extra[0]!r}")
    config, level = DEFAULT_CONFIG, "WARNING"
    for option, value in options:
        if option in ("-h", "--help"):
            return None
        if option == "--config":
            config = value
        elif option == "--log-level":
            level = value.upper()
            if level not in LEVELS:
                raise UsageError(f"--log-level {value!r} is not one of {', '.join(LEVELS)}")
    return config, level


def main(argv: list[str] | None = None) -> int:
    try:
        parsed = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"{USAGE}\n{PROG}: {error}", file=sys.stderr)
        return EXIT_USAGE
    if parsed is None:
        print(f"{USAGE}\n\n{HELP}")
        return 0
    config, level = parsed
    configure(level)  # not structlog: see controller.feed.log
    from controller.feed.config import load_feed_config
    from controller.feed.run import run_feed

    try:
        return run_feed(load_feed_config(config))
    except TablectlError as error:
        print(f"tablectl feed: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
