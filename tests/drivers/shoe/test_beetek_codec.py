"""Bee-Tek ASCII decoder: every field format, resynchronisation after noise, fuzzing."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.games.cards import FULL_DECK, parse_card
from drivers.shoe.beetek_codec import (
    BeeTekAlarm,
    BeeTekCard,
    BeeTekCodec,
    BeeTekNoRead,
    BeeTekWarning,
    parse_beetek_card,
)
from drivers.shoe.codes import Garbage

from .streams import chunk_sizes, decode_all, mutated

cards = st.sampled_from(FULL_DECK)
sections = st.sampled_from(["Game", "Manual Burn Cards"])
messages = st.one_of(
    st.builds(lambda c, s: BeeTekCard(c, s, burn="Burn" in s), cards, sections),
    st.builds(BeeTekNoRead, sections),
    st.just(BeeTekAlarm("E3", "Card Not Read", "GameAlarm")),
    st.just(BeeTekWarning("W0x01", "")),
)
styles = st.fixed_dictionaries({"suit_first": st.booleans(), "ten": st.sampled_from(["10", "T"])})


@pytest.fixture(name="codec")
def fixture_codec() -> BeeTekCodec:
    return BeeTekCodec()


@pytest.mark.parametrize(("token", "code"), [
    ("4S", "4S"), ("S4", "4S"), ("H3", "3H"), ("10D", "TD"), ("D10", "TD"), ("TC", "TC"),
    ("CT", "TC"), ("AS", "AS"), ("SA", "AS"), ("kh", "KH"),
])
def test_rank_and_suit_in_either_order(token, code):
    """Rank and suit come in either order, ten as 10 or T."""
    assert parse_beetek_card(token) == parse_card(code)


def test_field_formats(codec):
    """Card, burn card, no-read, alarm and warning lines decode to their messages."""
    stream = (b" [Game]<Card:4S>  [Manual Burn Cards]<Card:H3>  [Game]<Game> "
              b" [GameAlarm]<Alarm:E3 Card Not Read> <W0x01>")
    got, rest = decode_all(codec.decode, stream)
    assert got == [
        BeeTekCard(parse_card("4S"), "Game"),
        BeeTekCard(parse_card("3H"), "Manual Burn Cards", burn=True),
        BeeTekNoRead("Game"),
        BeeTekAlarm("E3", "Card Not Read", "GameAlarm"),
        BeeTekWarning("W0x01", ""),
    ]
    assert rest == b""


def test_message_split_across_reads_waits(codec):
    """A message cut between reads is decoded once the rest arrives."""
    got, _ = decode_all(codec.decode, b" [Game]<Card:4S> ", chunks=[3, 5, 4])
    assert got == [BeeTekCard(parse_card("4S"), "Game")]


@pytest.mark.parametrize("noise", [b"xx", b"<Card:ZZ>", b"[Game]", b"<Car", b"[Ga", b"\xff\x00<"])
def test_noise_is_garbage_and_next_message_survives(codec, noise):
    """Noise or a truncated message is dropped as Garbage; the following message decodes."""
    got, _ = decode_all(codec.decode, noise + b" [Game]<Card:9C> ")
    assert any(isinstance(m, Garbage) for m in got)
    assert got[-1] == BeeTekCard(parse_card("9C"), "Game")


@settings(max_examples=1500, deadline=None)
@given(data=st.binary(max_size=300), chunks=chunk_sizes)
def test_random_bytes_never_raise(data, chunks):
    """Arbitrary bytes never raise, and at most one token's worth is left waiting."""
    _, rest = decode_all(BeeTekCodec().decode, data, chunks)
    assert len(rest) <= 64 + 64


@settings(max_examples=500, deadline=None)
@given(msgs=st.lists(messages, min_size=1, max_size=8), style=styles, chunks=chunk_sizes)
def test_valid_streams_round_trip_in_any_chunking(msgs, style, chunks):
    """The simulator's encoding decodes back to the same messages however reads split it."""
    data = b"".join(BeeTekCodec.encode(m, **style) for m in msgs)
    got, rest = decode_all(BeeTekCodec().decode, data, chunks)
    assert got == msgs


@settings(max_examples=1000, deadline=None)
@given(data=st.data(), msgs=st.lists(messages, min_size=1, max_size=5), last=messages)
def test_mutated_streams_resynchronise(data, msgs, last):
    """After any corruption, the next clean message decodes exactly.

    A section-less warning may inherit a stranded ``[section]`` whose body was lost: the grammar
    cannot tell the two apart, and the warning's code is still exact.
    """
    noisy = data.draw(mutated(b"".join(BeeTekCodec.encode(m) for m in msgs)))
    got, _ = decode_all(BeeTekCodec().decode, noisy + BeeTekCodec.encode(last))
    decoded = got[-1]
    if isinstance(last, BeeTekWarning) and isinstance(decoded, BeeTekWarning):
        decoded = replace(decoded, section="")
    assert decoded == last


@settings(max_examples=300, deadline=None)
@given(msgs=st.lists(messages, min_size=2, max_size=6), junk=st.binary(min_size=1, max_size=10)
       .filter(lambda b: b.strip(b" \t\r\n") and b"[" not in b and b"<" not in b))
def test_inserted_junk_is_counted(msgs, junk):
    """Junk between messages is reported as Garbage and every message still decodes."""
    encoded = [BeeTekCodec.encode(m) for m in msgs]
    got, _ = decode_all(BeeTekCodec().decode, encoded[0] + junk + b"".join(encoded[1:]))
    assert sum(isinstance(m, Garbage) for m in got) >= 1
    assert [m for m in got if not isinstance(m, Garbage)] == msgs
