"""The published JSON Schemas (``schemas/``) and the examples in ``examples/`` (issue 16): every
example validates, what the CLI prints validates, and the schemas refuse what the controller
refuses, so a client written against a schema and the controller agree."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from controller.cli import main
from controller.errors import TablectlError
from controller.service.protocol import VERBS, ErrorCode, Refusal, decode_request, error_reply
from controller.settlement import settle
from controller.settlement.request import parse_request, render

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = ROOT / "schemas"
EXAMPLES = ROOT / "examples"
SETTLE_EXAMPLES = sorted(p for p in EXAMPLES.glob("settle-*.json")
                         if not p.name.endswith(".result.json"))


def validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def lines(name: str) -> list[Any]:
    return [json.loads(line) for line in (EXAMPLES / name).read_text().splitlines() if line]


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_there_are_examples_of_each_settle_feature() -> None:
    """The examples cover pro rata, 3CP fold and envy, a removed hand and a void round."""
    assert {p.stem for p in SETTLE_EXAMPLES} == {
        "settle-rws-nc3p", "settle-rws-3cp", "settle-removed-hand", "settle-void"}


@pytest.mark.parametrize("path", SETTLE_EXAMPLES, ids=lambda p: p.stem)
def test_settle_example_validates_and_settles_to_its_result(
        path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each example request validates against the request schema; ``settle --json`` of it
    validates against the result schema and equals the example result beside it."""
    validator("settle-request").validate(json.loads(path.read_text(encoding="utf-8")))
    out = cli_json(capsys, "settle", str(path), "--json")
    validator("settle-result").validate(out)
    assert out == json.loads(path.with_suffix(".result.json").read_text(encoding="utf-8"))


REFUSED_REQUESTS = [
    ("unknown field", lambda d: d.update(limts={})),
    ("unknown wager field", lambda d: d["wagers"][0].update(stake=1)),
    ("amount over 10**12", lambda d: d["wagers"][0].update(amount=10**12 + 1)),
    ("float amount", lambda d: d["wagers"][0].update(amount=10.5)),
    ("zero amount", lambda d: d["wagers"][0].update(amount=0)),
    ("boolean amount", lambda d: d["wagers"][0].update(amount=True)),
    ("negative jackpot", lambda d: d.update(progressive_jackpot=-1)),
    ("progressive stake 0", lambda d: d.update(progressive_stake=0)),
    ("rounding unit 0", lambda d: d.update(rounding_unit=0)),
    ("unknown game", lambda d: d.update(game="baccarat")),
    ("missing wagers", lambda d: d.pop("wagers")),
    ("empty void clause", lambda d: d.update(void=" ")),
    ("void as a boolean", lambda d: d.update(void=True)),
    ("seated as a string", lambda d: d["wagers"][0].update(seated="yes")),
]


@pytest.mark.parametrize("mutate", [r[1] for r in REFUSED_REQUESTS],
                         ids=[r[0] for r in REFUSED_REQUESTS])
def test_schema_and_controller_both_refuse(mutate: Any) -> None:
    """A request the schema refuses, the controller refuses too, with its own one-line error."""
    doc = json.loads((EXAMPLES / "settle-rws-nc3p.json").read_text(encoding="utf-8"))
    mutate(doc)
    assert not validator("settle-request").is_valid(doc)
    with pytest.raises(TablectlError):
        round_ = parse_request(copy.deepcopy(doc))
        render(round_, settle(round_))


def test_games_odds_rank_outputs_validate(capsys: pytest.CaptureFixture[str]) -> None:
    """``games``, ``odds`` (every game) and ``rank`` ``--json`` match their schemas."""
    games = cli_json(capsys, "games", "--json")
    validator("games").validate(games)
    odds = validator("odds")
    for game in games["games"]:
        odds.validate(cli_json(capsys, "odds", game["id"], "--json"))
    validator("rank").validate(cli_json(capsys, "rank", "rws-three-card-poker", "QD", "KS",
                                        "2C", "--json"))


def test_bench_and_journal_outputs_validate(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``bench --json`` and the journal verbs' ``--json`` (verify, rounds, recall, replay of a
    bench journal, which reports what it did not replay) match their schemas."""
    journal = tmp_path / "journal"
    validator("bench").validate(cli_json(capsys, "bench", "--game", "rws-three-card-poker",
                                         "--rounds", "2", "--journal-dir", str(journal),
                                         "--json"))
    validator("journal-verify").validate(cli_json(capsys, "journal", "verify", str(journal),
                                                  "--json"))
    rounds = validator("journal-rounds")
    rounds.validate(cli_json(capsys, "journal", "rounds", str(journal), "--json"))
    rounds.validate(cli_json(capsys, "journal", "recall", str(journal), "--json"))
    assert main(["journal", "replay", str(journal), "--json"]) == 0  # the bench journal replays: it runs the service wiring
    validator("journal-replay").validate(json.loads(capsys.readouterr().out))


def test_every_schema_is_a_valid_schema_and_is_used() -> None:
    """Each file in schemas/ is a valid 2020-12 schema and is exercised by a test here."""
    source = Path(__file__).read_text(encoding="utf-8")
    for path in SCHEMAS.glob("*.schema.json"):
        validator(path.name.removesuffix(".schema.json"))
        name = path.name.removesuffix(".schema.json")
        assert f'"{name}"' in source or name in {"selfcheck", "probe-line"}, name


def test_control_request_schema_names_every_verb_and_argument() -> None:
    """Each verb of the protocol has one branch in the schema with the same arguments and the
    same required ones, so the schema cannot drift from the service."""
    schema = json.loads((SCHEMAS / "control-request.schema.json").read_text(encoding="utf-8"))
    branches = {b["properties"]["verb"]["const"]: b["properties"]["args"]
                for b in schema["oneOf"]}
    assert set(branches) == set(VERBS) == set(schema["properties"]["verb"]["enum"])
    for verb, spec in VERBS.items():
        args = branches[verb]
        assert set(args["properties"]) == {a.name for a in spec.args}, verb
        assert set(args.get("required", ())) == {a.name for a in spec.args if a.required}, verb


def test_control_examples_are_accepted_by_schema_and_service() -> None:
    """Every example request validates and is accepted by the service's decoder; every
    example reply or event validates against the reply schema."""
    requests, replies = validator("control-request"), validator("control-reply")
    for message in lines("control-requests.jsonl"):
        requests.validate(message)
        decode_request(json.dumps(message).encode())
    for message in lines("control-replies.jsonl"):
        replies.validate(message)


def test_control_refused_examples_are_refused_by_both() -> None:
    """Requests the service refuses (unknown field, missing or mistyped argument, out of
    choice, unknown verb) are invalid under the schema too; the refusal reply validates."""
    requests, replies = validator("control-request"), validator("control-reply")
    for message in lines("control-requests-refused.jsonl"):
        assert not requests.is_valid(message), message
        with pytest.raises(Refusal) as refused:
            decode_request(json.dumps(message).encode())
        replies.validate(error_reply(refused.value.request_id, refused.value.code,
                                     refused.value.message))
    replies.validate(error_reply(None, ErrorCode.MALFORMED, "not a JSON line"))
    schema = json.loads((SCHEMAS / "control-reply.schema.json").read_text(encoding="utf-8"))
    codes = schema["oneOf"][1]["properties"]["error"]["properties"]["code"]["enum"]
    assert codes == [code.value for code in ErrorCode]
