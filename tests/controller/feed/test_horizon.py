"""The hold rule: a face-down card never leaves the table before its reveal, everything else
leaves in chain order as soon as it is written."""

from __future__ import annotations

import pytest

from controller.bench import Bench
from controller.service.visibility import REVEAL_EVENTS, Horizon, card_codes
from controller.games.catalog import GAMES
from controller.journal.reader import iter_records
from controller.journal.record import Record
from controller.service.visibility import hidden_position

HIDDEN_GAMES = ["rws-three-card-poker", "rws-nc-three-pictures", "mbs-three-pictures",
                "mbs-royal-three-pictures"]


def _journal(tmp_path_factory: pytest.TempPathFactory, game: str, faults: str | None
             ) -> list[Record]:
    directory = tmp_path_factory.mktemp(game)
    Bench(game, 8, seed=5, faults=faults, journal_dir=directory).run()
    return list(iter_records([directory]))


def _face_down(records: list[Record], game: str) -> dict[str, set[str]]:
    """Each round's face-down cards, from the journal as the reveal shows them."""
    position = hidden_position(GAMES[game])
    cards: dict[str, set[str]] = {}
    for record in records:
        if record.event_type in ("card_assigned", "hand_complete") \
                and record.payload.get("position") == position and record.round_id:
            cards.setdefault(record.round_id, set()).update(card_codes(record.payload))
    return cards


def _release_as_written(records: list[Record]) -> list[tuple[int, int]]:
    """(index of the record, how many records were written when it was released), as the
    feed would release them with the journal growing one record at a time."""
    horizon = Horizon()
    released: list[tuple[int, int]] = []
    sent = 0
    for written in range(1, len(records) + 1):
        ready = horizon.releasable(records[sent:written])
        released.extend((index, written) for index in range(sent, sent + ready))
        sent += ready
    return released


@pytest.mark.parametrize("game", HIDDEN_GAMES)
def test_no_face_down_card_leaves_before_its_round_shows_it(
        tmp_path_factory: pytest.TempPathFactory, game: str) -> None:
    """A record showing a card of the face-down hand (the dealer's set from the shuffler, its
    card_assigned and hand_complete) is released only once the journal holds the reveal or
    the round's end (RWS-3CP 3.6, RWS-NC3P 3.12, MBS-3P 3.4, MBS-R3P 3.12); all records go
    in the end, in order."""
    records = _journal(tmp_path_factory, game, "0.3")
    face_down = _face_down(records, game)
    assert face_down, "the bench dealt no face-down hand: the test would prove nothing"
    released = _release_as_written(records)
    assert [index for index, _ in released] == list(range(len(records)))
    held = 0
    for index, written in released:
        record = records[index]
        hidden = face_down.get(record.round_id or "", set())
        if record.event_type in REVEAL_EVENTS or not set(card_codes(record.payload)) & hidden:
            continue
        held += 1
        ended = any(r.round_id == record.round_id and r.event_type in REVEAL_EVENTS
                    or (r.round_id not in (None, record.round_id))
                    for r in records[index:written])
        assert ended, f"seq {record.seq} ({record.event_type}) showed a face-down card early"
    assert held > 0


def test_live_three_pictures_holds_nothing(tmp_path_factory: pytest.TempPathFactory) -> None:
    """LIVE-3P deals every hand face up (studio procedure): each record leaves as written."""
    records = _journal(tmp_path_factory, "live-three-pictures", None)
    assert all(index + 1 == written for index, written in _release_as_written(records))


def test_a_player_set_goes_before_the_dealer_set_is_dealt(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The hold is as short as the rule allows: the first player's cards leave while the round
    is still being dealt (only the dealer's set waits)."""
    records = _journal(tmp_path_factory, "rws-three-card-poker", None)
    released = dict(_release_as_written(records))
    first_player = next(i for i, r in enumerate(records) if r.event_type == "hand_complete"
                        and r.payload.get("position") == "1")
    reveal = next(i for i, r in enumerate(records) if r.event_type == "dealer_revealed")
    assert released[first_player] <= first_player + 2 < reveal
