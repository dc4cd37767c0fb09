"""How a batch crosses the gateway (issue 28, a batch of 500 under 100 ms): one control
request in the compact form (``rows``) when it fits the control socket's line, as few as fit
when it does not, and HTTPS answers that do not wait on Nagle's algorithm."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed.floorlab import free_port
from controller.journal.reader import iter_records
from controller.service.protocol import MAX_LINE_BYTES, encode
from controller.studio.book import wager_id
from controller.studio.config import load_studio_config
from controller.studio.gateway import Gateway, line_parts, row_bytes
from controller.studio.ledger import Ledger
from controller.studio.server import StudioServer, _Handler, encode_answer
from controller.studio.wire import MAX_ID_CHARS, MAX_KEY_CHARS, MemberWager
from tests.service_e2e.conftest import Processes
from tests.studio.conftest import Studio, start_studio, studio_toml


def test_a_batch_of_500_is_one_input_and_one_record_at_the_table(
        processes: Processes, tmp_path: Path, pki: Path) -> None:
    """500 members' wagers in one batch reach the table as one ``wager.place-batch`` (the
    compact ``rows`` form fits the line that 250 objects filled): one input record naming
    the game server and the batch's key, one ``wagers_accepted`` record, each wager answered
    in the batch's order."""
    studio = start_studio(processes, tmp_path, pki, max_batch=500)
    try:
        status, opened = studio.call("POST", "/v1/rounds", {"key": "r500",
                                                             "betting_seconds": 60})
        assert status == 200, opened
        wagers = [{"id": f"w{n}", "member": f"m{n % 97}", "position": f"p{1 + n % 3}",
                   "bet": ("win", "lose", "tie")[n % 3], "amount": 100 * (1 + n % 5)}
                  for n in range(500)]
        status, answer = studio.call("POST", f"/v1/rounds/{opened['round']}/wagers",
                                     {"key": "b500", "wagers": wagers})
        assert status == 200, answer
        assert answer["accepted"] == 500 and answer["refused"] == 0
        assert [w["id"] for w in answer["wagers"]] == [w["id"] for w in wagers]
    finally:
        studio.gateway.terminate()
        studio.gateway.communicate(timeout=30)
        studio.service.terminate()
    records = list(iter_records([studio.journal]))
    inputs = [r for r in records if r.event_type == "input_command"
              and r.payload["type"] == "PlaceWagers"]
    assert len(inputs) == 1, "one request, one input for the batch of 500"
    assert "gs1 [operator via studio b500]" in inputs[0].actor
    assert [w["wager_id"] for w in inputs[0].payload["fields"]["wagers"]] == [
        f"gs1/w{n}" for n in range(500)]
    accepted = [r for r in records if r.event_type == "wagers_accepted"]
    assert len(accepted) == 1 and len(accepted[0].payload["wagers"]) == 500


def _longest(n: int) -> MemberWager:
    return MemberWager(f"{n:0{MAX_ID_CHARS}d}", "m" * MAX_ID_CHARS, "p" * 16, "b" * 32,
                       2**53 - 1)


@pytest.mark.parametrize("client", ["gs1", "g" * 64, "spiel\u00e4\"\\x"])
def test_a_batch_of_the_longest_ids_is_cut_into_lines_that_fit(client: str) -> None:
    """Each part of a batch of 500 of the longest fields the wire admits, sent with the
    longest envelope, is one request line within the control socket's bound; the parts keep
    the batch's order and cover it exactly; ordinary ids make one part."""
    wagers = [_longest(n) for n in range(500)]
    name = len(json.dumps(client, ensure_ascii=False).encode()) - 2
    runs = line_parts([name + row_bytes(w) for w in wagers])
    assert len(runs) > 1 and runs[0][0] == 0 and runs[-1][1] == 500
    assert all(a[1] == b[0] for a, b in zip(runs, runs[1:]))
    for start, end in runs:
        rows = [[wager_id(client, w.id), w.position, w.bet, w.amount, w.member]
                for w in wagers[start:end]]
        line = encode({"id": 2**53 - 1, "verb": "wager.place-batch", "args": {"rows": rows},
                       "actor": f"studio {'k' * MAX_KEY_CHARS}",
                       "acting_for": {"name": client, "role": "operator"}})
        assert len(line) <= MAX_LINE_BYTES, (start, end, len(line))
    ordinary = [MemberWager(f"r99w{n}", f"m{n}", "p1", "three_knights", 1000)
                for n in range(500)]
    assert line_parts([3 + row_bytes(w) for w in ordinary]) == [(0, 500)]


