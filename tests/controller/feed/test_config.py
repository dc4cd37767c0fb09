"""The [feed] and [floor] sections: read strictly, one line per mistake; the table's service
accepts a config file that carries a [feed] section."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.cli import main
from controller.feed.config import load_feed_config, load_floor_config
from controller.service.config import load_config

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "systemd" / "tablectl.example.toml"
FEED = ('\n[feed]\nbroker = "mqtts://broker.floor.lan"\nsite = "casino-a"\n'
        'ca_file = "ca.pem"\ncert_file = "T07.pem"\nkey_file = "T07.key"\n'
        'signing_key = "T07.ed25519"\n')


def test_feed_section_beside_the_service_config(tmp_path: Path) -> None:
    """The example table config with a [feed] section: the service loads it unchanged, the
    feed takes the table id and journal directory from it, TLS on 8883, paths relative to
    the file."""
    config = tmp_path / "tablectl.toml"
    config.write_text(EXAMPLE.read_text(encoding="utf-8") + FEED, encoding="utf-8")
    service = load_config(config)
    feed = load_feed_config(config)
    assert (feed.table_id, feed.journal_dir) == (service.table_id, service.journal.directory)
    assert (feed.broker.host, feed.broker.port, feed.broker.tls) == ("broker.floor.lan", 8883,
                                                                     True)
    assert feed.broker.cert_file == tmp_path / "T07.pem"
    assert feed.signing_key == tmp_path / "T07.ed25519"


@pytest.mark.parametrize("change, problem", [
    (('"mqtts://broker.floor.lan"', '"mqtt://broker.floor.lan"'), "feed.broker: plain mqtt://"),
    (('site = "casino-a"', 'site = "a/b"'), "feed.site:"),
    (('key_file = "T07.key"\n', ''), "cert_file and key_file go together"),
    (('site = "casino-a"', 'site = "x"\nsiet = 1'), "feed.siet: unknown key"),
    (('signing_key = "T07.ed25519"\n', ''), "feed.signing_key: missing (required)"),
    (('signing_key = "T07.ed25519"', 'signing_key = "nowhere.key"'), "signing key "),
])
def test_mistakes_are_one_line_naming_the_key(tmp_path: Path, capsys, change: tuple[str, str],
                                              problem: str) -> None:
    config = tmp_path / "tablectl.toml"
    config.write_text(EXAMPLE.read_text(encoding="utf-8") + FEED.replace(*change),
                      encoding="utf-8")
    assert main(["feed", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1, err


def test_floor_database_default_and_postgres_url(tmp_path: Path) -> None:
    """SQLite beside the config by default; a postgresql:// URL is taken as it is."""
    config = tmp_path / "floor.toml"
    config.write_text('[floor]\nbroker = "mqtt://127.0.0.1"\n', encoding="utf-8")
    floor = load_floor_config(config)
    assert (floor.site, floor.database, floor.broker.port) == (
        "+", str(tmp_path / "floor.sqlite3"), 1883)
    config.write_text('[floor]\nbroker = "mqtt://127.0.0.1"\n'
                      'database = "postgresql://floor@db/floor"\n', encoding="utf-8")
    assert load_floor_config(config).database == "postgresql://floor@db/floor"


def test_floor_keys_name_each_table_public_key(tmp_path: Path) -> None:
    """[floor.keys]: one line per table as keygen prints it; a line that is not an Ed25519
    public key is one error naming the key."""
    from controller.feed.keys import public_key_text

    config = tmp_path / "floor.toml"
    line = public_key_text(bytes(range(32)))
    config.write_text(f'[floor]\nbroker = "mqtt://127.0.0.1"\n\n[floor.keys]\nT07 = "{line}"\n',
                      encoding="utf-8")
    assert load_floor_config(config).keys == {"T07": bytes(range(32))}
    config.write_text('[floor]\nbroker = "mqtt://127.0.0.1"\n\n[floor.keys]\nT07 = "AAAA"\n',
                      encoding="utf-8")
    with pytest.raises(Exception, match="floor.keys.T07: not an Ed25519 public key"):
        load_floor_config(config)
