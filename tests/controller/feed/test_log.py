"""The feed's log: tablectl's line form (JSON, with the syslog priority under journald) without
structlog, whose import would cost the feed about 4 MB on the table (docs/feed.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.feed.log import FeedLog, configure, log


@pytest.fixture(autouse=True)
def _restore() -> object:
    level, journald = FeedLog.level, FeedLog.journald
    yield
    FeedLog.level, FeedLog.journald = level, journald


def test_lines_are_json_and_below_the_level_are_dropped(capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    configure("INFO")
    FeedLog.journald = False
    log.debug("not shown")
    log.info("broker link", link="up", in_flight=0, path=Path("/x"))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    line = json.loads(lines[0])
    assert (line["event"], line["level"], line["link"], line["in_flight"], line["path"]) == \
        ("broker link", "info", "up", 0, "/x")
    assert line["timestamp"].endswith("Z")


def test_under_journald_each_line_has_its_priority(capsys: pytest.CaptureFixture[str]) -> None:
    configure("WARNING")
    FeedLog.journald = True
    log.info("dropped")
    log.error("feed stopped", problem="refused")
    err = capsys.readouterr().err
    assert err.startswith("<3>{") and err.count("\n") == 1
