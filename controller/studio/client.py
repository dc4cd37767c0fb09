"""The reference game server (``tablectl studio-client``): opens rounds, places its members'
wagers in batches, follows the cards and checks every settlement against its own arithmetic.

Everything it sends is a pure function of ``(shift, seed, round index)``: the wagers, the
batches and their idempotency keys. So a client killed at any point and started again with
the same arguments resends exactly what it sent before and gets the same answers, and the
state file (one JSON line per finished round) tells it where to take up the shift."""

from __future__ import annotations

import http.client
import json
import random
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.studio.arithmetic import BETS, net
from controller.studio.errors import StudioClientError
from drivers.backoff import ExponentialBackoff

POSITIONS = ("p1", "p2", "p3")
AMOUNTS = (100, 200, 500, 1000)
RETRY_SECONDS = 60.0
"""How long a request is retried while the gateway cannot be reached (it restarts)."""
RETRY_BACKOFF = ExponentialBackoff(0.1, 2.0)
"""While the gateway restarts: 0.1 s doubling to 2 s, jittered (``drivers.backoff``)."""


@dataclass(frozen=True, slots=True)
class Shift:
    """What the client plays: ``rounds`` rounds of ``wagers`` wagers in batches of ``batch``."""

    name: str
    seed: int
    rounds: int
    wagers: int
    batch: int
    betting_seconds: int
    close_early: bool = True
    """Close betting as soon as every batch is placed (a load test); else wait for the window."""

    def round_key(self, index: int) -> str:
        return f"{self.name}-r{index}"

    def round_wagers(self, index: int) -> list[dict[str, Any]]:
        chance = random.Random(f"{self.seed}-{self.name}-{index}")
        return [{"id": f"r{index}w{n}", "member": f"m{chance.randint(1, 5000)}",
                 "position": chance.choice(POSITIONS), "bet": chance.choice(BETS),
                 "amount": chance.choice(AMOUNTS)} for n in range(self.wagers)]

    def batches(self, index: int) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        wagers = self.round_wagers(index)
        for number, start in enumerate(range(0, len(wagers), self.batch)):
            yield f"{self.round_key(index)}-b{number}", wagers[start:start + self.batch]


@dataclass
class RoundReport:
    index: int
    round: int
    accepted: int = 0
    refused: int = 0
    settled: int = 0
    returned: int = 0
    mismatches: list[str] = field(default_factory=list)
    batch_seconds: list[float] = field(default_factory=list)
    ended: str = ""
    result_ms: float | None = None
    """From this client receiving the round's last card to receiving its result."""

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "round": self.round, "accepted": self.accepted,
                "refused": self.refused, "settled": self.settled, "returned": self.returned,
                "ended": self.ended, "mismatches": self.mismatches[:10],
                "result_ms": None if self.result_ms is None else round(self.result_ms, 1),
                "batch_ms": [round(s * 1000, 1) for s in self.batch_seconds]}


