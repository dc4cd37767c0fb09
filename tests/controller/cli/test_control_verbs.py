"""Every verb of the control socket has a ``tablectl`` command, a branch in the request schema
and a row in docs/service.md (issue 22: a whole shift at the table without a shell).

The verbs come from the protocol's own table (:data:`controller.service.protocol.VERBS`), so a
verb added there without its command, schema branch or documentation fails here by name."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from controller.cli import build_parser
from controller.cli.client import run_watch
from controller.service.protocol import VERBS, decode_request

ROOT = Path(__file__).resolve().parents[3]
SOCKET = ["--socket", "/nonexistent/control.sock"]

COMMANDS: dict[str, list[str]] = {
    # verb -> a tablectl command line that sends it with every argument the verb takes
    "round.open": ["round", "open"],
    "round.close": ["round", "close"],
    "round.shuffled": ["round", "shuffled"],
    "round.reveal": ["round", "reveal"],
    "round.settle": ["round", "settle"],
    "round.status": ["round", "status"],
    "round.events": ["round", "events", "7"],
    "wager.place": ["wager", "place", "3", "main", "500", "--id", "w1", "--player", "p7",
                    "--seated"],
    "wager.place-batch": ["wager", "place-batch",
                          str(Path(__file__).parent / "data" / "wager_batch.json")],
    "wager.withdraw": ["wager", "withdraw", "w1"],
    "wager.list": ["wager", "list"],
    "decide": ["decide", "3", "play"],
    "option": ["option", "3", "withdraw", "--player", "p7"],
    "options.close": ["options", "close"],
    "deck.replace": ["deck", "replace"],
    "deck.counted": ["deck", "counted", "52"],
    "irregularity.report": ["report", "exposed-card", "--position", "3", "--handled",
                            "--exposed-before-drop", "--round", "4", "--details", "seen",
                            "--source", "dealer"],
    "supervisor.continue": ["supervisor", "continue", "--reason", "checked"],
    "supervisor.void": ["supervisor", "void", "door open", "--clause", "RWS-NC3P 5.15"],
    "supervisor.reconstruct": ["supervisor", "reconstruct", "--move", "1:2", "--hand",
                               "3=QD,KS,JH", "--reason", "camera"],
    "supervisor.order": ["supervisor", "order", "QD", "KS", "--reason", "camera"],
    "supervisor.swap": ["supervisor", "swap", "1", "2", "--reason", "camera"],
    "supervisor.clear-fault": ["supervisor", "clear-fault", "--device", "shuffler",
                               "--reason", "door closed"],
    "journal.acknowledge": ["journal", "acknowledge", "tail cut by a disk swap"],
    "supervisor.answer": ["supervisor", "answer", "in_device", "--reason", "camera"],
    "supervisor.clock-override": ["supervisor", "clock-override", "--reason", "ntp down"],
    "watch": ["watch"],
}
ALSO: dict[str, list[str]] = {
    # verb -> another command line for a verb whose arguments are alternatives
    "wager.place-batch": ["wager", "place-batch",
                          str(Path(__file__).parent / "data" / "wager_rows.json")],
}


def test_every_verb_has_a_command_a_schema_branch_and_a_doc_row() -> None:
    """The three places a client learns a verb from, checked against the protocol's table."""
    schema = json.loads((ROOT / "schemas" / "control-request.schema.json").read_text())
    branches = {branch["properties"]["verb"]["const"] for branch in schema["oneOf"]}
    documented = set(re.findall(r"^\| `([a-z.\-]+)` \| (?:command|read) \|",
                                (ROOT / "docs" / "service.md").read_text(), re.MULTILINE))
    verbs = set(VERBS)
    assert verbs - set(COMMANDS) == set(), "verbs with no tablectl command"
    assert verbs - branches == set(), "verbs with no branch in control-request.schema.json"
    assert verbs - documented == set(), "verbs with no row in docs/service.md"


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_the_command_sends_the_verb_with_every_argument(verb: str) -> None:
    """The command line parses, names this verb, passes every argument the verb takes (so no
    argument is reachable only over a raw socket), and the service's decoder accepts it."""
    sent_args: set[str] = set()
    for line in (COMMANDS[verb], *([ALSO[verb]] if verb in ALSO else [])):
        args = build_parser().parse_args([*line, *SOCKET])
        if verb == "watch":
            assert args.func is run_watch
            return
        sent, request_args = args.verb(args)
        assert sent == verb
        sent_args |= set(request_args)
        decode_request(json.dumps({"id": 1, "verb": sent, "args": request_args}).encode())
    assert sent_args == {arg.name for arg in VERBS[verb].args}, verb


def test_an_answer_outside_the_choices_is_a_usage_error(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """``tablectl supervisor answer`` takes exactly the protocol's answers; another is one
    line, exit 2."""
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["supervisor", "answer", "somewhere", *SOCKET])
    assert exited.value.code == 2
    assert "in_device" in capsys.readouterr().err


def test_the_pi_guide_drives_the_table_with_tablectl_verbs() -> None:
    """docs/install-raspberry-pi.md has no ``python -c`` one-liners (issue 22), and every
    ``tablectl`` command line in it parses with the real parser, as printed."""
    guide = (ROOT / "docs" / "install-raspberry-pi.md").read_text(encoding="utf-8")
    assert not re.search(r"python3? -c", guide)
    lines = [line.strip() for line in guide.splitlines() if line.startswith("    tablectl ")]
    assert len(lines) >= 10
    parser = build_parser()
    for line in lines:
        argv = shlex.split(line, comments=True)[1:]
        parser.parse_args(argv)  # a usage error exits 2 and fails the test
