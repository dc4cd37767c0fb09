"""``studio.toml``: where the gateway listens, its TLS files, which game servers it admits.

The gateway is off unless this file exists and ``tablectl studio`` (its own unit) is started:
the table service itself never opens a network listener. Unknown keys are errors, like the
service's config, so a typo never silently turns a protection off: the keys are declared in
:data:`FIELDS` and read by the project's one TOML reader (:mod:`controller.service.tomlread`)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from controller.service.tomlread import FieldSpec, FieldType, load_document
from controller.studio.errors import StudioConfigError

DEFAULT_MAX_BATCH = 500
MAX_BATCH_CEILING = 5000
DEFAULT_BETTING_SECONDS = 15
DEFAULT_MAX_PENDING = 4096
DEFAULT_MAX_PENDING_PER_ADDRESS = 128
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,48}$")


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


def _address(listen: str) -> str:
    try:
        ipaddress.ip_address(listen)
    except ValueError as error:
        raise ValueError(f"{listen!r} is not an IP address") from error
    return listen


def _clients(names: tuple[str, ...]) -> frozenset[str]:
    if not names or not all(_NAME.match(name) for name in names):
        raise ValueError("a non-empty list of game-server names (each the CN of its client "
                         "certificate, 1-48 of A-Z a-z 0-9 . _ -)")
    return frozenset(names)


FIELDS = (
    FieldSpec("listen", FieldType.TEXT, "127.0.0.1", check=_address),
    FieldSpec("port", FieldType.INTEGER, minimum=1, maximum=65535),
    FieldSpec("certificate", FieldType.PATH),
    FieldSpec("private_key", FieldType.PATH),
    FieldSpec("client_ca", FieldType.PATH),
    FieldSpec("clients", FieldType.TEXTS, check=_clients),
    FieldSpec("control_socket", FieldType.PATH, Path("/run/tablectl/control.sock")),
    FieldSpec("ledger", FieldType.PATH, Path("/var/lib/tablectl-studio/ledger.jsonl")),
    FieldSpec("max_batch", FieldType.INTEGER, DEFAULT_MAX_BATCH, minimum=1,
              maximum=MAX_BATCH_CEILING),
    FieldSpec("max_connections", FieldType.INTEGER, 16, minimum=1, maximum=256),
    FieldSpec("max_betting_seconds", FieldType.INTEGER, 120, minimum=1, maximum=3600, unit="s"),
    FieldSpec("max_pending", FieldType.INTEGER, DEFAULT_MAX_PENDING, minimum=16, maximum=65536),
    FieldSpec("max_pending_per_address", FieldType.INTEGER, DEFAULT_MAX_PENDING_PER_ADDRESS,
              minimum=1, maximum=65536),
)
"""``[studio]``, key by key (docs/studio.md); relative paths are beside the file."""


def _error(source: str, key: str | None, problem: str) -> StudioConfigError:
    return StudioConfigError(f"studio config {source}: {key + ': ' if key else ''}{problem}")


def load_studio_config(path: str | Path) -> StudioConfig:
    """Read and check ``path``; :class:`StudioConfigError` names the file, the key and the
    first problem."""
    root = load_document(path, error=_error)
    if set(root.names()) != {"studio"}:
        raise root.error(None, "needs exactly one [studio] table")
    section = root.section("studio")
    assert section is not None
    values = section.read(FIELDS)
    root.finish()
    return StudioConfig(**values)
