"""The service configuration: one TOML file (``tomllib``) -> frozen values, checked once.

The service refuses to start on a bad config rather than run a table on a guess, so every check
happens here, before any device is opened, and every error is one :class:`ConfigError` line
naming the file, the dotted key (``limits.tie.max``) and the problem. Unknown keys are errors.
Two kinds of check: :func:`parse_config` judges the text alone (types, ranges, and keys that
together make a table that cannot work: a rounding unit above the smallest minimum bet, a
progressive limit that excludes the progressive stake), so a client or a test may read any
config anywhere; :func:`check_host` judges what the file names on *this* machine (the socket's
group, the deck map, the software manifest and key), and ``tablectl run`` calls it right after
loading, with ``--check`` or without (controller/cli/run.py), before anything starts.
Every key is documented in ``docs/service.md``; ``systemd/tablectl.example.toml`` is a complete
example that the tests load.

Relative paths (journal directory, HMAC key file, control socket, a deck map file, the software
manifest and key) are resolved against the directory of the config file, so a config and its
key can travel together.

:func:`default_bench_config` is the embedded configuration of the simulated bench table, used by
``tablectl run`` without ``--config`` on a machine with no table hardware. It is TOML text read
by the same loader, so it can never drift out of what the loader accepts.
"""

from __future__ import annotations

import grp
import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from controller.errors import WagerError
from controller.games.catalog import GAMES
from controller.games.rules import GameId, GameRules
from controller.journal.policy import Durability
from controller.protection.feed import Feed
from controller.roles import PERSON_ROLES
from controller.service.errors import ConfigError
from controller.service.policy import (
    DEFAULT_FLOOD_BURST,
    DEFAULT_FLOOD_WINDOW_SECONDS,
    DEFAULT_IDLE_SECONDS,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_PER_ACCOUNT,
    DEFAULT_RESERVED_CONNECTIONS,
    ClockPolicy,
    ConnectionLimits,
    FloodLimits,
)
from controller.service.tomlread import (
    FieldSpec,
    FieldType,
    Section,
    choice,
    load_document,
    parse_document,
)
from controller.settlement.model import BetLimit, ProgressiveConfig, Wager
from controller.settlement.validate import check_wager
from drivers.shoe import ShoeDialect

DEFAULT_CONTROL_SOCKET = Path("/run/tablectl/control.sock")
DEFAULT_OPERATORS_GROUP = "tablectl-operators"
DEFAULT_SURVEILLANCE_GROUP = "tablectl-surveillance"
DEFAULT_SUPERVISORS_GROUP = "tablectl-supervisors"
DEFAULT_SOCKET_GROUP = "tablectl-control"
DEFAULT_RETENTION_DAYS = 365
DEFAULT_BACKGROUND_CHECK_HOURS = 24
"""``[journal] background_check_hours``: the full chain checked daily, as retention runs (0:
off; docs/service.md)."""
DEFAULT_BACKGROUND_CHECK_DELAY_SECONDS = 60
"""``[journal] background_check_delay_s``: the first full check a minute after READY, once the
start-up's own work (the protection monitors' warm-up) is done."""
BENCH_SOURCE = "<embedded bench config>"
MAX_LIMIT_MINOR = 10**12
"""The largest bet limit, in minor units (10,000,000,000.00 at 100 minor units to the major):
a stake times the largest payout of any supported pay table (MBS-R3P 188 to 1) stays far below
:data:`~controller.service.protocol.MAX_MINOR_UNITS`, which the journal and JSON floor systems
carry exactly."""

MAX_ROUNDING_UNIT = 1_000_000
"""The largest ``table.rounding_unit`` of a table with no positive bet minimum (10,000.00 at 100
minor units to the major unit, above any table's smallest chip). With minimums, the unit is at
most the smallest of them: the unit is the smallest amount the table pays, and a unit above
the smallest wager it takes rounds that wager's 1:2 win and pro-rated stake down to nothing
(docs/money.md; docs/service.md, ``[table]``)."""

_TABLE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_GROUP = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_USB_HID = re.compile(r"^usb:[0-9a-fA-F]{4}:[0-9a-fA-F]{4}(:[^:/\s]+)?$")
_USB_BULK = re.compile(r"^usb://[0-9a-fA-F]{4}:[0-9a-fA-F]{4}(/\S+)?$")
_SOCKET_URL = re.compile(r"^socket://(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$")
FEED_SECTION = "feed"
"""The one section of this file the service does not read: ``tablectl feed``'s own, which its
reader checks by its own spec (docs/feed.md)."""
SIM_URL = "sim"
"""Device URL meaning "the firmware_sim device of this kind, started in-process"."""
SIM_SCHEME = "sim://"
"""The simulator named by URL, as pyserial's ``serial_for_url`` and python-can's virtual bus
name theirs: ``sim://shuffler?seed=7``, ``sim://shoe/beetek``, ``sim://shuffler?model=NAME``.
The kind (and a shoe's dialect) must agree with ``[device]``; ``seed`` makes the simulated deals
repeatable, ``model`` picks a faulty shuffling machine (``tablectl bench --shuffler``'s names).
The simulator itself is found by name in the ``tablectl.simulators`` entry points."""
SIM_QUERY_KEYS = ("seed", "model")
MAX_SIM_SEED = 2**63 - 1
"""The largest ``device.seed`` (a ``sim://...?seed=N`` URL takes at most 19 digits)."""


