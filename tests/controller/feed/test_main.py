"""``python -m controller.feed``'s command line (what the systemd unit runs): a bad one is named
and exits 2, which the unit does not restart."""

from __future__ import annotations

import pytest

from controller.feed.__main__ import DEFAULT_CONFIG, EXIT_USAGE, main, parse_args


def test_options_and_their_defaults() -> None:
    assert parse_args([]) == (DEFAULT_CONFIG, "WARNING")
    assert parse_args(["--config", "/x.toml", "--log-level", "info"]) == ("/x.toml", "INFO")
    assert parse_args(["--config=/y.toml"]) == ("/y.toml", "WARNING")
    assert parse_args(["--help"]) is None


@pytest.mark.parametrize(("argv", "named"), [
    (["--bogus"], "--bogus"),
    (["--config"], "--config"),
    (["--log-level", "loud"], "'loud'"),
    (["extra"], "'extra'"),
])
def test_a_bad_command_line_is_named_and_exits_2(argv: list[str], named: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("usage: python -m controller.feed")
    assert named in captured.err.splitlines()[-1]


def test_help_says_what_it_does_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-h"]) == 0
    out = capsys.readouterr().out
    assert "--config PATH" in out and DEFAULT_CONFIG in out and "MQTT" in out


def test_a_missing_config_is_named_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", "/nonexistent/tablectl.toml"]) == EXIT_USAGE
    assert "/nonexistent/tablectl.toml" in capsys.readouterr().err
