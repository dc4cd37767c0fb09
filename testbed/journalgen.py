"""Journals of made-up tables, for the tests and the benchmarks alike (the feed, the floor,
the web and the command line read them).

The bench always names its table ``bench-1``; a floor needs tables with their own ids and their
own chains. :func:`rehome` re-seals every record of a real bench journal under another table id
(new ``table``, new ``prev``/``hash``, the same events in the same order), and
:func:`write_live` appends them at a given pace, as the service would, so the feed follows a
journal that is still being written. :func:`write_synthetic_journal` writes many rounds shaped
like the service's (RWS-3CP: wagers, cards, rulings with clauses, settlements and voids) with
the journal writer itself, fast, for the web's index and pages at scale.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from pathlib import Path

from controller.journal.files import file_name
from controller.journal.policy import Durability
from controller.journal.reader import iter_records
from controller.journal.record import GENESIS_HASH, canonical_json, seal
from controller.journal.writer import JournalWriter


def rehome(source: Path, table: str) -> list[bytes]:
    """The lines of ``source``'s journal as table ``table``'s own chain (no HMAC)."""
    prev = GENESIS_HASH
    lines: list[bytes] = []
    for record in iter_records([source]):
        body = record.body()
        body["table"], body["prev"] = table, prev
        sealed = seal(body, None)
        prev = sealed["hash"]
        lines.append(canonical_json(sealed).encode() + b"\n")
    return lines


def write_all(directory: Path, lines: list[bytes]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file_name(1)
    path.write_bytes(b"".join(lines))
    return path


def write_live(directory: Path, lines: list[bytes], interval_s: float,
               stop: object | None = None) -> Iterator[int]:
    """Append ``lines`` one by one every ``interval_s`` seconds (flushed, not fsynced); yields
    the number written so far, so a caller can interleave several tables."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / file_name(1), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
    try:
        start = time.monotonic()
        for index, line in enumerate(lines):
            delay = start + index * interval_s - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            os.write(fd, line)
            yield index + 1
    finally:
        os.close(fd)


GAME = "rws-three-card-poker"
RANKS = "23456789TJQKA"
SUITS = "CDHS"
VOID_CLAUSES = ("RWS-3CP 5.1.4", "RWS-3CP 5.1.2", "RWS-3CP 5.4.2")
PLAYERS = ("alice", "bob", "chen", "dana", "eve", "farid", "gus")


def write_synthetic_journal(directory: Path, rounds: int, *, seed: int = 1,
                            records: int | None = None, key: bytes | None = None) -> int:
    """Write ``rounds`` rounds (or until ``records`` records) to a journal; returns the count."""
    rng = random.Random(seed)
    deck = [r + s for r in RANKS for s in SUITS]
    written = 0
    with JournalWriter(directory, table_id="T1", durability=Durability.NONE,
                       rotate_daily=False, hmac_key=key) as writer:
        number = 0
        while (records is None and number < rounds) or (records is not None
                                                        and writer.seq < records):
            number += 1
            written += _round(writer, rng, deck, str(number))
    return written


def _round(writer: JournalWriter, rng: random.Random, deck: list[str], rid: str) -> int:
    dealer = "dealer:d" + str(rng.randint(1, 9))
    append = writer.append
    count = 0

    def put(event: str, payload: dict[str, object], actor: str | None = None) -> None:
        nonlocal count
        append(event, payload, round_id=rid, actor=actor)
        count += 1

    put("input_command", {"type": "OpenRound", "fields": {"actor": dealer, "role": "dealer"}},
        dealer)
    put("round_opened", {"game": GAME, "round": int(rid)})
    boxes = rng.sample(range(1, 8), rng.randint(1, 4))
    wagers = []
    for box in boxes:
        amount = rng.choice((500, 1000, 2500, 10000, 50000))
        player = rng.choice(PLAYERS)
        wid = f"{rid}-{box}"
        wagers.append((wid, amount))
        put("input_command", {"type": "PlaceWager", "fields": {
            "actor": dealer, "role": "dealer", "amount": amount, "bet": "ante",
            "player": player, "position": str(box), "wager_id": wid}}, dealer)
        put("wager_accepted", {"round": int(rid), "wager": {
            "amount": amount, "bet": "ante", "id": wid, "player": player,
            "position": str(box)}})
    put("bets_closed", {"round": int(rid)})
    cards = rng.sample(deck, 3 * (len(boxes) + 1))
    for index, position in enumerate([*map(str, boxes), "dealer"]):
        hand = cards[3 * index:3 * index + 3]
        put("input_device", {"type": "CardSetDispensed", "fields": {
            "cards": hand, "device": "shuffler", "hand_number": index + 1}}, "shuffler")
        for card in hand:
            put("card_assigned", {"card": card, "position": position, "round": int(rid)})
    if rng.random() < 0.05:
        clause = rng.choice(VOID_CLAUSES)
        put("irregularity_ruled", {"action": "supervisor", "clause": clause,
                                   "kind": "wrong_count_player", "round": int(rid)})
        put("supervisor_decided", {"action": "void", "actor": "s1", "clause": clause,
                                   "reason": "count wrong", "round": int(rid)})
        put("round_voided", {"clause": clause, "reason": "count wrong", "round": int(rid),
                             "settlement": {"results": [
                                 {"wager_id": w, "outcome": "returned", "net": 0,
                                  "rule": clause, "stake": 0} for w, _ in wagers]}})
    else:
        results = []
        for wid, amount in wagers:
            outcome = rng.choice(("win", "lose", "push"))
            net = {"win": amount, "lose": -amount, "push": 0}[outcome]
            results.append({"wager_id": wid, "outcome": outcome, "net": net,
                            "rule": "RWS-3CP 3.10.2", "stake": amount})
        put("round_settled", {"round": int(rid), "settlement": {"results": results}})
    return count