class DeviceKind(str, Enum):
    """How cards reach the hands (the table's ``DealingDevice``)."""

    SHUFFLER = "shuffler"
    SHOE = "shoe"
    LIVE = "live"
    """The LIVE-3P studio procedure (4 burn cards, face up P1 -> P2 -> P3 -> Banker), read by a
    shoe; required for, and only for, live-three-pictures."""


@dataclass(frozen=True, slots=True)
class DeviceConfig:
    kind: DeviceKind
    url: str
    """A serial path (``/dev/table-shuffler``), ``socket://host:port``, ``usb:VID:PID[:SERIAL]``
    (HID scanner), ``usb://VVVV:PPPP[/SERIAL]`` (framed device on USB bulk), ``sim`` or a
    ``sim://`` URL (:data:`SIM_SCHEME`)."""
    dialect: ShoeDialect | None = None
    deck: str | None = None
    """Barcode deck map for the scanner and hid dialects: a shipped name, or a JSON file's path
    (relative to the config file's directory, made absolute here)."""
    seed: int | None = None
    """Seed of the simulator (a simulated device only), so that ``tablectl bench --seed``, a
    ``sim://...?seed=N`` URL or ``device.seed`` (with ``url = "sim"`` or a ``sim://`` URL
    without one) deals the same cards and paces its reconnects the same every run. Refused for a
    real device: a real table's shuffles come from its own mechanism."""
    shuffle_model: str = "fair"
    """How the simulated shuffler orders its deck (``tablectl bench --shuffler``, a faulty
    machine from :mod:`firmware_sim.shuffle_models`): ``tablectl bench --shuffler`` or a
    ``sim://shuffler?model=NAME`` URL, refused at start by the simulator if it has no such model."""

    @property
    def simulated(self) -> bool:
        return self.url == SIM_URL or self.url.startswith(SIM_SCHEME)


DEFAULT_KEY_NAME = "journal.key"
"""The HMAC key the service uses when ``journal.hmac_key_file`` is not set: ``journal.key``
beside the config file (``/etc/tablectl/journal.key``, created at install), when it exists."""


@dataclass(frozen=True, slots=True)
class JournalConfig:
    directory: Path
    durability: Durability = Durability.MONEY
    hmac_key_file: Path | None = None
    retention_days: int = DEFAULT_RETENTION_DAYS
    ephemeral: bool = False
    """A journal nobody will review (``tablectl bench`` without ``--journal-dir``: a temporary
    directory removed at exit): no HMAC warning. Never set by a config file."""
    background_check_hours: int = DEFAULT_BACKGROUND_CHECK_HOURS
    """The full chain checked in a low-priority process after READY and then every so many
    hours (0: never; :mod:`controller.journal.background`)."""
    background_check_delay_s: int = DEFAULT_BACKGROUND_CHECK_DELAY_SECONDS
    flood: FloodLimits = FloodLimits()
    """``flood_burst`` / ``flood_window_s``: per source, refused commands and link errors
    journaled in full per window; the rest counted in one ``flood_summary``
    (:mod:`controller.service.wiring.floodgate`)."""

    def unkeyed_warning(self) -> str | None:
        """The loud line for a journal without HMAC (start-up log, ``run --check``)."""
        if self.hmac_key_file is not None or self.ephemeral:
            return None
        return (f"journal HMAC is OFF for {self.directory}: whoever can write it can rewrite "
                "records and rehash the chain, head included, undetected; create the key "
                "(docs/install-raspberry-pi.md, step 5) and set journal.hmac_key_file")


class SoftwareVerify(str, Enum):
    """What the service does with the software check (docs/install-raspberry-pi.md)."""

    REPORT = "report"
    """Check and journal the verdict with every session; rounds open either way."""
    REQUIRED = "required"
    """As report, and no round opens unless the software verified."""


@dataclass(frozen=True, slots=True)
class SoftwareConfig:
    """``[software]``: the signed release manifest and the public key that verifies it."""

    manifest: Path | None = None
    public_key: Path | None = None
    verify: SoftwareVerify = SoftwareVerify.REPORT


