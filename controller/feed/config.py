"""The ``[feed]`` section of the table's config file (and the ``[floor]`` file of the floor).

The service's own loader (``controller.service.config``) skips these sections; this small reader
takes what the feed needs -- the table id and the journal directory from the same file, so they
can never disagree with what the service writes -- and refuses unknown keys like the service
does, with the project's one TOML reader (:mod:`controller.service.tomlread`). Relative paths
are taken from the config file's directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from urllib.parse import urlsplit

from controller.service.tomlread import Section, choice, load_document

DEFAULT_PORT_TLS = 8883
DEFAULT_PORT_PLAIN = 1883


@dataclass(frozen=True, slots=True)
class Broker:
    """Where the broker is and how we prove who we are. ``mqtts://`` is TLS; ``mqtt://`` (no
    TLS) is refused unless the host is loopback, so a table never sends its events in clear."""

    host: str
    port: int
    tls: bool
    ca_file: Path | None
    cert_file: Path | None
    key_file: Path | None
    username: str | None
    password: str | None
    keepalive: int


@dataclass(frozen=True, slots=True)
class FeedConfig:
    source: str
    table_id: str
    site: str
    journal_dir: Path
    state_dir: Path
    broker: Broker
    window: int
    signing_key: Path
    """This table's Ed25519 private key (``tablectl feed keygen``; 0400, the feed's user)."""


class Assign(str, Enum):
    """How a group's consumers divide the site's tables (``[floor] assign``)."""

    SHARED = "shared"
    """An MQTT 5 shared subscription: the broker hands each record to one consumer."""
    LEASE = "lease"
    """Each table leased to one consumer in PostgreSQL (``controller.floor.leases``), which
    subscribes to that table's topic only."""


@dataclass(frozen=True, slots=True)
class FloorConfig:
    source: str
    site: str
    database: str
    broker: Broker
    client_id: str
    keys: dict[str, bytes] = field(default_factory=dict)
    """Each table's Ed25519 public key (``[floor.keys]``): a record of a table without one,
    or not signed by its key, is never applied."""
    group: str | None = None
    """``[floor] group``: the consumers of one site sharing its records (an MQTT 5 shared
    subscription, ``$share/<group>/...``) on one PostgreSQL (``controller.floor.consumer``);
    None: the one consumer."""
    assign: Assign = Assign.SHARED
    """``[floor] assign``: how the group divides the tables (only with ``group``)."""


def _read(path: str | Path) -> tuple[Section, Path]:
    root = load_document(path)
    assert root.base is not None  # a file's directory
    return root, root.base


def _path(section: Section, base: Path, name: str, *, required: bool = False) -> Path | None:
    """A path the shared reader resolves beside the config file (``base``, the section's)."""
    path: Path | None = section.path(name) if required else section.path(name, None)
    return path


def _credentials(section: Section, base: Path) -> tuple[str | None, str | None]:
    """``credentials_file``: ``username:password`` on one line (mode 0400), kept out of the
    config file so the config can be shown and copied."""
    path = _path(section, base, "credentials_file")
    if path is None:
        return None, None
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise section.error("credentials_file", f"{path}: {error.strerror or error}") from error
    user, sep, password = text.partition(":")
    if not sep or not user:
        raise section.error("credentials_file", f"{path}: expected one line 'username:password'")
    return user, password


def read_broker(section: Section, base: Path) -> Broker:
    url = section.string("broker")
    parts = urlsplit(url)
    if parts.scheme not in ("mqtts", "mqtt") or not parts.hostname:
        raise section.error("broker", f"{url!r}: expected mqtts://HOST[:PORT]")
    tls = parts.scheme == "mqtts"
    if not tls and parts.hostname not in ("127.0.0.1", "::1", "localhost"):
        raise section.error("broker", "plain mqtt:// is allowed to loopback only; use mqtts://")
    try:
        port = parts.port or (DEFAULT_PORT_TLS if tls else DEFAULT_PORT_PLAIN)
    except ValueError as error:
        raise section.error("broker", f"{url!r}: bad port") from error
    username, password = _credentials(section, base)
    cert, key = _path(section, base, "cert_file"), _path(section, base, "key_file")
    if (cert is None) != (key is None):
        raise section.error("cert_file", "cert_file and key_file go together")
    return Broker(host=parts.hostname, port=port, tls=tls, ca_file=_path(section, base, "ca_file"),
                  cert_file=cert, key_file=key, username=username, password=password,
                  keepalive=section.integer("keepalive", 15, minimum=5, maximum=600))


