"""The web process's config: ``[web]`` in its own TOML file (``/etc/tablectl/web.toml``).

Safe by default: it listens on 127.0.0.1. Any other address needs TLS (a certificate and its
key) and an accounts file, or the process refuses to start, naming the key. Without an
accounts file (loopback only) every viewer gets ``local_role``, the dealer's screen by default:
the Pi's own kiosk. The keys are declared in :data:`FIELDS` and read by the project's one TOML
reader (:mod:`controller.service.tomlread`), the command line's values by the same specs.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import socket
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from controller.roles import Role, person_role
from controller.service.tomlread import FieldSpec, FieldType, Section, load_document
from controller.web.dealer import DEFAULT_CHIPS
from controller.web.errors import WebConfigError
from controller.web.localtime import LocalZone
from controller.web.video import VideoLink
from drivers.errors import DriverConfigError
from drivers.shoe.hid import parse_usb_url

DEFAULT_PORT = 8640
DEFAULT_JOURNAL = "/var/lib/tablectl/journal"
DEFAULT_SOCKET = "/run/tablectl/control.sock"
MIN_SUPERVISOR_IDLE = 10
MAX_SUPERVISOR_IDLE = 3600
MAX_CHIPS = 12
"""Chip buttons on the dealer's screen: more would not fit a row at 800x480 with 48 px targets."""
MAX_CHIP = 10**12
_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")
"""One label of a host name (RFC 1123): letters, digits and inner hyphens, at most 63."""


@dataclass(frozen=True, slots=True)
class WebConfig:
    listen: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    tls_cert: Path | None = None
    tls_key: Path | None = None
    accounts: Path | None = None
    local_role: Role = Role.DEALER
    journal: Path = Path(DEFAULT_JOURNAL)
    hmac_key_file: Path | None = None
    socket: Path = Path(DEFAULT_SOCKET)
    index: Path | None = None
    """The SQLite index (rebuildable); default: ``web-index-<journal path digest>.sqlite`` in
    the state directory (one per journal, so pointing at another journal is no mismatch)."""
    timezone: LocalZone | None = None
    """The zone local times are shown in beside UTC; None: the Pi's own (read at start)."""
    video_url: VideoLink | None = None
    """The surveillance video link's template; None: no link."""
    chips: tuple[int, ...] = DEFAULT_CHIPS
    """The chip denominations on the dealer's screen, minor units, as this table's cage issues
    them (the table's own limits still decide what a wager may be)."""
    supervisor_idle_seconds: int = 120
    """A supervisor logged in at the dealer's screen (PIN) is logged out after this long
    without a supervisor action."""
    badge_reader: str | None = None
    """The kiosk's USB HID badge reader, ``usb:VID:PID[:SERIAL]``; None: no reader."""
    badge_needs_pin: bool = True
    """A badge stands in for the supervisor's name; the PIN is still asked (two factors)
    unless the house sets this false."""

    def local_zone(self) -> LocalZone:
        return self.timezone if self.timezone is not None else LocalZone.system()

    @property
    def loopback(self) -> bool:
        try:
            return ipaddress.ip_address(self.listen).is_loopback
        except ValueError:
            return self.listen == "localhost"

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    def index_path(self) -> Path:
        if self.index is not None:
            return self.index
        state = os.environ.get("STATE_DIRECTORY") or os.environ.get("XDG_STATE_HOME") \
            or str(Path.home() / ".local" / "state")
        folder = Path(state.split(":")[0]) / ("" if "STATE_DIRECTORY" in os.environ
                                              else "tablectl")
        folder.mkdir(parents=True, exist_ok=True, mode=0o750)
        digest = hashlib.sha256(str(self.journal.resolve()).encode()).hexdigest()[:12]
        return folder / f"web-index-{digest}.sqlite"

    def checked(self) -> WebConfig:
        """This config, or :class:`WebConfigError` naming what makes it unsafe."""
        if (self.tls_cert is None) != (self.tls_key is None):
            raise WebConfigError("web.tls_cert and web.tls_key go together")
        if not self.loopback and not self.tls:
            raise WebConfigError(f"web.listen {self.listen}: remote access needs TLS "
                                 "(web.tls_cert, web.tls_key)")
        if not self.loopback and self.accounts is None:
            raise WebConfigError(f"web.listen {self.listen}: remote access needs accounts "
                                 "(web.accounts; add them with tablectl web passwd)")
        for name in ("tls_cert", "tls_key", "accounts"):
            path = getattr(self, name)
            if path is not None and not path.is_file():
                raise WebConfigError(f"web.{name} {path}: not a readable file")
        if self.badge_reader is not None and self.accounts is None:
            raise WebConfigError(f"web.badge_reader {self.badge_reader}: badges belong to "
                                 "accounts (web.accounts; tablectl web passwd --badge)")
        if not 0 <= self.port < 65536:
            raise WebConfigError(f"web.port {self.port}: not a port")
        return self