@dataclass(frozen=True, slots=True)
class ControlConfig:
    socket: Path = DEFAULT_CONTROL_SOCKET
    socket_group: str | None = DEFAULT_SOCKET_GROUP
    """Group of the socket file (mode 0660); ``None`` keeps the service's own group."""
    operators_group: str = DEFAULT_OPERATORS_GROUP
    surveillance_group: str = DEFAULT_SURVEILLANCE_GROUP
    supervisors_group: str = DEFAULT_SUPERVISORS_GROUP
    """Members command as Pit Supervisors; operators (dealers) may not take their decisions."""
    limits: ConnectionLimits = ConnectionLimits()
    """Connection slots (and those reserved for supervisors and root), idle timeout."""
    web_group: str | None = None
    """Members may act for the person logged in on their screen (the web process's account;
    docs/service.md, "Delegation"); ``None``: nobody but root and the service's account."""
    web_roles: frozenset[str] = frozenset({"operator", "supervisor"})
    """The roles ``web_group`` may act in (of surveillance, operator, supervisor), in the
    control socket's words (:attr:`controller.roles.Role.socket_name`)."""
    studio_group: str | None = None
    """Members may act for a game server as ``operator`` only (the studio gateway's account;
    docs/studio.md); ``None``: no such group."""


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    source: str
    """The file it came from (or :data:`BENCH_SOURCE`), for messages."""
    table_id: str
    game: GameId
    boxes: tuple[str, ...]
    device: DeviceConfig
    journal: JournalConfig
    limits: Mapping[str, BetLimit] = field(default_factory=lambda: MappingProxyType({}))
    rounding_unit: int = 1
    options_deadline_s: int = 120
    """``[table] options_deadline_s``: how long the players' options stay open."""
    settle_on_deal_complete: bool = False
    """``[table] settle_on_deal_complete``: a LIVE-3P studio table settles with the last card."""
    progressive: ProgressiveConfig | None = None
    control: ControlConfig = ControlConfig()
    software: SoftwareConfig = SoftwareConfig()
    clock: ClockPolicy = ClockPolicy()
    """``[clock]``: may rounds open on an untrusted clock, and what counts as one."""
    protection: bool = True
    """Game-protection monitors on the card stream (:mod:`controller.protection`)."""
    protection_feed: Feed = Feed.COLLECTED_REVERSED
    """``[protection] feed``: how the table feeds its shuffler, the order the monitors judge
    each deck against (:mod:`controller.protection.feed`, docs/game-protection.md)."""

    @property
    def rules(self) -> GameRules:
        return GAMES[self.game.value]

    def layout(self) -> Any:
        """The table's ``TableLayout`` for this config (the seam to ``controller.table``)."""
        from controller.table.layout import DealingDevice, TableLayout

        return TableLayout(game=self.game, device=DealingDevice(self.device.kind.value),
                           boxes=self.boxes, limits=self.limits,
                           rounding_unit=self.rounding_unit, table_id=self.table_id,
                           progressive=self.progressive or ProgressiveConfig(),
                           burns_marked=self.device.dialect is None
                           or self.device.dialect.marks_burns,
                           options_deadline_s=self.options_deadline_s,
                           settle_on_deal_complete=self.settle_on_deal_complete)


def load_config(path: str | Path) -> ServiceConfig:
    """Read and check the config file at ``path``; any problem is one :class:`ConfigError`."""
    root = load_document(path)
    assert root.base is not None  # the file's directory
    return _Reader(root.source, root.base, from_file=True).read(root)


def parse_config(text: str | bytes, *, source: str, base: Path | None = None) -> ServiceConfig:
    """Check TOML ``text``; ``base`` resolves relative paths (default: the working directory)."""
    root = parse_document(text, source, base=base)
    return _Reader(source, base or Path.cwd(), from_file=base is not None).read(root)


