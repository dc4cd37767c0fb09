"""The service checks its journal before it appends (issue 11): from the last verified mark,
so each start reads one run's records; damage is journaled and holds dealing until a supervisor
acknowledges it (journaled with actor, role and reason); a torn last line is a power cut, not
damage; HMAC is on by default (the key beside the config) and its absence is loud."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from controller.cli import main
from controller.journal import iter_records
from controller.journal.head import HEAD_NAME, SLOT_BYTES, VERIFIED_NAME, read_head, read_mark
from controller.journal.record import canonical_json
from controller.service.config import ServiceConfig, load_config
from controller.service.keyfile import load_service_key
from controller.service.protocol import ErrorCode, Refusal
from tests.controller.service.conftest import (
    DEALER,
    SUPERVISOR,
    InProcessService,
    service_toml,
    voided_sessions,
)


@pytest.fixture(name="config_file")
def fixture_config_file(tmp_path: Path) -> Path:
    path = tmp_path / "tablectl.toml"
    path.write_text(service_toml(tmp_path))
    return path


class Running(InProcessService):
    @property
    def check(self):  # noqa: ANN201
        return self.service.wiring.journal_check


_session = voided_sessions


def _events(directory: Path, kind: str) -> list[dict]:
    return [dict(r.payload, _seq=r.seq, _actor=r.actor)
            for r in iter_records([directory], strict=False)
            if r.event_type == kind]


def test_cut_tail_holds_dealing_until_a_supervisor_acknowledges(
        config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Records cut from the end while the service was down: the start-up check finds the
    journal shorter than its head, journals it, and refuses every command until a supervisor
    acknowledges it (a dealer may not), across restarts too (the writer has since moved the
    head past the cut, so the mark keeps it pending); then the table deals, and verify notes
    each finding with its acknowledgement."""
    config = load_config(config_file)
    directory = config.journal.directory
    _session(config, rounds=2)
    newest = sorted(directory.glob("journal-*.jsonl"))[-1]
    lines = newest.read_bytes().splitlines(keepends=True)
    newest.write_bytes(b"".join(lines[:-5]))
    with Running(config) as running:
        assert running.check.damage["kind"] == "truncated"
        status = running.ask("round.status")
        assert "truncated" in status["journal_hold"]
        line = running.service.wiring.status_line()  # what systemctl status shows
        assert "journal damaged, commands held for a supervisor: truncated" in line
        assert line.endswith("journal NOT keyed (HMAC off)")
        with pytest.raises(Refusal) as refused:
            running.ask("round.open")
        assert refused.value.code is ErrorCode.UNAVAILABLE
        assert "found damaged at start" in refused.value.message
    with Running(config) as running:  # restarted without an acknowledgement: still held
        assert running.check.damage["kind"] == "unacknowledged"
        assert "never acknowledged" in running.ask("round.status")["journal_hold"]
        with pytest.raises(Refusal) as refused:
            running.ask("journal.acknowledge", DEALER, reason="me")
        assert refused.value.code is ErrorCode.REFUSED and "supervisor" in refused.value.message
        assert running.ask("journal.acknowledge", SUPERVISOR, reason="tail restored from the "
                           "off-box copy")["accepted"]
        assert running.ask("round.status")["journal_hold"] is None
        # the cut took round 2's void: recovery kept it taking bets; commands pass again
        assert running.ask("supervisor.void", SUPERVISOR, reason="cut")["state"] == "voided"
    found, again = _events(directory, "journal_damage_found")
    ack, = _events(directory, "journal_damage_acknowledged")
    assert found["kind"] == "truncated" and found["head"]["seq"] > found["journal_last_seq"]
    assert again["kind"] == "unacknowledged" and f"seq {found['_seq']}" in again["detail"]
    assert (ack["found_seq"], ack["also_found_seqs"], ack["role"], ack["reason"]) == (
        again["_seq"], [found["_seq"]], "supervisor", "tail restored from the off-box copy")
    assert ack["actor"].startswith("uid 1002") and ack["_actor"] == ack["actor"]
    assert main(["journal", "verify", str(directory)]) == 0
    out = capsys.readouterr().out
    assert out.count("acknowledged by uid 1002") == 2 and "NOT acknowledged" not in out
    with Running(config) as running:  # the same damage is not found again
        assert running.check.damage is None and running.ask("round.status")["journal_hold"] \
            is None


