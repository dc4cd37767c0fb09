"""A bounded set that forgets its oldest members first.

Both ends of an acknowledged event need one: the link remembers the event ids it has handed on
and acknowledged this boot (a resend is a copy, not a second card), and the journal remembers the
origins of the events it holds (a resend after a restart is recognised). Memory stays bounded
on a table that runs for months.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class RecentWindow(Generic[T]):
    """The last ``size`` distinct members added, with set membership."""

    __slots__ = ("size", "_order", "_members")

    def __init__(self, size: int, members: Iterable[T] = ()) -> None:
        if size <= 0:
            raise ValueError(f"a window needs a positive size, got {size}")
        self.size = size
        self._order: deque[T] = deque()
        self._members: set[T] = set()
        for member in members:
            self.add(member)

    def __contains__(self, member: object) -> bool:
        return member in self._members

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[T]:
        """Oldest first."""
        return iter(self._order)

    def add(self, member: T) -> None:
        if member in self._members:
            return
        if len(self._order) == self.size:
            self._members.discard(self._order.popleft())
        self._order.append(member)
        self._members.add(member)

    def discard(self, member: T) -> None:
        if member in self._members:
            self._members.discard(member)
            self._order.remove(member)

    def clear(self) -> None:
        self._order.clear()
        self._members.clear()