_JOURNAL_FIELDS = (
    FieldSpec("directory", FieldType.PATH),
    FieldSpec("durability", FieldType.TEXT, Durability.MONEY, check=choice(Durability, "policy")),
    FieldSpec("hmac_key_file", FieldType.PATH, None, empty_ok=True),
    FieldSpec("retention_days", FieldType.INTEGER, DEFAULT_RETENTION_DAYS, minimum=1, unit="d"),
    FieldSpec("flood_burst", FieldType.INTEGER, DEFAULT_FLOOD_BURST, minimum=1, maximum=1000),
    FieldSpec("flood_window_s", FieldType.INTEGER, DEFAULT_FLOOD_WINDOW_SECONDS, minimum=1,
              maximum=3600, unit="s"),
    FieldSpec("background_check_hours", FieldType.INTEGER, DEFAULT_BACKGROUND_CHECK_HOURS,
              minimum=0, maximum=24 * 31, unit="h"),
    FieldSpec("background_check_delay_s", FieldType.INTEGER, DEFAULT_BACKGROUND_CHECK_DELAY_SECONDS,
              minimum=0, maximum=24 * 3600, unit="s"),
)
"""``[journal]`` (docs/service.md)."""
_SOFTWARE_FIELDS = (
    FieldSpec("manifest", FieldType.PATH),
    FieldSpec("public_key", FieldType.PATH),
    FieldSpec("verify", FieldType.TEXT, SoftwareVerify.REPORT,
              check=choice(SoftwareVerify, "setting")),
)
"""``[software]``: both files, once the section is there."""
_PROTECTION_FIELDS = (
    FieldSpec("feed", FieldType.TEXT, Feed.COLLECTED_REVERSED, check=choice(Feed, "feed")),
)
"""``[protection]``."""
_CLOCK = ClockPolicy()
_CLOCK_FIELDS = (
    FieldSpec("unsynchronised", FieldType.TEXT, _CLOCK.unsynchronised,
              check=choice(type(_CLOCK.unsynchronised), "policy")),
    FieldSpec("max_error_ms", FieldType.INTEGER, _CLOCK.max_error_ms, minimum=1, maximum=60_000,
              unit="ms"),
    FieldSpec("step_threshold_ms", FieldType.INTEGER, _CLOCK.step_threshold_ms, minimum=1,
              maximum=60_000, unit="ms"),
    FieldSpec("status_interval_s", FieldType.INTEGER, _CLOCK.status_interval_s, minimum=10,
              maximum=86_400, unit="s"),
)
"""``[clock]``, its defaults :class:`ClockPolicy`'s."""
_PROGRESSIVE = ProgressiveConfig()
_PROGRESSIVE_FIELDS = (
    FieldSpec("stake", FieldType.INTEGER, _PROGRESSIVE.stake, minimum=1, maximum=MAX_LIMIT_MINOR,
              unit="minor"),
    FieldSpec("seed", FieldType.INTEGER, _PROGRESSIVE.seed, minimum=0, maximum=MAX_LIMIT_MINOR,
              unit="minor"),
    FieldSpec("contribution_per_mille", FieldType.INTEGER, _PROGRESSIVE.contribution_per_mille,
              minimum=0, maximum=1000),
)
"""``[progressive]``, its defaults :class:`ProgressiveConfig`'s."""


def _group(value: str) -> str | None:
    """A Unix group's name (``""``: none, where the key allows it)."""
    if not value:
        return None
    if not _GROUP.match(value):
        raise ValueError(f"{value!r} is not a group name")
    return value


def _socket_path(path: Path) -> Path:
    if len(os.fsencode(path)) > 107:
        raise ValueError("path longer than the 107 bytes a Unix socket allows")
    return path


def _web_roles(roles: tuple[str, ...]) -> frozenset[str]:
    delegable = tuple(role.socket_name for role in PERSON_ROLES)  # the socket's words
    for role in roles:
        if role not in delegable:
            raise ValueError(f"{role!r}: one of {', '.join(delegable)}")
    return frozenset(roles)


_CONTROL = ControlConfig()
_CONTROL_FIELDS = (
    FieldSpec("socket", FieldType.PATH, _CONTROL.socket, check=_socket_path),
    FieldSpec("socket_group", FieldType.TEXT, _CONTROL.socket_group, empty_ok=True, check=_group),
    FieldSpec("operators_group", FieldType.TEXT, _CONTROL.operators_group, check=_group),
    FieldSpec("surveillance_group", FieldType.TEXT, _CONTROL.surveillance_group, check=_group),
    FieldSpec("supervisors_group", FieldType.TEXT, _CONTROL.supervisors_group, check=_group),
    FieldSpec("max_connections", FieldType.INTEGER, DEFAULT_MAX_CONNECTIONS, minimum=1,
              maximum=4096),
    FieldSpec("reserved_connections", FieldType.INTEGER, DEFAULT_RESERVED_CONNECTIONS, minimum=1,
              maximum=64),
    FieldSpec("idle_seconds", FieldType.INTEGER, int(DEFAULT_IDLE_SECONDS), minimum=5,
              maximum=86400, unit="s"),
    FieldSpec("max_per_account", FieldType.INTEGER, DEFAULT_PER_ACCOUNT, minimum=1, maximum=4096),
    FieldSpec("web_group", FieldType.TEXT, None, check=_group),
    FieldSpec("web_roles", FieldType.TEXTS, _CONTROL.web_roles, check=_web_roles),
    FieldSpec("studio_group", FieldType.TEXT, None, check=_group),
)
"""``[control]``, its defaults :class:`ControlConfig`'s; the groups must differ (checked
after)."""