class _Recording(_Handler):
    """The real handler, noting the socket option it served each connection with."""

    nodelay: list[int] = []

    def setup(self) -> None:
        super().setup()
        self.nodelay.append(self.connection.getsockopt(socket.IPPROTO_TCP,
                                                       socket.TCP_NODELAY))


@pytest.fixture(name="listener")
def fixture_listener(tmp_path: Path, pki: Path) -> Iterator[StudioServer]:
    port = free_port()
    (tmp_path / "studio.toml").write_text(studio_toml(tmp_path, pki, port, 500))
    config = load_studio_config(tmp_path / "studio.toml")
    ledger = Ledger(config.ledger)
    server = StudioServer(config, Gateway(config, ledger))
    server.RequestHandlerClass = _Recording
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(timeout=30)
        server.server_close()
        ledger.close()


def test_answers_are_sent_without_waiting_on_nagle(listener: StudioServer, pki: Path) -> None:
    """Each connection is served with ``TCP_NODELAY``: an answer written as headers then
    body otherwise waits for the client's delayed ACK of the headers (about 40 ms on Linux,
    measured: a batch of 500 took 89 ms at p50 with it, 50 ms without)."""
    _Recording.nodelay.clear()
    context = ssl.create_default_context(cafile=str(pki / "ca.pem"))
    context.load_cert_chain(pki / "gs1.pem", pki / "gs1.key")
    connection = http.client.HTTPSConnection("127.0.0.1", listener.server_address[1],
                                             context=context, timeout=60)
    try:
        connection.request("GET", "/v1/status")
        response = connection.getresponse()
        answer = json.loads(response.read())
    finally:
        connection.close()
    assert response.status == 200 and answer["ok"] and answer["round"] is None
    assert _Recording.nodelay and all(_Recording.nodelay), _Recording.nodelay


def test_an_id_with_a_trailing_newline_is_a_bad_request(studio: Studio) -> None:
    """A token is matched whole: ``"a1\\n"`` was taken for a token (``$`` matches before a
    final newline), reached the table, and the table refused the whole batch as malformed,
    answered as if every wager were refused; it is the body's shape that is wrong: 400
    naming the field, nothing placed."""
    status, opened = studio.call("POST", "/v1/rounds", {"key": "rnl", "betting_seconds": 60})
    assert status == 200, opened
    good = {"id": "a1", "member": "m1", "position": "p1", "bet": "win", "amount": 500}
    status, answer = studio.call("POST", f"/v1/rounds/{opened['round']}/wagers", {
        "key": "bnl", "wagers": [good, {**good, "id": "a2\n"}]})
    assert status == 400 and answer["code"] == "bad_request", answer
    assert "wager 1: 'id'" in answer["message"]
    with studio.control() as control:
        assert control.request("wager.list")["wagers"] == []


def test_an_answer_is_utf8_json_and_text_with_a_lone_surrogate_is_escaped() -> None:
    """Answers are written unescaped (UTF-8, as JSON is), which cannot carry a lone
    surrogate: such text is escaped instead of failing the answer."""
    plain = {"ok": False, "message": "Spielf\u00e4hig", "results": [{"net": -200}]}
    assert encode_answer(plain) == json.dumps(plain, ensure_ascii=False,
                                              separators=(",", ":")).encode()
    odd = {"ok": False, "message": "x\ud800"}
    assert json.loads(encode_answer(odd)) == odd
