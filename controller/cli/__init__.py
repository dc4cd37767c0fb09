"""The ``tablectl`` command line.

Each subcommand lives in its own module with a ``register(subparsers)`` function that sets the
handler as ``func``; a handler returns the exit code. Any error the user can cause is one clear
line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from controller import __version__
from controller.errors import TablectlError
from controller.logsetup import configure_logging
from drivers.errors import DriverError

EXIT_USAGE = 2
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# One module per subcommand, in the order ``tablectl --help`` lists them.
COMMAND_MODULES = (
    "controller.cli.games",
    "controller.cli.rank",
    "controller.cli.settle",
    "controller.cli.odds",
    "controller.cli.bench",
    "controller.cli.probe",
    "controller.cli.conformance",
    "controller.cli.journal",
    "controller.cli.integrity",
    "controller.cli.selfcheck",
    "controller.cli.run",
    "controller.cli.client",
    "controller.cli.web",
    "controller.cli.feed",
    "controller.cli.floor",
)


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (exit 2) instead of the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"tablectl: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tablectl", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"tablectl {__version__}")
    parser.add_argument("--log-level", default="WARNING", type=str.upper, choices=LOG_LEVELS,
                        help="operational log level (default %(default)s)")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.log_level)
    try:
        return int(args.func(args))
    except (TablectlError, DriverError) as error:
        print(f"tablectl {args.command}: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``tablectl games | head``): not an error of ours. Point stdout
        # at /dev/null so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