def test_start_up_check_reads_only_since_the_mark(config_file: Path) -> None:
    """A head without its verified mark (deleted) holds dealing, and the check reads the
    newest file; once acknowledged, the service moves the mark as it runs and when it closes
    the journal, so a later start reads only what came after, however long the journal is; a
    killed service's next start reads from the last mark."""
    config = load_config(config_file)
    directory = config.journal.directory
    _session(config, rounds=20)
    (directory / VERIFIED_NAME).unlink()
    with Running(config) as running:  # a head without its mark: deleted, so held
        first = running.check
        assert first.damage["kind"] == "unchecked" and "verified mark" in first.describe()
        running.ask("journal.acknowledge", SUPERVISOR, reason="mark lost in a restore")
    assert not first.incremental and first.report.records > 100
    assert (directory / VERIFIED_NAME).exists()
    _session(config, rounds=3)
    with Running(config) as running:
        again = running.check
        marked = again.report.last_seq
        running.ask("round.open")
        running.service.wiring.journal_check = None  # as if killed: the mark does not move
    total = sum(1 for _ in iter_records([directory]))
    assert again.incremental and again.damage is None
    assert again.report.records < 20 < total
    with Running(config) as running:
        crashed = running.check
    assert crashed.incremental and crashed.damage is None
    assert crashed.report.first_seq == marked and crashed.report.records < 30


def test_torn_last_line_is_a_power_cut_not_damage(config_file: Path) -> None:
    """Half a record at the end is what a power cut leaves: the writer repairs and journals it;
    dealing is not held."""
    config = load_config(config_file)
    _session(config)
    newest = sorted(config.journal.directory.glob("journal-*.jsonl"))[-1]
    with newest.open("ab") as handle:
        handle.write(b'{"actor":null,"event":"card_ass')
    with Running(config) as running:
        assert running.check.damage is None
        assert running.ask("round.open")["state"] == "betting"
    assert len(_events(config.journal.directory, "journal_repaired")) == 1


def test_missing_head_holds_dealing(config_file: Path) -> None:
    """A journal whose head is gone cannot show a cut end: held until acknowledged."""
    config = load_config(config_file)
    _session(config)
    (config.journal.directory / HEAD_NAME).unlink()
    with Running(config) as running:
        assert running.check.damage["kind"] == "unchecked"
        assert "no head" in running.ask("round.status")["journal_hold"]


