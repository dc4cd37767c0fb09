"""``python -m controller.feed --config PATH``: the feed alone, without loading every other
``tablectl`` command (the systemd unit runs this: far less memory on the table than
``tablectl feed``, which is the same program behind the full command line; docs/feed.md)."""

from __future__ import annotations

import argparse
import sys

from controller.errors import TablectlError
from controller.feed.log import configure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m controller.feed", description=__doc__)
    parser.add_argument("--config", default="/etc/tablectl/tablectl.toml")
    parser.add_argument("--log-level", default="WARNING", type=str.upper)
    args = parser.parse_args(argv)
    configure(args.log_level)  # not structlog: see controller.feed.log
    from controller.feed.config import load_feed_config
    from controller.feed.run import run_feed

    try:
        return run_feed(load_feed_config(args.config))
    except TablectlError as error:
        print(f"tablectl feed: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
