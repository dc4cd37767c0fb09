"""``tablectl`` imports only the subcommand it runs (issue 27: ``tablectl run`` loaded every
subcommand's imports), and still lists every subcommand: the static table of names and help is
what the modules register, and ``tablectl run`` does not load asyncio (structlog's import of
it is deferred: 7 MB of the service's memory)."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

from controller.cli import COMMANDS, _Parser, build_parser, command_of

ROOT = Path(__file__).resolve().parents[3]


def _listed(parser: argparse.ArgumentParser) -> list[tuple[str, str | None]]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [(choice.dest, choice.help) for choice in action._choices_actions]


def test_the_static_table_is_what_the_modules_register() -> None:
    """Each module registers exactly the names, help and order the table lists for it, so
    ``--help`` without the modules says what it would say with them."""
    for module in dict.fromkeys(command.module for command in COMMANDS):
        parser = _Parser(prog="tablectl")
        subparsers = parser.add_subparsers(dest="command", parser_class=_Parser)
        importlib.import_module(module).register(subparsers)
        expected = [(c.name, c.help) for c in COMMANDS if c.module == module]
        assert _listed(parser) == expected, module
    assert _listed(build_parser("run")) == _listed(build_parser())


def test_command_of_skips_tablectl_options() -> None:
    assert command_of(["--log-level", "DEBUG", "run", "--config", "x"]) == "run"
    assert command_of(["--log-level=INFO", "journal", "verify"]) == "journal"
    assert command_of(["--help"]) is None and command_of([]) is None


def _modules_after(*argv: str) -> set[str]:
    """The modules a fresh interpreter holds after ``tablectl ARGV`` (and, for ``run``, the
    service's wiring imported as its start imports it); deferred stand-ins and modules kept out
    (``None`` in ``sys.modules``) not counted."""
    code = ("import sys\n"
            "from controller.cli import main\n"
            f"assert main({list(argv)!r}) == 0\n"
            "if 'controller.cli.run' in sys.modules:\n"
            "    import controller.service.lifecycle.app, controller.service.wiring.pipeline\n"
            "print('\\n'.join(name for name, module in sys.modules.items()\n"
            "      if module is not None and type(module).__name__ != 'DeferredModule'))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    return set(done.stdout.split())


def test_run_loads_neither_other_subcommands_nor_asyncio() -> None:
    """``tablectl run`` parses with its own module only, and with its logging set up
    (structlog) and the service's wiring loaded, asyncio and ssl are not; ``tablectl games``
    does not load the service."""
    run = _modules_after("run", "--check")
    assert "controller.cli.run" in run and "structlog" in run
    assert "controller.service.wiring.pipeline" in run
    others = {c.module for c in COMMANDS} - {"controller.cli.run"}
    assert run & others == set()
    assert "asyncio" not in run and "ssl" not in run
    assert "greenlet" not in run and "structlog.threadlocal" in run  # its fallback, not greenlet
    games = _modules_after("games")
    assert "controller.cli.games" in games and "controller.cli.run" not in games
