"""Properties: any sequence of appends verifies, and any single-byte change to a journal file
is detected (hypothesis; issue 5 tamper tests generalised)."""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.journal import Durability, JournalWriter, verify

from .conftest import KEY, FakeClock, deal_round

_TEXT = st.text(min_size=0, max_size=12)
_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | _TEXT
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_APPEND = st.tuples(
    st.sampled_from(["card_assigned", "bets_closed", "tick", "operator_override", "ünïcode"]),
    st.dictionaries(_TEXT, _VALUE, max_size=4),
    st.one_of(st.none(), _TEXT),
    st.integers(0, 30_000),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(appends=st.lists(_APPEND, max_size=25), rotate=st.sampled_from([None, 700, 3000]),
       keyed=st.booleans())
def test_any_append_sequence_verifies(appends: list[tuple[str, dict, str | None, int]],
                                      rotate: int | None, keyed: bool) -> None:
    """Whatever is appended, with whatever rotation and clock jumps, the journal verifies."""
    clock = FakeClock()
    with tempfile.TemporaryDirectory() as folder:
        writer = JournalWriter(folder, table_id="T7", hmac_key=KEY if keyed else None,
                               durability=Durability.NONE, rotate_bytes=rotate, clock=clock,
                               monotonic_ns=clock.monotonic_ns)
        for event, payload, round_id, seconds in appends:
            clock.advance(seconds=seconds)
            writer.append(event, payload, round_id=round_id)
        writer.close()
        report = verify([folder], hmac_key=KEY if keyed else None)
        assert report.ok, report.problem
        assert report.records == writer.seq


def _build(folder: Path, keyed: bool) -> list[Path]:
    clock = FakeClock()
    writer = JournalWriter(folder, table_id="T7", hmac_key=KEY if keyed else None,
                           durability=Durability.NONE, rotate_bytes=1200, clock=clock,
                           monotonic_ns=clock.monotonic_ns)
    deal_round(writer, "r1")
    clock.advance(seconds=1)
    writer.append("note", {"text": "Q♦ 1e-05", "x": 1e-05})
    deal_round(writer, "r2")
    writer.close()
    return writer.files()


@settings(max_examples=300, deadline=None)
@given(data=st.data(), keyed=st.booleans())
def test_any_single_byte_change_is_detected(data: st.DataObject, keyed: bool) -> None:
    """Every byte counts: changing any one byte of any file fails verification (with the key
    when the journal is keyed: without it an HMAC byte is not checked)."""
    with tempfile.TemporaryDirectory() as folder:
        files = _build(Path(folder), keyed)
        target = data.draw(st.sampled_from(files))
        content = bytearray(target.read_bytes())
        position = data.draw(st.integers(0, len(content) - 1))
        replacement = data.draw(st.integers(0, 255).filter(lambda b: b != content[position]))
        content[position] = replacement
        target.write_bytes(bytes(content))
        report = verify([folder], hmac_key=KEY if keyed else None)
        assert not report.ok, f"byte {position} of {target.name} -> {replacement} undetected"


def test_clock_helper_moves_by_hand() -> None:
    """The fake clock used above only moves when told (no sleeps anywhere)."""
    clock = FakeClock()
    before = clock()
    clock.advance(days=1)
    assert clock() - before == timedelta(days=1)