class Connection:
    """One HTTPS connection with a client certificate, reopened when it breaks."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext) -> None:
        self.host, self.port, self.context = host, port, context
        self._http: http.client.HTTPSConnection | None = None

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             timeout: float = 60.0) -> tuple[int, dict[str, Any]]:
        deadline = time.monotonic() + RETRY_SECONDS
        retries = RETRY_BACKOFF.retries()
        while True:
            try:
                if self._http is None:
                    self._http = http.client.HTTPSConnection(self.host, self.port,
                                                             context=self.context,
                                                             timeout=timeout)
                data = None if body is None else json.dumps(body).encode()
                headers = {"Content-Type": "application/json"} if data is not None else {}
                self._http.request(method, path, body=data, headers=headers)
                response = self._http.getresponse()
                answer = json.loads(response.read() or b"{}")
                return response.status, answer
            except (OSError, http.client.HTTPException) as error:
                self.close()
                pause = retries.failed()
                if isinstance(error, ssl.SSLError) or time.monotonic() + pause > deadline:
                    raise StudioClientError(f"studio gateway {self.host}:{self.port}: "
                                            f"{error}") from error
                time.sleep(pause)  # the gateway restarts: back off, bounded by the deadline

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None


def client_context(certificate: Path, key: Path, ca: Path) -> ssl.SSLContext:
    try:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(ca))
    except (OSError, ssl.SSLError) as error:
        raise StudioClientError(f"--ca {ca}: {error}") from error
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(certificate, key)
    except (OSError, ssl.SSLError) as error:
        raise StudioClientError(f"client certificate {certificate}: {error}") from error
    return context


class GameServer:
    """Plays a :class:`Shift` through a :class:`Connection`."""

    def __init__(self, connection: Connection, shift: Shift) -> None:
        self.connection = connection
        self.shift = shift

    def _ok(self, method: str, path: str, body: dict[str, Any] | None = None
            ) -> dict[str, Any]:
        status, answer = self.connection.call(method, path, body)
        if status != 200:
            raise StudioClientError(f"{method} {path}: {status} {answer.get('code')}: "
                                    f"{answer.get('message')}")
        return answer

    def play(self, index: int) -> RoundReport:
        opened = self._ok("POST", "/v1/rounds", {"key": self.shift.round_key(index),
                                                 "betting_seconds": self.shift.betting_seconds})
        number = int(opened["round"])
        report = RoundReport(index, number)
        placed: dict[str, dict[str, Any]] = {}
        for key, wagers in self.shift.batches(index):
            started = time.perf_counter()
            answer = self._ok("POST", f"/v1/rounds/{number}/wagers",
                              {"key": key, "wagers": wagers})
            report.batch_seconds.append(time.perf_counter() - started)
            by_id = {w["id"]: w for w in wagers}
            for one in answer["wagers"]:
                if one["status"] == "accepted":
                    placed[one["id"]] = by_id[one["id"]]
                else:
                    report.refused += 1
        report.accepted = len(placed)
        if self.shift.close_early:
            self._ok("POST", f"/v1/rounds/{number}/close",
                     {"key": f"{self.shift.round_key(index)}-close"})
        self._follow(number, placed, report)
        return report

    def _follow(self, number: int, placed: dict[str, dict[str, Any]],
                report: RoundReport) -> None:
        hands: dict[str, list[str]] = {}
        after = 0
        last_card: float | None = None
        while True:
            answer = self._ok("GET", f"/v1/rounds/{number}/events?after={after}&wait=20")
            after = int(answer["next"])
            for event in answer["events"]:
                if event["type"] == "CardAssigned":
                    hands.setdefault(event["position"], []).append(event["card"])
                    if event["position"] == "banker" and event["index"] == 2:
                        last_card = time.perf_counter()
                elif event["type"] in ("RoundSettled", "RoundVoided"):
                    report.ended = event["type"]
                    if last_card is not None:
                        report.result_ms = (time.perf_counter() - last_card) * 1000
                    self._check(event, hands, placed, report)
                    return

    @staticmethod
    def _check(event: dict[str, Any], hands: dict[str, list[str]],
               placed: dict[str, dict[str, Any]], report: RoundReport) -> None:
        """Every accepted wager settled exactly once, at the client's own figure; nothing
        settled that was not accepted."""
        seen: dict[str, int] = {}
        for result in event["results"]:
            wager_id = result["wager_id"]
            seen[wager_id] = seen.get(wager_id, 0) + 1
            wager = placed.get(wager_id)
            if wager is None:
                report.mismatches.append(f"{wager_id}: settled but never accepted")
                continue
            if event["type"] == "RoundVoided":
                expected = 0
                report.returned += 1
            else:
                expected = net(wager["bet"], wager["amount"], hands[wager["position"]],
                               hands["banker"])
                report.settled += 1
            if result["net"] != expected:
                report.mismatches.append(f"{wager_id}: table {result['net']}, "
                                         f"ours {expected}")
        report.mismatches += [f"{w}: settled {n} times" for w, n in seen.items() if n != 1]
        report.mismatches += [f"{w}: accepted, never settled" for w in placed if w not in seen]


def done_rounds(state: Path | None) -> set[int]:
    if state is None or not state.exists():
        return set()
    return {json.loads(line)["index"] for line in state.read_text().splitlines() if line}


def run_shift(connection: Connection, shift: Shift, state: Path | None) -> list[RoundReport]:
    """Play the rounds not yet in ``state``; each finished round is appended to it."""
    server = GameServer(connection, shift)
    reports = []
    done = done_rounds(state)
    for index in range(shift.rounds):
        if index in done:
            continue
        report = server.play(index)
        reports.append(report)
        line = json.dumps(report.to_json(), separators=(",", ":"))
        print(line, flush=True)
        if state is not None:
            with open(state, "a", encoding="utf-8") as out:
                out.write(line + "\n")
    return reports