class _Reader:
    def __init__(self, source: str, base: Path, *, from_file: bool = False) -> None:
        self.source = source
        self.base = base
        self.from_file = from_file

    def read(self, root: Section) -> ServiceConfig:
        table = root.section("table", required=True)
        assert table is not None
        table_id = table.string("id")
        if not _TABLE_ID.match(table_id):
            raise table.error("id", f"{table_id!r}: use 1-64 letters, digits, '.', '_' or '-'")
        game_id = table.string("game")
        if game_id not in GAMES:
            raise table.error("game", f"unknown game {game_id!r}; known games: "
                                      f"{', '.join(GAMES)}")
        rules = GAMES[game_id]
        boxes = self._boxes(table, rules)
        rounding_unit = table.integer("rounding_unit", 1, minimum=1, unit="minor")
        options_deadline_s = table.integer("options_deadline_s", 120, minimum=1, unit="s")
        settle_on_deal_complete = table.boolean("settle_on_deal_complete", False)
        if settle_on_deal_complete and rules.id is not GameId.LIVE_3P:
            raise table.error("settle_on_deal_complete", f"only a LIVE-3P studio table settles "
                              f"with the last card; a {rules.cite} round is settled on the "
                              "dealer's command")
        table.finish()

        device_section = root.section("device", required=True)
        assert device_section is not None
        device = self._device(device_section, rules)
        if rules.id is GameId.LIVE_3P and boxes != rules.positions:
            raise table.error("boxes", "LIVE-3P always deals all three Player hands "
                                       f"({', '.join(rules.positions)}); leave boxes out")

        limits_section = root.section("limits")
        limits = self._limits(limits_section, rules)
        progressive = self._progressive(root.section("progressive"), rules)
        self._check_rounding_unit(table, rounding_unit, limits)
        self._check_progressive_limit(limits_section, rules, limits, progressive)
        journal_section = root.section("journal", required=True)
        assert journal_section is not None
        journal = self._journal(journal_section)
        control = self._control(root.section("control"))
        software = self._software(root.section("software"))
        clock = self._clock(root.section("clock"))
        protection_feed = self._protection(root.section("protection"))
        root.leave(FEED_SECTION, "tablectl feed (controller.feed.config)")
        root.finish()
        return ServiceConfig(source=self.source, table_id=table_id, game=rules.id, boxes=boxes,
                             device=device, journal=journal,
                             limits=MappingProxyType(limits), rounding_unit=rounding_unit,
                             options_deadline_s=options_deadline_s,
                             settle_on_deal_complete=settle_on_deal_complete,
                             progressive=progressive, control=control, software=software,
                             clock=clock, protection_feed=protection_feed)

    def _boxes(self, table: Section, rules: GameRules) -> tuple[str, ...]:
        boxes = table.strings("boxes", rules.positions)
        if not boxes:
            raise table.error("boxes", "must name at least one box")
        unknown = [box for box in boxes if box not in rules.positions]
        if unknown:
            raise table.error("boxes", f"{rules.cite} has no box {unknown[0]!r}; its positions "
                                       f"are {', '.join(rules.positions)}")
        if len(set(boxes)) != len(boxes):
            raise table.error("boxes", "a box is listed twice")
        return tuple(p for p in rules.positions if p in boxes)  # dealing (clockwise) order

    def _device(self, section: Section, rules: GameRules) -> DeviceConfig:
        kind_text = section.string("kind")
        try:
            kind = DeviceKind(kind_text)
        except ValueError:
            raise section.error("kind", f"unknown device kind {kind_text!r}; use one of "
                                        f"{', '.join(k.value for k in DeviceKind)}") from None
        if rules.id is GameId.LIVE_3P and kind is not DeviceKind.LIVE:
            raise section.error("kind", "live-three-pictures is dealt by the LIVE studio "
                                        "procedure: kind must be 'live'")
        if rules.id is not GameId.LIVE_3P and kind is DeviceKind.LIVE:
            raise section.error("kind", f"'live' is the LIVE-3P procedure, not {rules.cite}; "
                                        "use 'shuffler' or 'shoe'")
        dialect: ShoeDialect | None = None
        if kind is DeviceKind.SHUFFLER:
            if "dialect" in section:
                raise section.error("dialect", "only a shoe has a dialect (the shuffler speaks "
                                               "the framed protocol)")
        else:
            text = section.string("dialect")
            try:
                dialect = ShoeDialect(text)
            except ValueError:
                raise section.error("dialect", f"unknown shoe dialect {text!r}; use one of "
                                    f"{', '.join(d.value for d in ShoeDialect)}") from None
        deck: str | None = None
        if "deck" in section:
            if dialect is None or not dialect.reads_barcodes:
                raise section.error("deck", "only the scanner and hid dialects read barcodes "
                                            "through a deck map")
            deck = section.string("deck")
            if Path(deck).suffix == ".json" or "/" in deck:  # a file, as drivers.decks reads it
                deck = str(section.resolve("deck", deck))
        url = section.string("url")
        seed = section.integer("seed", None, minimum=0, maximum=MAX_SIM_SEED)
        if url.startswith(SIM_SCHEME):
            url_seed, model = self._sim_url(section, url, kind, dialect)
            if seed is not None and url_seed is not None:
                raise section.error("seed", f"the url {url!r} names a seed already: give the "
                                            "seed once, in the url or as device.seed")
            section.finish()
            return DeviceConfig(kind=kind, url=url, dialect=dialect, deck=deck,
                                seed=url_seed if seed is None else seed, shuffle_model=model)
        self._check_url(section, url, dialect)
        if seed is not None and url != SIM_URL:
            raise section.error("seed", f"only a simulated device (url = \"sim\" or "
                                        f"sim://...) takes a seed; {url!r} is a real one, "
                                        "whose shuffles are its own mechanism's")
        section.finish()
        return DeviceConfig(kind=kind, url=url, dialect=dialect, deck=deck, seed=seed)

    @staticmethod
    def _sim_url(section: Section, url: str, kind: DeviceKind,
                 dialect: ShoeDialect | None) -> tuple[int | None, str]:
        """The seed and the shuffling model a ``sim://`` URL names (:data:`SIM_SCHEME`), after
        checking that its kind and dialect are the ``[device]`` section's own."""
        parts = urlsplit(url)
        path = [step for step in parts.path.split("/") if step]
        named_kind = parts.netloc
        device_kind = "shuffler" if kind is DeviceKind.SHUFFLER else "shoe"
        if named_kind != device_kind:
            raise section.error("url", f"{url!r} names a {named_kind or 'missing'} kind; this "
                                       f"[device] is a {device_kind}: sim://{device_kind}"
                                       + (f"/{dialect.value}" if dialect else ""))
        if kind is DeviceKind.SHUFFLER and path:
            raise section.error("url", f"{url!r}: a shuffler has no dialect (sim://shuffler)")
        if dialect is not None and path not in ([], [dialect.value]):
            raise section.error("url", f"{url!r}: the [device] dialect is {dialect.value!r}: "
                                       f"sim://shoe/{dialect.value}")
        if parts.fragment:
            raise section.error("url", f"{url!r}: a sim URL has no fragment")
        try:
            query = parse_qs(parts.query, keep_blank_values=True,
                             strict_parsing=bool(parts.query),
                             max_num_fields=len(SIM_QUERY_KEYS) + 1)
        except ValueError as error:
            raise section.error("url", f"{url!r}: its query is not key=value&...: "
                                       f"{error}") from error
        for key, values in query.items():
            if key not in SIM_QUERY_KEYS:
                raise section.error("url", f"{url!r}: unknown query key {key!r}; use "
                                           f"{' or '.join(SIM_QUERY_KEYS)}")
            if len(values) != 1 or not values[0]:
                raise section.error("url", f"{url!r}: give {key} once, with a value")
        seed: int | None = None
        if "seed" in query:
            text = query["seed"][0]
            if not text.isdigit() or len(text) > 19:
                raise section.error("url", f"{url!r}: seed must be a whole number, "
                                           f"0 or more, got {text!r}")
            seed = int(text)
        model = query.get("model", ["fair"])[0]
        if model != "fair" and kind is not DeviceKind.SHUFFLER:
            raise section.error("url", f"{url!r}: model is a shuffling machine's; a shoe "
                                       "has none")
        return seed, model

    def _check_url(self, section: Section, url: str, dialect: ShoeDialect | None) -> None:
        if url == SIM_URL:
            return
        if dialect is ShoeDialect.HID:
            if not _USB_HID.match(url):
                raise section.error("url", f"{url!r}: the hid dialect needs usb:VID:PID[:SERIAL] "
                                           "with hex ids, e.g. usb:1209:5ca1")
            return
        if url.startswith("usb:"):
            if _USB_HID.match(url):
                raise section.error("url", f"{url!r} is a HID address; only the hid dialect "
                                           "uses one (a framed device on USB is usb://VVVV:PPPP)")
            if not _USB_BULK.match(url):
                raise section.error("url", f"{url!r}: a USB bulk device is "
                                           "usb://VVVV:PPPP[/SERIAL] with hex ids")
            return
        if url.startswith("socket://"):
            match = _SOCKET_URL.match(url)
            if match is None or not 1 <= int(match[2]) <= 65535:
                raise section.error("url", f"{url!r}: expected socket://HOST:PORT")
            return
        if not url.startswith("/"):
            raise section.error("url", f"{url!r}: expected an absolute device path "
                                       "(/dev/table-shuffler), socket://HOST:PORT, "
                                       "usb:VID:PID[:SERIAL], usb://VVVV:PPPP[/SERIAL], sim or "
                                       "sim://KIND[/DIALECT][?seed=N]")

    def _limits(self, section: Section | None, rules: GameRules) -> dict[str, BetLimit]:
        limits: dict[str, BetLimit] = {}
        if section is None:
            return limits
        for bet in section.names():
            sub = section.section(bet)
            assert sub is not None
            if bet not in rules.bets:
                raise section.error(bet, f"{rules.cite} has no bet {bet!r}; its bets are "
                                         f"{', '.join(rules.bets)}")
            minimum = sub.integer("min", minimum=0, maximum=MAX_LIMIT_MINOR, unit="minor")
            maximum = sub.integer("max", minimum=1, maximum=MAX_LIMIT_MINOR, unit="minor")
            if maximum < minimum:
                raise sub.error("max", f"{maximum} is below min {minimum}")
            sub.finish()
            limits[bet] = BetLimit(minimum, maximum)
        section.finish()
        return limits

    @staticmethod
    def _check_rounding_unit(table: Section, unit: int, limits: Mapping[str, BetLimit]) -> None:
        """The unit is at most the smallest positive bet minimum (``min = 0`` sets none), or
        :data:`MAX_ROUNDING_UNIT` when no bet has one: a larger unit rounds a minimum wager's
        1:2 win and pro-rated stake down to nothing (2^62 rounds every 1:2 win to 0)."""
        minimums = sorted((limit.minimum, bet) for bet, limit in limits.items()
                          if limit.minimum > 0)
        if minimums:
            bound, bet = minimums[0]
            if unit > bound:
                raise table.error("rounding_unit", f"{unit} is above limits.{bet}.min {bound}, "
                                  "the smallest bet minimum: the unit is the smallest amount "
                                  "paid, so a 1:2 win or a pro-rated stake on that wager would "
                                  f"round down to nothing; use at most {bound}")
        elif unit > MAX_ROUNDING_UNIT:
            raise table.error("rounding_unit", f"{unit} is above {MAX_ROUNDING_UNIT}, the "
                              "largest unit of a table without bet minimums ([limits.<bet>] "
                              "min): 1:2 wins and pro-rated stakes would round down to nothing")

    @staticmethod
    def _check_progressive_limit(section: Section | None, rules: GameRules,
                                 limits: Mapping[str, BetLimit],
                                 progressive: ProgressiveConfig | None) -> None:
        """A progressive wager must be exactly the stake (RWS-3CP 4.4, ``check_wager``): limits
        that refuse the stake refuse every progressive wager, so they are refused here, by the
        same check the table makes at placement."""
        limit = limits.get("progressive")
        if section is None or limit is None:
            return
        stake = (progressive or ProgressiveConfig()).stake
        position = rules.bet("progressive").positions[0]
        try:
            check_wager(rules, Wager("config", position, "progressive", stake), limits, stake)
        except WagerError:
            sub = section.section("progressive")
            assert sub is not None
            stated = "progressive.stake" if progressive is not None else \
                "the progressive stake (default)"
            name, side, value = ("max", "below", limit.maximum) if stake > limit.maximum else \
                ("min", "above", limit.minimum)
            raise sub.error(name, f"{value} is {side} {stated} {stake}: a progressive wager "
                                  "must be exactly the stake, so none could be placed") from None

    def _progressive(self, section: Section | None, rules: GameRules
                     ) -> ProgressiveConfig | None:
        if section is None:
            return None
        if "progressive" not in rules.bets:
            raise section.error(None, f"{rules.cite} has no progressive bet; remove "
                                      "[progressive]")
        return ProgressiveConfig(**section.read(_PROGRESSIVE_FIELDS))

    def _journal(self, section: Section) -> JournalConfig:
        given_key = "hmac_key_file" in section
        values = section.read(_JOURNAL_FIELDS)
        beside = self.base / DEFAULT_KEY_NAME
        if not given_key and self.from_file and beside.exists():
            values["hmac_key_file"] = beside  # on by default: the key the install created
        flood = FloodLimits(burst=values.pop("flood_burst"),
                            window_seconds=values.pop("flood_window_s"))
        return JournalConfig(**values, flood=flood)

    def _software(self, section: Section | None) -> SoftwareConfig:
        if section is None:
            return SoftwareConfig()
        return SoftwareConfig(**section.read(_SOFTWARE_FIELDS))

    def _protection(self, section: Section | None) -> Feed:
        if section is None:
            return Feed.COLLECTED_REVERSED
        feed: Feed = section.read(_PROTECTION_FIELDS)["feed"]
        return feed

    def _clock(self, section: Section | None) -> ClockPolicy:
        if section is None:
            return ClockPolicy()
        return ClockPolicy(**section.read(_CLOCK_FIELDS))

    def _control(self, section: Section | None) -> ControlConfig:
        if section is None:
            return ControlConfig()
        if "tcp" in section:
            raise section.error("tcp", "removed: a TCP peer has no credentials, so it could not "
                                "be given a role; reach the Unix socket over SSH instead "
                                "(docs/service.md, Remote access)")
        values = section.read(_CONTROL_FIELDS)
        operators, surveillance = values["operators_group"], values["surveillance_group"]
        supervisors, web_group = values["supervisors_group"], values["web_group"]
        if operators == surveillance:
            raise section.error("surveillance_group", "must differ from operators_group, or "
                                                      "surveillance could command the table")
        if supervisors in (operators, surveillance):
            raise section.error("supervisors_group", "must differ from operators_group and "
                                "surveillance_group, or a dealer could take a supervisor's "
                                "decisions")
        if web_group is not None and web_group in (operators, supervisors):
            raise section.error("web_group", "must differ from operators_group and "
                                "supervisors_group: its members act for others, who log in")
        if values["studio_group"] is not None \
                and values["studio_group"] in (operators, supervisors, web_group):
            raise section.error("studio_group", "must differ from operators_group, "
                                "supervisors_group and web_group: its members act for game "
                                "servers, as operator only")
        limits = ConnectionLimits(
            max_connections=values.pop("max_connections"),
            reserved=values.pop("reserved_connections"),
            idle_seconds=float(values.pop("idle_seconds")),
            per_account=values.pop("max_per_account"))
        return ControlConfig(**values, limits=limits)