def _site(section: Section) -> str:
    site = section.string("site")
    if any(c in site for c in "/+#") or len(site) > 64:
        raise section.error("site", f"{site!r}: a topic level, no '/', '+' or '#'")
    return site


def load_feed_config(path: str | Path) -> FeedConfig:
    """The feed's settings from the table's config file: ``[table] id``, ``[journal]
    directory`` and the ``[feed]`` section (docs/feed.md)."""
    root, base = _read(path)
    table = root.section("table", required=True)
    journal = root.section("journal", required=True)
    feed = root.section("feed", required=True)
    assert table is not None and journal is not None and feed is not None
    table_id = table.string("id")
    journal_dir = _path(journal, base, "directory")
    assert journal_dir is not None
    site = _site(feed)
    broker = read_broker(feed, base)
    state_dir = _path(feed, base, "state_directory") or journal_dir.parent / "feed"
    window = feed.integer("window", 32, minimum=1, maximum=1000)
    signing_key = _path(feed, base, "signing_key", required=True)
    assert signing_key is not None  # required: _path raises for a missing key
    feed.finish()
    return FeedConfig(source=str(path), table_id=table_id, site=site, journal_dir=journal_dir,
                      state_dir=state_dir, broker=broker, window=window,
                      signing_key=signing_key)


def load_floor_config(path: str | Path) -> FloorConfig:
    """The floor's own file: a ``[floor]`` section (broker, site or ``"+"`` for every site,
    TLS files, ``database`` = a SQLite path or a ``postgresql://`` URL)."""
    root, base = _read(path)
    floor = root.section("floor", required=True)
    assert floor is not None
    site = floor.string("site", "+")
    if site != "+":
        site = _site(floor)
    database = floor.string("database", "floor.sqlite3")
    if not database.startswith(("postgresql://", "postgres://")):
        database = str(_path(floor, base, "database") or base / database)
    broker = read_broker(floor, base)
    client_id = floor.string("client_id", "tablectl-floor")
    group = floor.string("group", None)
    if group is not None:
        if not group or any(c in group for c in "/+#$") or len(group) > 64:
            raise floor.error("group", f"{group!r}: a topic level, no '/', '+', '#' or '$'")
        if not database.startswith(("postgresql://", "postgres://")):
            raise floor.error("group", "several floor consumers need one PostgreSQL database "
                                       "(database = \"postgresql://...\"): SQLite serves one "
                                       "consumer; remove group for a floor of one")
    try:
        assign = choice(Assign, "assign")(floor.string("assign", Assign.SHARED.value))
    except ValueError as error:
        raise floor.error("assign", str(error)) from error
    if assign is not Assign.SHARED and group is None:
        raise floor.error("assign", f"assign = {assign.value!r} divides a group's tables: "
                                    "set group too, or remove assign for a floor of one")
    keys = _public_keys(floor)
    floor.finish()
    root.finish()
    return FloorConfig(source=str(path), site=site, database=database, broker=broker,
                       client_id=client_id, keys=keys, group=group, assign=assign)


def _public_keys(floor: Section) -> dict[str, bytes]:
    """``[floor.keys]``: ``T07 = "MCowBQYDK2VwAyEA..."``, one line per table, as ``tablectl
    feed keygen`` prints it."""
    from controller.feed.errors import KeyFileError
    from controller.feed.keys import parse_public_key

    section = floor.section("keys")
    if section is None:
        return {}
    keys: dict[str, bytes] = {}
    for table in section.names():
        try:
            keys[table] = parse_public_key(section.string(table))
        except KeyFileError as error:
            raise section.error(table, str(error)) from error
    section.finish()
    return keys
