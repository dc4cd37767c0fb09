"""What the service answers is printed, not obeyed (issue 24, finding 7): a player's name with a
terminal escape and a bidi override, journaled by an older version (whose protocol still took
control characters in text), comes back from ``tablectl wager list`` escaped, in the human lines
and in ``--json``.

The older version is played by the service's own wiring handed the command directly (the
protocol of today refuses the name at the socket); ``tablectl run`` then starts on that journal,
recovers the open round and its wager, and the ``tablectl`` CLI asks it over the real socket."""

from __future__ import annotations

import json
from pathlib import Path

from controller.service.config import parse_config
from controller.service.wiring.pipeline import Wiring
from controller.table import commands as cmd
from tests.service_e2e.conftest import EVENT_SECONDS, Processes, config_toml

NAME = "Bob\x1b]0;pwned\x07\x1b[2J\u202eevil\x9b"
"""A title-setting OSC, a clear-screen CSI, a right-to-left override and a C1 CSI."""


def _older_version_journals(tmp: Path, toml: str) -> None:
    config = parse_config(toml, source=str(tmp / "tablectl.toml"))
    wiring = Wiring(config, lambda event: None)
    wiring.start()
    try:
        assert wiring.table is not None
        who = {"actor": "dealer:old", "role": cmd.Role.DEALER}
        for command in (cmd.OpenRound(**who),
                        cmd.PlaceWager(**who, wager_id="w1", position="1", bet="ante",
                                       amount=500, player=NAME)):
            ticket = wiring.table.command(command, EVENT_SECONDS)
            assert ticket is not None and ticket.error is None, ticket
    finally:
        wiring.close()


def test_wager_list_escapes_a_name_an_older_version_journaled(processes: Processes,
                                                              tmp_path: Path) -> None:
    """Human lines: ``\\x1b``, ``\\u202e``, ``\\x9b`` written out; ``--json``: ``\\u``
    escapes that decode to the very name. No raw control or format character either way."""
    toml = config_toml(tmp_path, "rws-three-card-poker")
    _older_version_journals(tmp_path, toml)
    service = processes.service(toml)
    service.wait_ready()
    sock = str(tmp_path / "control.sock")
    listed = processes.cli("wager", "list", "--socket", sock)
    assert listed.returncode == 0, listed.stderr
    assert "Bob\\x1b]0;pwned\\x07\\x1b[2J\\u202eevil\\x9b" in listed.stdout, listed.stdout
    as_json = processes.cli("wager", "list", "--json", "--socket", sock)
    assert as_json.returncode == 0, as_json.stderr
    for out in (listed.stdout, as_json.stdout):
        assert not any(ch in out for ch in "\x1b\x07\u202e\x9b"), out
    (wager,) = json.loads(as_json.stdout)["wagers"]
    assert wager["player"] == NAME
    code, err = service.terminate()
    assert code == 0, err
