"""``studio.toml``: where the gateway listens, its TLS files, which game servers it admits.

The gateway is off unless this file exists and ``tablectl studio`` (its own unit) is started:
the table service itself never opens a network listener. Unknown keys are errors, like the
service's config, so a typo never silently turns a protection off."""

from __future__ import annotations

import ipaddress
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.studio.errors import StudioConfigError

DEFAULT_MAX_BATCH = 500
MAX_BATCH_CEILING = 5000
DEFAULT_BETTING_SECONDS = 15
DEFAULT_MAX_PENDING = 4096
DEFAULT_MAX_PENDING_PER_ADDRESS = 128
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,48}$")
_KEYS = frozenset({"listen", "port", "certificate", "private_key", "client_ca", "clients",
                   "control_socket", "ledger", "max_batch", "max_connections",
                   "max_betting_seconds", "max_pending", "max_pending_per_address"})


@dataclass(frozen=True, slots=True)
class StudioConfig:
    """Everything ``tablectl studio`` needs; paths are absolute."""

    listen: str
    port: int
    certificate: Path
    private_key: Path
    client_ca: Path
    clients: frozenset[str]
    """The game servers admitted: each is a client certificate's subject CN, signed by
    ``client_ca``. A certificate the CA signed for any other name is refused (least privilege:
    the CA may also sign the tables' feed certificates)."""
    control_socket: Path
    ledger: Path
    """The gateway's own append-only record of idempotency keys, their answers and its refusals
    (a JSON line each, fsync'ed before the answer leaves)."""
    max_batch: int = DEFAULT_MAX_BATCH
    max_connections: int = 16
    """Certified connections served at once, each on its own thread; each listed game server
    keeps at least ``max_connections // len(clients)`` of them (server.py, ``Slots``)."""
    max_betting_seconds: int = 120
    max_pending: int = DEFAULT_MAX_PENDING
    """TLS handshakes under way at once (a socket each, no thread, no slot); at the bound the
    oldest is dropped for the newest. Capped at start by the process's open-file limit."""
    max_pending_per_address: int = DEFAULT_MAX_PENDING_PER_ADDRESS
    """The same, from one peer address: its own oldest is dropped for its newest."""


def load_studio_config(path: str | Path) -> StudioConfig:
    """Read and check ``path``; :class:`StudioConfigError` names the first problem."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise StudioConfigError(f"studio config {path}: {error.strerror or error}") from error
    except tomllib.TOMLDecodeError as error:
        raise StudioConfigError(f"studio config {path}: not TOML: {error}") from error
    section = raw.get("studio")
    if not isinstance(section, dict) or set(raw) != {"studio"}:
        raise StudioConfigError(f"studio config {path}: needs exactly one [studio] table")
    return parse_studio(section, path.parent)


def parse_studio(section: dict[str, Any], base: Path) -> StudioConfig:
    unknown = sorted(set(section) - _KEYS)
    if unknown:
        raise StudioConfigError(f"studio.{unknown[0]}: unknown key (keys are "
                                f"{', '.join(sorted(_KEYS))})")
    listen = _text(section, "listen", "127.0.0.1")
    try:
        ipaddress.ip_address(listen)
    except ValueError as error:
        raise StudioConfigError(f"studio.listen: {listen!r} is not an IP address") from error
    clients = section.get("clients")
    if not isinstance(clients, list) or not clients \
            or not all(isinstance(c, str) and _NAME.match(c) for c in clients):
        raise StudioConfigError("studio.clients: a non-empty list of game-server names (each "
                                "the CN of its client certificate, 1-48 of A-Z a-z 0-9 . _ -)")
    return StudioConfig(
        listen=listen,
        port=_integer(section, "port", None, 1, 65535),
        certificate=_path(section, "certificate", base),
        private_key=_path(section, "private_key", base),
        client_ca=_path(section, "client_ca", base),
        clients=frozenset(clients),
        control_socket=_path(section, "control_socket", base,
                             default="/run/tablectl/control.sock"),
        ledger=_path(section, "ledger", base, default="/var/lib/tablectl-studio/ledger.jsonl"),
        max_batch=_integer(section, "max_batch", DEFAULT_MAX_BATCH, 1, MAX_BATCH_CEILING),
        max_connections=_integer(section, "max_connections", 16, 1, 256),
        max_betting_seconds=_integer(section, "max_betting_seconds", 120, 1, 3600),
        max_pending=_integer(section, "max_pending", DEFAULT_MAX_PENDING, 16, 65536),
        max_pending_per_address=_integer(section, "max_pending_per_address",
                                         DEFAULT_MAX_PENDING_PER_ADDRESS, 1, 65536),
    )


def _text(section: dict[str, Any], key: str, default: str | None) -> str:
    value = section.get(key, default)
    if not isinstance(value, str) or not value:
        raise StudioConfigError(f"studio.{key}: required, a non-empty string")
    return value


def _integer(section: dict[str, Any], key: str, default: int | None, low: int,
             high: int) -> int:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise StudioConfigError(f"studio.{key}: required, an integer from {low} to {high}, "
                                f"got {value!r}")
    return value


def _path(section: dict[str, Any], key: str, base: Path, default: str | None = None) -> Path:
    value = Path(_text(section, key, default))
    return value if value.is_absolute() else base / value
