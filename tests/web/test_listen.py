"""``web.listen`` is checked as an address before the remote-access rules (issue 34): a
mistyped one is named as such, not blamed on missing TLS, whether it comes from the config file
or from ``--listen`` (the same check, :func:`controller.web.config.listen_problem`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.web.config import listen_problem, load_web_config
from controller.web.errors import WebConfigError


@pytest.mark.parametrize("address", ["127.0.0.1", "0.0.0.0", "::1", "::", "10.20.0.12",
                                     "localhost", "localhost."])
def test_addresses_and_names_that_resolve_are_taken(address: str) -> None:
    """An IP address in full, or a name this machine's resolver knows (``localhost`` from
    /etc/hosts: no network lookup)."""
    assert listen_problem(address) is None


@pytest.mark.parametrize("address, problem", [
    ("not..an..address", "not an IP address or a host name"),
    ("-table-1", "not an IP address or a host name"),
    ("table_1", "not an IP address or a host name"),
    ("a" * 64 + ".example", "not an IP address or a host name"),
    ("[::1]", "not an IP address or a host name"),
    (" 127.0.0.1", "not an IP address or a host name"),
    ("127.1", "a shorthand IP address; write it in full (127.0.0.1)"),
    ("0x7f.1", "write it in full (127.0.0.1)"),
    ("", "empty"),
    ("  ", "empty"),
])
def test_what_is_no_address_is_named(address: str, problem: str) -> None:
    """Refused by spelling alone, so none of these reaches the resolver."""
    found = listen_problem(address)
    assert found is not None and problem in found


def test_the_config_file_listen_is_checked_before_tls(tmp_path: Path) -> None:
    """``listen = "not..an..address"`` in web.toml was refused as "remote access needs TLS"."""
    config = tmp_path / "web.toml"
    config.write_text('[web]\nlisten = "not..an..address"\n')
    with pytest.raises(WebConfigError) as refused:
        load_web_config(config)
    message = str(refused.value)
    assert message.startswith("web.listen 'not..an..address': not an IP address")
    assert "TLS" not in message


def test_the_config_file_listen_must_be_text(tmp_path: Path) -> None:
    """``listen = 8640`` (the port in the wrong key) was taken as the address "8640"."""
    config = tmp_path / "web.toml"
    config.write_text("[web]\nlisten = 8640\n")
    with pytest.raises(WebConfigError, match="web.listen: must be a string, got 8640"):
        load_web_config(config)
