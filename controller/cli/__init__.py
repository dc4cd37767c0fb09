"""The ``tablectl`` command line.

Each subcommand lives in its own module with a ``register(subparsers)`` function that sets the
handler as ``func``; a handler returns the exit code. Any error the user can cause is one clear
line on stderr and exit status 2, never a traceback: a path that cannot be used, a database
that cannot be opened and an extra that is not installed included. A bug of ours is one line and
exit 70; ``--log-level DEBUG`` adds the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import traceback
from collections.abc import Sequence

from controller import __version__
from controller.errors import TablectlError
from controller.logsetup import configure_logging
from drivers.errors import DriverError

EXIT_USAGE = 2
EXIT_INTERNAL = 70
"""A bug of ours (sysexits' EX_SOFTWARE): one line here, the traceback only at DEBUG."""
EXTRAS = {"starlette": "web", "uvicorn": "web", "jinja2": "web", "argon2": "web",
          "matplotlib": "analysis", "scipy": "analysis", "numpy": "analysis",
          "psycopg": "floor", "paho": "feed"}
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
    "controller.cli.deploy",
    "controller.cli.run",
    "controller.cli.client",
    "controller.cli.web",
    "controller.cli.feed",
    "controller.cli.floor",
    "controller.cli.studio",
)


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (exit 2) instead of the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"tablectl: {message}\n")


def _database_error(error: Exception) -> bool:
    """A SQLite error (a floor or web database that cannot be used): the user's to fix. Asked
    of ``sys.modules``, not imported here: ``tablectl run`` never opens a database, and
    sqlite3 would cost the table service's resident memory at every start (issue 27)."""
    sqlite = sys.modules.get("sqlite3")
    return sqlite is not None and isinstance(error, sqlite.Error)


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
    except BrokenPipeError:
        # The reader went away (``tablectl games | head``): not an error of ours. Point stdout
        # at /dev/null so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as error:
        # A path the user gave that cannot be used (``--out /proc/x``): the file and why.
        where = f"{error.filename}: " if error.filename else ""
        print(f"tablectl {args.command}: {where}{error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    except ImportError as error:
        missing = (error.name or "").split(".")[0]
        extra = EXTRAS.get(missing)
        hint = f"; install it with pip install 'tablectl[{extra}]'" if extra else ""
        print(f"tablectl {args.command}: needs the Python package {missing or error}{hint}",
              file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # noqa: BLE001 (the last wall: no traceback reaches a user)
        if _database_error(error):
            print(f"tablectl {args.command}: database: {error}", file=sys.stderr)
            return EXIT_USAGE
        print(f"tablectl {args.command}: internal error: {type(error).__name__}: {error} "
              f"(a bug: please report it; --log-level DEBUG shows where)", file=sys.stderr)
        if logging.getLogger().isEnabledFor(logging.DEBUG) or args.log_level == "DEBUG":
            traceback.print_exc()
        return EXIT_INTERNAL