def check_host(config: ServiceConfig) -> None:
    """What the config names that must be there on this machine, which :func:`parse_config`
    (the text alone) cannot judge: ``device.deck`` loads as the driver will load it,
    ``control.socket_group`` exists (``grp``), and ``software.manifest`` and
    ``software.public_key`` are files this account can read. One :class:`ConfigError` naming
    the file, the key and the problem. ``tablectl run`` calls it with ``--check`` and without
    (controller/cli/run.py), so neither says OK where the other refuses."""
    device = config.device
    if device.dialect is not None and device.dialect.reads_barcodes \
            and device.deck is not None:
        from drivers.decks import DeckMap  # the driver's own loader: one reading of a map
        from drivers.errors import DriverConfigError

        try:
            DeckMap.load(device.deck)
        except DriverConfigError as error:
            raise ConfigError(config.source, "device.deck", str(error)) from error
    group = config.control.socket_group
    if group is not None:
        try:
            grp.getgrnam(group)
        except KeyError:
            raise ConfigError(config.source, "control.socket_group",
                              f"group {group!r} does not exist on this machine (create it, "
                              "docs/install-raspberry-pi.md step 2; \"\" keeps the service's "
                              "own group)") from None
    software = config.software
    for name, path in (("manifest", software.manifest), ("public_key", software.public_key)):
        if path is None:
            continue
        if not path.exists():
            problem = "does not exist"
        elif not path.is_file():
            problem = "is not a file"
        elif not os.access(path, os.R_OK):
            problem = "this account cannot read it"
        else:
            continue
        raise ConfigError(config.source, f"software.{name}", f"{path} {problem}")


