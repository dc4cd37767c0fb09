"""Tables leased to the consumers of a group (``assign = "lease"``) on one real PostgreSQL, the
beats and the batches driven by hand (no broker): a fair share each, rebalanced when one joins,
and a holder whose lease passed applies nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.feed.config import Assign, load_floor_config
from controller.floor.consumer import Floor
from controller.floor.leases import Leases, fair_share
from controller.service.errors import ConfigError
from testbed.journalgen import rehome
from tests.floor_scale.handfed import GROUP, applied, floor_pair, message


@pytest.fixture(name="lines")
def fixture_lines(journal_3cp: Path) -> list[bytes]:
    return [line.rstrip(b"\n") for line in rehome(journal_3cp, "T1")][:6]


@pytest.fixture(name="pair")
def fixture_pair(postgres: str) -> Iterator[tuple[Floor, Floor]]:
    """Lease consumers a and b of group "floor", one table T1 (never connected: their beats
    and batches are driven here)."""
    yield from floor_pair(postgres, Assign.LEASE)


def test_a_write_after_the_lease_passed_applies_nothing(
        pair: tuple[Floor, Floor], lines: list[bytes]) -> None:
    """a holds T1 and applies seq 1; its lease runs out (a consumer stalled, or SIGSTOPped)
    and b claims T1, knowing records may be missing (taken over). a's late batch with seq 2
    applies nothing (the lease is checked in the apply's transaction); b applies seq 2, and
    a, beating again, holds nothing: b's lease is live."""
    a, b = pair
    assert a.leases is not None and b.leases is not None
    assert a.leases.beat().gained == {"T1"}
    a.handle_batch([message(lines[0])])
    assert applied(a) == [1]
    a.store.query("UPDATE floor_leases SET expires = clock_timestamp() - interval '1 second' "
                  "RETURNING table_id")
    taken = b.leases.beat()
    assert taken.gained == {"T1"} and taken.taken_over == {"T1"}
    a.handle_batch([message(lines[1])])
    assert applied(a) == [1] and a.not_leased == 1
    b.handle_batch([message(lines[1]), message(lines[2])])
    assert applied(b) == [1, 2, 3]
    assert a.leases.beat().lost == {"T1"} and a.leases.held == frozenset()
    assert b.store.query("SELECT kind FROM problems") == []


def test_each_consumer_takes_a_fair_share_and_a_joiner_gets_one(postgres: str) -> None:
    """Six tables: the first consumer holds all six; a second joining gets three once the
    first, over its share, released them (each at its next beat); a third gets two the same
    way. The leases never overlap and every table has a holder."""
    tables = [f"T{i}" for i in range(6)]
    leases: list[Leases] = []
    try:
        for name in "abc":
            leases.append(Leases(postgres, GROUP, name, tables))
            # the joiner is counted, the others release past their share, the joiner claims
            for each in [leases[-1], *leases[:-1], leases[-1]]:
                each.beat()
            held = [set(lease.held) for lease in leases]
            share = fair_share(len(tables), len(leases))
            assert [len(h) for h in held] == [share] * len(leases), held
            assert set().union(*held) == set(tables)
            assert sum(map(len, held)) == len(tables)
        rows = leases[0].store.query(
            "SELECT consumer, COUNT(*) FROM floor_leases WHERE expires > clock_timestamp() "
            "GROUP BY consumer ORDER BY consumer")
        assert rows == [("a", 2), ("b", 2), ("c", 2)]
    finally:
        for lease in leases:
            lease.close()


def test_a_clean_stop_frees_its_tables_at_once(postgres: str) -> None:
    """A consumer stopping cleanly releases its leases and leaves the live count: the other
    claims them at its next beat, not a lease later."""
    first, second = Leases(postgres, GROUP, "a", ["T1", "T2"]), Leases(postgres, GROUP, "b", [])
    try:
        first.beat()
        second.beat()
        first.beat()
        second.beat()
        assert len(first.held) == len(second.held) == 1
        first.release_all()
        change = second.beat()
        assert second.held == {"T1", "T2"} and change.taken_over == change.gained
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("text, problem", [
    ('assign = "lease"\n', "set group too"),
    ('group = "g"\nassign = "hash"\n', "unknown assign 'hash'; use one of shared, lease"),
])
def test_a_bad_assign_is_refused_by_name(tmp_path: Path, text: str, problem: str) -> None:
    """``assign`` divides a group's tables: without ``group``, or with an unknown value, it is
    a config error naming the key and the problem."""
    path = tmp_path / "floor.toml"
    path.write_text('[floor]\nbroker = "mqtt://127.0.0.1:1883"\nsite = "s"\n'
                    f'database = "postgresql://floor@db/floor"\n{text}')
    with pytest.raises(ConfigError) as raised:
        load_floor_config(path)
    assert "assign" in str(raised.value) and problem in str(raised.value)


def test_fair_share_gives_every_table_a_holder() -> None:
    """The shares add up to at least the tables, and differ by at most one table."""
    for tables in range(25):
        for consumers in range(1, 6):
            share = fair_share(tables, consumers)
            assert share * consumers >= tables and (share - 1) * consumers < tables