def test_hmac_on_by_default_and_loud_when_off(
        tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without journal.hmac_key_file the key the install put beside the config is used; with
    none, `run --check` warns (exit 0) and so does the start."""
    assert main(["run", "--check", "--config", str(config_file)]) == 0
    out = capsys.readouterr()
    assert "NO HMAC" in out.out and "WARNING: journal HMAC is OFF" in out.err
    key = tmp_path / "journal.key"
    key.write_text("ab" * 32 + "\n")
    key.chmod(0o400)
    assert load_config(config_file).journal.hmac_key_file == key
    assert main(["run", "--check", "--config", str(config_file)]) == 0
    out = capsys.readouterr()
    assert f"HMAC {key}" in out.out and "WARNING" not in out.err
    config_file.write_text(service_toml(tmp_path).replace(
        "[journal]\n", '[journal]\nhmac_key_file = ""\n'))
    assert load_config(config_file).journal.hmac_key_file is None


def test_daily_pass_moves_the_mark(config_file: Path) -> None:
    """The daily retention pass also checks what was written since the mark and moves it, so
    a service that runs for months does not make its next start read months of records."""
    config = load_config(config_file)
    directory = config.journal.directory
    with Running(config) as running:
        for _ in range(3):
            running.ask("round.open")
            running.ask("supervisor.void", SUPERVISOR, reason="test round")
        running.service.wiring.retention.run_pass()
        mark = read_mark(directory, None)
        assert mark is not None
        assert mark.seq == running.service.wiring.writer.seq


def _rewrite_record(directory: Path, event: str, change: dict, *, rehash: bool) -> int:
    """Change the payload of the first ``event`` record of the newest file; with ``rehash`` its
    hash is recomputed (a rewrite without a key: the line is sound, the next link breaks),
    otherwise the line no longer matches its hash. Returns its seq."""
    newest = sorted(directory.glob("journal-*.jsonl"))[-1]
    lines = newest.read_bytes().splitlines(keepends=True)
    for index, raw in enumerate(lines):
        body = json.loads(raw)
        if body["event"] == event:
            body["payload"].update(change)
            if rehash:
                body.pop("hash")
                body["hash"] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
            lines[index] = (canonical_json(body) + "\n").encode()
            newest.write_bytes(b"".join(lines))
            return int(body["seq"])
    raise AssertionError(f"no {event} record")


def _garble_tail(directory: Path, lines: int) -> int:
    """Overwrite the last ``lines`` complete lines of the newest file with bytes of the same
    length (more than a power cut leaves); the seq of the first."""
    newest, kept = _lines(directory)
    first = _seq(kept[-lines])
    for index in range(len(kept) - lines, len(kept)):
        kept[index] = b"#" * (len(kept[index]) - 1) + b"\n"
    newest.write_bytes(b"".join(kept))
    return first


@pytest.mark.parametrize("damage", ["rewritten_and_rehashed", "unreadable", "damaged_tail"])
def test_damage_inside_the_interrupted_rounds_records_holds_the_table(
        config_file: Path, damage: str) -> None:
    """Issue 23 finding 8: a record of the round the stop interrupted is damaged: rewritten
    and rehashed, or unreadable (both behind the verified mark, so only recovery's replay sees
    them), or the journal's last two lines garbled (the writer does not repair that: it is
    not a power cut). The service starts anyway, holds every command until a supervisor
    acknowledges the damage, and the supervisor can then conclude the round (void: every
    wager returned once); the next start holds nothing."""
    config = load_config(config_file)
    directory = config.journal.directory
    with Running(config) as running:
        running.ask("round.open")
        for box in ("1", "2"):
            running.ask("wager.place", wager_id=f"w{box}", position=box, bet="main",
                        amount=1000, player=f"p{box}")
    if damage == "damaged_tail":
        damaged = _garble_tail(directory, 2)  # the last wager's record and journal_closed
    else:
        damaged = _rewrite_record(directory, "wager_accepted", {"round": 7},
                                  rehash=damage == "rewritten_and_rehashed")
    with Running(config) as running:  # before the fix: ServiceError, exit 2, no retry
        recovery = running.service.wiring.recovery
        assert recovery.unproven is not None and recovery.round == 1
        status = running.ask("round.status")
        assert status["journal_hold"] is not None and status["round"] == 1
        with pytest.raises(Refusal) as refused:
            running.ask("supervisor.void", SUPERVISOR, reason="too early")
        assert refused.value.code is ErrorCode.UNAVAILABLE
        assert running.ask("journal.acknowledge", SUPERVISOR,
                           reason="wager record damaged; the round is voided")["accepted"]
        assert running.ask("supervisor.void", SUPERVISOR, reason="record damaged")["state"] \
            == "voided"
    found, = _events(directory, "journal_damage_found")
    if damage == "damaged_tail":  # found by the start-up check; the file left as evidence
        assert found["seq"] == damaged and found["file"].endswith("journal-000001.jsonl")
        assert len(list(directory.glob("journal-*.jsonl"))) == 2
    else:  # found by recovery's replay
        assert found["kind"] == "unproven"
        assert found["seq"] == damaged and f"seq {damaged}" in found["detail"]
        assert ("altered" if damage == "rewritten_and_rehashed" else "unreadable") \
            in found["detail"]
    completed = _events(directory, "recovery_completed")[-1]
    assert completed["unproven"] and completed["round"] == 1
    voided, = _events(directory, "round_voided")
    assert sorted(r["wager_id"] for r in voided["settlement"]["results"]) == ["w1", "w2"]
    with Running(config) as running:  # concluded: the next start holds nothing
        assert running.ask("round.status")["journal_hold"] is None
        assert running.service.wiring.recovery.unproven is None


@pytest.fixture(name="keyed_config")
def fixture_keyed_config(tmp_path: Path, config_file: Path) -> ServiceConfig:
    """The service's journal keyed, as installed: ``journal.key`` beside the config."""
    key = tmp_path / "journal.key"
    key.write_text("cd" * 32 + "\n")
    key.chmod(0o400)
    return load_config(config_file)


