"""The feed's reading of the floor's resend requests (``.../resend``), without a broker: a
request the feed cannot read is refused by name and logged, never acted on as a guess."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from testbed.floorlab import feed_config, make_pki
from controller.bench import Bench
from controller.feed.config import load_feed_config
from controller.feed.run import Feed, _Refused, _Resend
from testbed.journalgen import rehome, write_all

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None,
                                reason="openssl makes the feed's TLS files")

TOPIC = "tablectl/site1/T1/resend"


@pytest.fixture(name="feed")
def feed_fixture(tmp_path: Path) -> Feed:
    Bench("rws-three-card-poker", 1, seed=5, journal_dir=tmp_path / "bench").run()
    journal = tmp_path / "journal"
    write_all(journal, rehome(tmp_path / "bench", "T1"))
    pki = make_pki(tmp_path / "pki", ["T1"])
    broker = SimpleNamespace(port=1)  # never connected: open() is not called
    config = feed_config(tmp_path, pki, broker, "T1", journal)  # type: ignore[arg-type]
    return Feed(load_feed_config(config))


def _ask(feed: Feed, payload: bytes) -> _Refused | _Resend:
    feed._on_message(None, None, SimpleNamespace(topic=TOPIC, payload=payload))
    event = feed.events.get_nowait()
    assert isinstance(event, (_Refused, _Resend))
    return event


def test_a_resend_request_is_read(feed: Feed) -> None:
    """``{"from": 5}`` asks the feed to go back to seq 5."""
    assert _ask(feed, b'{"from": 5}') == _Resend(5)


def test_a_resend_request_with_a_key_given_twice_is_refused_by_name(
        feed: Feed, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35: ``{"from": 1, "from": 5}`` is ambiguous (the plain reader kept 5); the feed
    reads it strictly (controller.strictjson), refuses it naming the key, and logs one line,
    no traceback; the feed goes on."""
    event = _ask(feed, b'{"from": 1, "from": 5}')
    assert isinstance(event, _Refused)
    assert "'from' appears twice" in event.detail and TOPIC in event.detail
    capsys.readouterr()
    feed._handle(event)
    logged = capsys.readouterr()
    assert "resend requests unusable" in logged.err + logged.out
    assert "appears twice" in logged.err + logged.out
    assert "Traceback" not in logged.err + logged.out
