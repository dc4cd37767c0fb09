"""``tablectl run [--config PATH] [--check]``: the table service (systemd runs this).

A bad config is one line naming the file, the key and the problem, exit 2: the service refuses
to start rather than run a table on a guess, and systemd does not retry it. A journal disk that
is full or read-only is not a config error: one line, a wait that backs off across restarts,
then exit 75 (``EX_TEMPFAIL``), which systemd retries (:mod:`controller.service.lifecycle.backoff`).
``--check`` only validates (exit 0 when good), for ``ExecStartPre=`` or an operator editing
``/etc/tablectl/tablectl.toml``. Both load the config (:func:`load_config`: the text) and check
what it names on this machine (:func:`check_host`: the deck map, the socket's group, the
software manifest and key) with the same functions, before anything starts; ``--check`` then
calls, read-only, the checks the service's start-up makes itself (the device path:
:func:`check_device_path`, which ``run`` calls as it opens the device; the journal and its key),
so ``--check`` never says OK where ``run`` refuses.

Without ``--config`` the embedded simulated bench table runs, but only on a machine with no
table hardware: if a udev name of a table device exists, running the bench there would be a
mistake, so it refuses and asks for the config.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

from controller.cli.argtypes import nonempty_path
from controller.heap import Housekeeper, tune_for_service
from controller.journal.damage import Damage, check_line
from controller.journal.errors import JournalError
from controller.journal.files import journal_files, read_lines
from controller.journal.record import Record
from controller.service.lifecycle.app import Service
from controller.service.lifecycle.backoff import EXIT_TEMPFAIL, StartBackoff
from controller.service.config import (
    ServiceConfig,
    check_host,
    default_bench_config,
    load_config,
)
from controller.service.wiring.devices import check_device_path
from controller.service.errors import ConfigError, ResourceUnavailableError, ServiceError
from controller.service.keyfile import load_service_key

HARDWARE_PATHS: tuple[Path, ...] = (Path("/dev/table-shuffler"), Path("/dev/table-shoe"))
"""udev names given by systemd/99-tablectl.rules: their presence means a real table."""
DEFAULT_CONFIG_HINT = "/etc/tablectl/tablectl.toml"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("run", help="run the table service (systemd runs this)")
    parser.add_argument("--config", metavar="PATH", type=nonempty_path,
                        help="TOML config (docs/service.md); without it, the simulated bench "
                             "table on a machine with no table hardware")
    parser.add_argument("--check", action="store_true",
                        help="only validate the config and exit")
    parser.set_defaults(func=run)


def resolve_config(path: str | None) -> ServiceConfig:
    if path is not None:
        return load_config(path)
    present = [str(p) for p in HARDWARE_PATHS if p.exists()]
    if present:
        raise ConfigError("(no --config)", None,
                          f"table hardware is present ({', '.join(present)}); refusing to run "
                          f"the simulated bench table here: pass --config {DEFAULT_CONFIG_HINT}")
    return default_bench_config()


def describe(config: ServiceConfig) -> str:
    device = config.device
    how = device.kind.value + (f"/{device.dialect.value}" if device.dialect else "")
    return (f"table {config.table_id}, game {config.game.value}, boxes {' '.join(config.boxes)}, "
            f"{how} at {device.url}, journal {config.journal.directory} "
            f"({config.journal.durability.value}, "
            f"{'HMAC ' + str(config.journal.hmac_key_file) if config.journal.hmac_key_file else 'NO HMAC'}"
            f"), control {config.control.socket}")


def check_journal_place(directory: Path, key: bytes | None) -> None:
    """What start-up would refuse about the journal, without opening it for writing: a
    directory that is a file or that this account cannot read and write, and an HMAC key that
    is not the one the journal's newest record was written with (``run`` refuses to append to
    a chain it cannot verify). Raises :class:`ServiceError` naming the problem."""
    if directory.exists():
        if not directory.is_dir():
            raise ServiceError(f"journal.directory {directory}: not a directory")
        if not os.access(directory, os.R_OK | os.W_OK | os.X_OK):
            raise ServiceError(f"journal.directory {directory}: this account cannot read and "
                              f"write it")
    else:
        parent = next((p for p in directory.parents if p.exists()), None)
        if parent is None or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise ServiceError(f"journal.directory {directory}: does not exist and cannot be "
                              f"made here ({parent} is not writable)")
        return
    if key is None:
        return
    try:
        files = journal_files(directory)
        newest: bytes | None = None
        if files:
            for _number, raw, _terminated in read_lines(files[-1]):
                newest = raw
    except (OSError, JournalError) as error:
        raise ServiceError(f"journal.directory {directory}: {error}") from error
    if newest is None:
        return
    found = check_line(newest, key)
    if not isinstance(found, Record) and found.kind is Damage.BAD_HMAC:
        raise ServiceError(f"journal.hmac_key_file: not the key the journal in {directory} was "
                          f"written with (its newest record's HMAC does not match)")


def run(args: argparse.Namespace) -> int:
    config = resolve_config(args.config)
    unkeyed = config.journal.unkeyed_warning()
    check_host(config)  # with --check or without: one line naming the file and the key
    if args.check:
        # The checks the service's start-up makes itself, the same functions (the device path:
        # open_device), read-only, so a config that passes --check is not refused by run.
        check_device_path(config.device)
        key = None
        if config.journal.hmac_key_file is not None:
            key = load_service_key(config.journal.hmac_key_file)
        check_journal_place(config.journal.directory, key)
        print(f"config OK: {config.source}: {describe(config)}")
        if unkeyed:
            print(f"tablectl run: WARNING: {unkeyed}", file=sys.stderr)
        return 0
    if args.config is None:
        print(f"tablectl run: no --config: the simulated bench table ({describe(config)})",
              file=sys.stderr)
    tune_for_service()  # before the service starts a thread (controller.heap)
    service = Service(config)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        service.request_stop()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    backoff = StartBackoff.from_environ()
    try:
        try:
            service.start()
        except ResourceUnavailableError as error:
            return _retry_later(service, backoff, error)
        backoff.reset()
        housekeeper = Housekeeper()
        try:
            housekeeper.run()  # freezes start-up's objects
            while not service.wait(housekeeper.interval):
                housekeeper.run()
        finally:
            service.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _retry_later(service: Service, backoff: StartBackoff, error: ResourceUnavailableError
                 ) -> int:
    """A full or read-only journal disk may come back: say so, wait (backing off across
    systemd's restarts, :mod:`controller.service.lifecycle.backoff`; a stop request ends the wait)
    and exit :data:`EXIT_TEMPFAIL`, which the unit restarts, unlike exit 2."""
    delay = backoff.failed()
    print(f"tablectl run: {error}; exit {EXIT_TEMPFAIL} in {delay:g} s for systemd to retry "
          f"(failure {backoff.failures()} in a row)", file=sys.stderr)
    service.notifier.notify(f"EXTEND_TIMEOUT_USEC={int((delay + 10) * 1_000_000)}")
    service.notifier.status(f"journal disk unavailable, retrying: {error}")
    service.wait(delay)
    return EXIT_TEMPFAIL