def listen_problem(address: str) -> str | None:
    """What is wrong with ``address`` as ``web.listen`` (``--listen``), or None: it must be an
    IP address, or a host name this machine's resolver knows. Asked before anything else, so
    a mistyped address is named as one instead of being taken for a remote one that needs
    TLS. A name is only looked up once it is spelled like one (``not..an..address`` never
    reaches the resolver); a numeric shorthand the C library would take (``127.1``,
    ``0x7f.1``) is refused with its full form, since the loopback check reads the address as
    written."""
    if not address.strip():
        return "empty (give an address: 127.0.0.1, or 0.0.0.0 for every interface)"
    try:
        ipaddress.ip_address(address)
        return None
    except ValueError:
        pass
    try:
        numeric = socket.getaddrinfo(address, None, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError, ValueError):
        numeric = []
    if numeric:
        return f"a shorthand IP address; write it in full ({numeric[0][4][0]})"
    name = address.removesuffix(".")
    if len(name) > 253 or not all(_HOST_LABEL.match(label) for label in name.split(".")):
        return "not an IP address or a host name"
    try:
        socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        return f"a host name this machine does not resolve ({reason})"
    return None


def _listen(value: str) -> str:
    problem = listen_problem(value)
    if problem is not None:  # the address first, so it is not blamed on TLS (issue 31)
        raise WebConfigError(f"web.listen {value!r}: {problem}")
    return value


def _chips(value: tuple[int, ...]) -> tuple[int, ...]:
    """``web.chips``: 1 to MAX_CHIPS distinct positive integers (minor units), shown sorted."""
    if not value or len(value) > MAX_CHIPS:
        raise ValueError(f"1 to {MAX_CHIPS} positive whole amounts in minor units (500 = 5.00), "
                         f"got {len(value)} of them")
    return tuple(sorted(set(value)))


def _badge_reader(value: str) -> str | None:
    """``web.badge_reader``: ``usb:VID:PID[:SERIAL]`` as the shoe's HID url ("" : none)."""
    if not value:
        return None
    try:
        parse_usb_url(value)
    except DriverConfigError as error:
        raise ValueError(str(error)) from error
    return value


FIELDS = (
    FieldSpec("listen", FieldType.TEXT, empty_ok=True, check=_listen),
    FieldSpec("port", FieldType.INTEGER, minimum=0, maximum=65535),
    FieldSpec("tls_cert", FieldType.PATH, empty_ok=True),
    FieldSpec("tls_key", FieldType.PATH, empty_ok=True),
    FieldSpec("accounts", FieldType.PATH, empty_ok=True),
    FieldSpec("local_role", FieldType.TEXT, check=person_role),
    FieldSpec("journal", FieldType.PATH),
    FieldSpec("hmac_key_file", FieldType.PATH, empty_ok=True),
    FieldSpec("socket", FieldType.PATH),
    FieldSpec("index", FieldType.PATH, empty_ok=True),
    FieldSpec("timezone", FieldType.TEXT, empty_ok=True,
              check=lambda name: LocalZone.named(name) if name else None),
    FieldSpec("video_url", FieldType.TEXT, empty_ok=True,
              check=lambda template: VideoLink.parse(template) if template else None),
    FieldSpec("supervisor_idle_seconds", FieldType.INTEGER, minimum=MIN_SUPERVISOR_IDLE,
              maximum=MAX_SUPERVISOR_IDLE, unit="s"),
    FieldSpec("chips", FieldType.INTEGERS, minimum=1, maximum=MAX_CHIP, unit="minor", check=_chips),
    FieldSpec("badge_reader", FieldType.TEXT, empty_ok=True, check=_badge_reader),
    FieldSpec("badge_needs_pin", FieldType.BOOLEAN),
)
"""``[web]``, key by key (docs/web.md); a key not given keeps :class:`WebConfig`'s default.
Relative paths are taken from the config file's directory (the working directory for a
command-line option)."""
COMMAND_LINE = "the command line"


def _error(source: str, key: str | None, problem: str) -> WebConfigError:
    return WebConfigError(f"{source}: {key + ': ' if key else ''}{problem}")


def load_web_config(path: Path | None, **override: Any) -> WebConfig:
    """The config file (if any) with command-line values over it, checked."""
    values: dict[str, Any] = {}
    if path is not None:
        root = load_document(path, error=_error)
        if set(root.names()) != {"web"}:
            raise root.error(None, "expected one [web] table")
        section = root.section("web")
        assert section is not None
        values = section.read(FIELDS, given_only=True)
        root.finish()
    given = {key: str(value) if isinstance(value, Path) else value
             for key, value in override.items() if value is not None}
    values |= Section(COMMAND_LINE, "web", given, error=_error).read(FIELDS, given_only=True)
    return replace(WebConfig(), **values).checked()
