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
from dataclasses import dataclass

from controller import __version__
from controller.deferred import defer
from controller.errors import TablectlError
from drivers.errors import DriverError

EXIT_USAGE = 2
EXIT_INTERNAL = 70
"""A bug of ours (sysexits' EX_SOFTWARE): one line here, the traceback only at DEBUG."""
EXTRAS = {"starlette": "web", "uvicorn": "web", "jinja2": "web", "argon2": "web",
          "matplotlib": "analysis", "scipy": "analysis", "numpy": "analysis",
          "psycopg": "floor", "paho": "feed"}
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


@dataclass(frozen=True, slots=True)
class Command:
    """A subcommand as ``tablectl --help`` lists it, and the module that registers it."""

    name: str
    module: str
    help: str


# Every subcommand, in the order ``tablectl --help`` lists them. Only the module of the one
# being run is imported (issue 27: ``tablectl run`` loaded every subcommand's imports, 1.6 MB of
# the service's memory); the rest are listed from this table, which a test holds equal to what
# each module registers.
COMMANDS = (
    Command("games", "controller.cli.games", "list the rule sets, bets and pay tables"),
    Command("rank", "controller.cli.rank", "name a three-card hand in a game"),
    Command("settle", "controller.cli.settle", "settle a round given as JSON"),
    Command("odds", "controller.cli.odds", "exact house edge of every bet"),
    Command("bench", "controller.cli.bench",
            "drive a simulated table end to end and summarise the results"),
    Command("probe", "controller.cli.probe", "identify a shuffler or shoe and show its events"),
    Command("conformance", "controller.cli.conformance",
            "check a shuffler or shoe against docs/protocols.md"),
    Command("journal", "controller.cli.journal", "verify and review the surveillance journal"),
    Command("integrity", "controller.cli.integrity",
            "game protection: the card-stream monitors over journals"),
    Command("selfcheck", "controller.cli.selfcheck",
            "verify the installed software against the signed release manifest"),
    Command("deploy-files", "controller.cli.deploy",
            "write the units, example configs and udev rules this release ships"),
    Command("run", "controller.cli.run", "run the table service (systemd runs this)"),
    Command("round", "controller.cli.client", "open, close, reveal, settle a round; status; "
            "events N (a round's events from the journal)"),
    Command("wager", "controller.cli.client",
            "place, batch-place or withdraw wagers, or list this round's wagers"),
    Command("decide", "controller.cli.client", "a player's play or fold (RWS-3CP 3.8)"),
    Command("option", "controller.cli.client",
            "one player's option after a dealing error or interruption (continue or withdraw)"),
    Command("options", "controller.cli.client",
            "close the players' options (those who did not answer continue)"),
    Command("deck", "controller.cli.client", "after a wrong deck count: the deck was replaced, "
            "or counted by hand (RWS-NC3P 5.5.2, MBS-R3P 5.9)"),
    Command("report", "controller.cli.client",
            "report an irregularity no device reports: KIND [--position P] ..."),
    Command("supervisor", "controller.cli.client", "a Pit Supervisor's decision"),
    Command("watch", "controller.cli.client", "stream round events as JSON lines"),
    Command("web", "controller.cli.web", "the dealer's screen and the surveillance console"),
    Command("feed", "controller.cli.feed",
            "publish the journal to the floor's MQTT broker (docs/feed.md)"),
    Command("floor", "controller.cli.floor",
            "the floor: every table's events into one view (docs/feed.md)"),
    Command("studio", "controller.cli.studio", "the studio gateway: a game server's round API "
            "over HTTPS with mutual TLS (docs/studio.md)"),
    Command("studio-client", "controller.cli.studio", "the reference game server: rounds, "
            "members' wagers in batches, every settlement checked (docs/studio.md)"),
)
COMMAND_MODULES = tuple(dict.fromkeys(command.module for command in COMMANDS))
"""One module per group of subcommands, in the order of :data:`COMMANDS`."""
DEFERRED_BY_THE_SERVICE = ("asyncio",)
"""Modules ``tablectl run`` defers (:mod:`controller.deferred`): structlog imports asyncio (and
asyncio ssl) for its async logging methods, which the service never calls: 7 MB of its
resident memory (docs/service.md, "Memory")."""
NOT_USED_BY_THE_SERVICE = ("greenlet",)
"""Optional modules ``tablectl run`` keeps out as if they were not installed: structlog's
import tries greenlet (for its deprecated greenlet-local context) and falls back to
``threading.local`` without it. The service runs no greenlets; the lock does not install
greenlet, but a development or test environment has it (the browser tests' playwright needs
it), and there it brought in libstdc++: about 1 MB of the service's resident memory, so that
the benchmark measured a service the Pi does not run."""


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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or (``command`` named) of that one only, the others
    listed by name and help from :data:`COMMANDS` so that ``--help`` still shows them all."""
    parser = _Parser(prog="tablectl", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"tablectl {__version__}")
    parser.add_argument("--log-level", default="WARNING", type=str.upper, choices=LOG_LEVELS,
                        help="operational log level (default %(default)s)")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    wanted = next((c.module for c in COMMANDS if c.name == command), None)
    registered: set[str] = set()
    for entry in COMMANDS:
        if command is not None and entry.module != wanted:
            subparsers.add_parser(entry.name, help=entry.help)
        elif entry.module not in registered:
            registered.add(entry.module)
            importlib.import_module(entry.module).register(subparsers)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option of ``tablectl``
    itself), or None when it names none (``--help``, ``--version``, a usage error)."""
    words = iter(argv)
    for word in words:
        if word == "--log-level":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    command = command_of(words)
    if command == "run":
        for name in DEFERRED_BY_THE_SERVICE:
            defer(name)
        for name in NOT_USED_BY_THE_SERVICE:
            sys.modules.setdefault(name, None)  # type: ignore[arg-type]  # import: ImportError
    parser = build_parser(command or "")
    args = parser.parse_args(words)
    from controller.logsetup import configure_logging  # structlog: after the deferral

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