def _lines(directory: Path) -> tuple[Path, list[bytes]]:
    newest = sorted(directory.glob("journal-*.jsonl"))[-1]
    return newest, newest.read_bytes().splitlines(keepends=True)


def _seq(line: bytes) -> int:
    return int(json.loads(line)["seq"])


def _verify_with_key(config: ServiceConfig, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["journal", "verify", str(config.journal.directory), "--hmac-key",
                 str(config.journal.hmac_key_file)])
    return code, capsys.readouterr().out


def _flip_newer_slot(directory: Path, key: bytes) -> int:
    """Flip one bit inside the newer head slot; the seq the older (sound) slot names."""
    path = directory / HEAD_NAME
    newest = read_head(path, key).head
    assert newest is not None
    data = bytearray(path.read_bytes())
    slot = 0 if b'"seq":%d,' % newest.seq in data[:SLOT_BYTES] else 1
    data[slot * SLOT_BYTES + 20] ^= 0x01
    path.write_bytes(bytes(data))
    older = read_head(path, key).head
    assert older is not None and older.seq < newest.seq
    return older.seq


@pytest.mark.parametrize("mark", ["kept", "deleted"])
def test_spoiled_newer_head_slot_and_cut_last_record_is_truncated(
        keyed_config: ServiceConfig, capsys: pytest.CaptureFixture[str], mark: str) -> None:
    """Issue 24 finding 4a: one bit flipped in the newer head slot and the journal cut back to
    the record the older slot names, with the verified mark kept or deleted: the spoiled slot
    says the head cannot vouch for that end (a torn head write leaves the record it was naming
    on disk, so a journal ending at the other slot's record is a cut). Verify with the key
    exits 1 `truncated`, and the start holds dealing."""
    config = keyed_config
    directory = config.journal.directory
    key = load_service_key(config.journal.hmac_key_file)
    _session(config)
    sound = _flip_newer_slot(directory, key)
    newest, lines = _lines(directory)
    newest.write_bytes(b"".join(line for line in lines if _seq(line) <= sound))
    if mark == "deleted":
        (directory / VERIFIED_NAME).unlink()
    code, out = _verify_with_key(config, capsys)
    assert code == 1 and "DAMAGED: truncated" in out, out
    assert "the other slot" in out and "is damaged" in out, out
    with Running(config) as running:
        assert running.check.damage["kind"] == "truncated"
        assert "truncated" in running.ask("round.status")["journal_hold"]


def test_older_head_restored_with_a_newer_verified_mark_is_truncated(
        keyed_config: ServiceConfig, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24 finding 4b: the head of an earlier stop put back and the journal cut back to
    it, the newer verified mark (keyed, naming a later seq) left in place: the mark is held
    against the files like the head, so verify exits 1 `truncated` and the start holds."""
    config = keyed_config
    directory = config.journal.directory
    _session(config)
    old_head = (directory / HEAD_NAME).read_bytes()
    newest, lines = _lines(directory)
    kept = len(lines)
    _session(config, rounds=2)
    assert read_mark(directory, load_service_key(config.journal.hmac_key_file)).seq \
        > _seq(lines[-1])
    newest, lines = _lines(directory)
    newest.write_bytes(b"".join(lines[:kept]))
    (directory / HEAD_NAME).write_bytes(old_head)
    code, out = _verify_with_key(config, capsys)
    assert code == 1 and "DAMAGED: truncated" in out and "verified mark" in out, out
    with Running(config) as running:
        assert running.check.damage["kind"] == "truncated"
        assert "truncated" in running.ask("round.status")["journal_hold"]
