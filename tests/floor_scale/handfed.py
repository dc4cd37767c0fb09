"""Two consumers of one group on a real PostgreSQL, never connected to a broker: the group-order
and lease tests feed their batches (and beat their leases) by hand, for table T1."""

from __future__ import annotations

from collections.abc import Iterator

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from controller.feed.config import Assign, Broker, FloorConfig
from controller.floor.consumer import Floor, Message
from tests.controller.floor.conftest import SIGN_KEY, sign_line

TOPIC = "tablectl/site1/T1/events"
GROUP = "floor"


def floor_pair(postgres: str, assign: Assign) -> Iterator[tuple[Floor, Floor]]:
    """The body of a ``pair`` fixture: consumers a and b (named ``test-a``, ``test-b``) of
    group :data:`GROUP` on one table T1, closed after the test."""
    broker = Broker("127.0.0.1", 1883, False, None, None, None, None, None, 15)
    public = SIGN_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    floors = tuple(Floor(FloorConfig("<test>", "site1", postgres, broker, f"test-{name}",
                                     {"T1": public}, group=GROUP, assign=assign))
                   for name in "ab")
    yield floors  # type: ignore[misc]
    for floor in floors:
        if assign is Assign.LEASE:
            assert floor.leases is not None
            floor.leases.close()
        floor.store.close()
        floor.client._reset_sockets()  # never started: see controller.feed.mqtt.stop


def message(line: bytes) -> Message:
    """T1's record ``line`` as the broker would deliver it, signed."""
    return Message(TOPIC, line, None, 0, signature=sign_line(line))


def applied(floor: Floor) -> list[int]:
    """T1's applied seqs, in the order they were applied."""
    return [seq for (seq,) in floor.store.query(
        "SELECT seq FROM records WHERE table_id = 'T1' ORDER BY applied_ns, seq")]