BENCH_CONFIG_TOML = """\
# The simulated bench table: firmware_sim devices started in-process, no hardware.
[table]
id = "bench-1"
game = "rws-three-card-poker"
rounding_unit = 1

[device]
kind = "shuffler"
url = "sim"

[limits.ante]
min = 500
max = 50000

[limits.pair_plus]
min = 500
max = 10000

[progressive]
stake = 500
seed = 1000000
contribution_per_mille = 150

[journal]
directory = {journal}
durability = "none"
retention_days = 365

[control]
socket = {socket}
socket_group = ""

# A bench is not reviewed against camera footage: rounds open whatever the clock says (the
# journal still records its quality). A casino table keeps the default, "refuse".
[clock]
unsynchronised = "allow"

# The simulated shuffler is loaded with a deck in pack order at every shuffle.
[protection]
feed = "new-deck"
"""


def bench_runtime_dir() -> Path:
    """Where the bench table puts its control socket: ``$XDG_RUNTIME_DIR/tablectl`` or a
    per-user directory under the temp dir (``/run/tablectl`` needs systemd's RuntimeDirectory)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "tablectl"
    return Path(tempfile.gettempdir()) / f"tablectl-{os.getuid()}"


def bench_state_dir() -> Path:
    """Where the bench table keeps its journal: ``$XDG_STATE_HOME/tablectl`` (XDG default)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "tablectl"


def default_bench_config(*, runtime_dir: Path | None = None,
                         state_dir: Path | None = None) -> ServiceConfig:
    """The embedded config of the simulated bench table (``tablectl run`` without --config)."""
    runtime = runtime_dir or bench_runtime_dir()
    state = state_dir or bench_state_dir()
    text = BENCH_CONFIG_TOML.format(journal=json.dumps(str(state / "bench-journal")),
                                    socket=json.dumps(str(runtime / "control.sock")))
    return parse_config(text, source=BENCH_SOURCE)
