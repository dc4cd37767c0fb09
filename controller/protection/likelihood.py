"""The exact likelihood of the dealt cards under a one-pass k-shelf shuffle (Diaconis, Fulman
and Holmes 2013), for the cards whose place in the shuffler's input is known.

The machine takes the fed cards one by one; each goes on one of ``k`` shelves at random, on top
of it or under it at random (``2k`` equally likely choices per card); the shelves are then
stacked in order. So the output is ``k`` consecutive blocks, one per shelf (some empty), each
"V-shaped" in input order: the cards put on top come out latest first (falling input places),
then the cards put under come out earliest first (rising). A V-shaped block of ``b`` cards arises
from exactly two choices of sides (its lowest card on top or under), so a whole order ``w`` of
``n`` cards has probability ``(2k)^-n`` times the sum, over the ways of cutting ``w`` into ``k``
V-shaped blocks, of ``2^(non-empty blocks)`` (DFH's valley formula counts the same cuts).

A table sees only the first ``m`` cards dealt, so :func:`prefix_ratio` sums over everything the
unseen cards may do. The first unseen card lies on some shelf ``t``: shelves ``1..t-1`` hold
a leading part of the prefix, cut into V-shaped blocks; shelf ``t`` starts with the rest of the
prefix (the *tail*) and holds at least one unseen card, each of which must come out after the
tail (which sides allow that depends only on the tail's last card and on whether the tail may
be all on top); every other unseen card lies on a later shelf. Everything is a product over the
unseen cards of a per-card weight, so the sum is exact and takes O(m^2 + k m) steps.

The ratio is against a fair shuffle, under which the prefix is a uniformly random ordered
choice of ``m`` of the ``c`` fed cards: probability ``(c - m)! / c!``. Its expectation under a
fair shuffle is exactly 1 (the likelihood sums to 1 over all prefixes, tested), which is what
bounds the false alarms of the sequential test on it (:class:`~.monitors.OnePassLikelihood`).
Pure Python: it runs on the Pi.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from functools import cache, lru_cache
from typing import Any

JOINED_CACHE_SIZE = 2048
"""How many :func:`_joined` weights are remembered, least recently used out first: a
warm-up of 2,000 RWS-NC3P decks asks 1,668 different ones (about 280 KiB); the bound keeps a
long shift's from growing past about 350 KiB."""


def _v_ends(seq: Sequence[int]) -> list[list[int]]:
    """``ends[j]``: every ``i > j`` such that ``seq[j:i]`` is V-shaped (falling, then rising)."""
    m = len(seq)
    ends: list[list[int]] = []
    for j in range(m):
        found = [j + 1]
        rising = False
        for i in range(j + 1, m):
            if seq[i] > seq[i - 1]:
                rising = True
            elif rising:
                break
            found.append(i + 1)
        ends.append(found)
    return ends


@cache
def _binomial(n: int, r: int) -> int:
    return math.comb(n, r) if 0 <= r <= n else 0


def prefix_ratio(seq: Sequence[int], fed: int, shelves: int) -> float:
    """P(the first ``len(seq)`` cards dealt are ``seq``) under a one-pass ``shelves``-shelf
    shuffle of ``fed`` cards, divided by that probability under a fair shuffle. ``seq`` holds
    the dealt cards' places in the input (distinct, ``0 <= place < fed``), in dealing order."""
    m, k = len(seq), shelves
    if len(set(seq)) != m or any(not 0 <= place < fed for place in seq):
        raise ValueError(f"not an ordered choice of distinct places below {fed}: {seq}")
    if m == 0:
        return 1.0
    unseen = fed - m
    # splits[r][i]: ways (weighted 2 per block, its lowest card's side) to cut seq[:i] into r
    # non-empty V-shaped blocks (at most k: a block is a shelf)
    ends = _v_ends(seq)
    most = min(m, k)
    splits = [[0] * (m + 1) for _ in range(most + 1)]
    splits[0][0] = 1
    for r in range(1, most + 1):
        previous, row = splits[r - 1], splits[r]
        for j in range(r - 1, m):
            if previous[j]:
                weight = 2 * previous[j]
                for i in ends[j]:
                    row[i] += weight
    if unseen == 0:
        total = sum(splits[r][m] * _binomial(k, r) for r in range(most + 1))
        return total * _scale(m, fed, k)
    total = 0.0
    # the tail seq[i:] on the first unseen card's shelf: empty, or V-shaped
    tails = [m] + [j for j in range(m) if m in ends[j]]
    for i in tails:
        tail = seq[i:]
        last = tail[-1] if tail else -1
        above = fed - 1 - last - sum(1 for place in seq if place > last)
        below = unseen - above
        falling = all(a > b for a, b in zip(tail, tail[1:]))
        # ways(t) = sum_r lead[r] C(t-1, r), the cuts of seq[:i] over shelves 1..t-1: by
        # forward differences, diffs[j] = sum_r lead[r+j] C(t-1, r), diffs[j] += diffs[j+1]
        for t, ways in _cut_ways(splits, i, most, k):
            later = (k - t) / k
            none = later ** unseen
            if not tail:
                weight = (later + 1 / k) ** unseen - none
            else:
                # the tail's lowest card under (or any card after it under): every unseen card
                # on this shelf goes under and is placed above the tail's last card
                under = (later + 1 / (2 * k)) ** above * later ** below - none
                if falling:
                    # or the whole tail on top: unseen cards below its last card may go on top
                    # or under, those above it only under
                    on_top = ((later + 1 / k) ** below * (later + 1 / (2 * k)) ** above
                              - none)
                    weight = under + on_top
                else:
                    weight = 2 * under
            total += ways * weight
    return total * _scale(m, fed, k)


def _scale(m: int, fed: int, k: int) -> float:
    """``(2k)^-m`` (each dealt card's shelf and side) over the fair ``(fed - m)! / fed!``."""
    scale = 1.0
    for j in range(m):
        scale *= (fed - j) / (2 * k)
    return scale


def log_ratio(seq: Sequence[int], fed: int, shelves: int) -> float:
    """``log prefix_ratio``; ``-inf`` for a prefix the machine cannot deal."""
    ratio = prefix_ratio(seq, fed, shelves)
    return math.log(ratio) if ratio > 0 else -math.inf


def collected_ratio(tokens: Sequence[int | None], collected: int, total: int,
                    shelves: int) -> float:
    """As :func:`prefix_ratio` for a table fed its collected cards on top of the undealt ones:
    ``tokens`` are the dealt cards in order, a collected card as its input place (``0 <= place
    < collected``), an undealt-part card as ``None`` (its place unknown: the undealt part's
    order is taken as uniformly random, which keeps the ratio's fair expectation exactly 1).

    Each shelf deals undealt-part cards on top (latest fed first), then the collected ones (a
    V), then undealt-part cards put under; the undealt-part cards of one group must come out in
    their (unknown) place order, probability ``1/n!`` for ``n`` of them; a group the prefix
    ends inside couples the unseen cards that join it (``x! / (n + x)!``)."""
    m, k = len(tokens), shelves
    if m == 0:
        return 1.0
    known = [t for t in tokens if t is not None]
    if len(set(known)) != len(known) or any(not 0 <= t < collected for t in known):
        raise ValueError(f"not distinct places below {collected}: {tokens}")
    stub = total - collected
    stub_seen = m - len(known)
    if stub_seen > stub:
        raise ValueError("more undealt-part cards dealt than the undealt part holds")
    unseen_c, unseen_s = collected - len(known), stub - stub_seen
    fact = math.factorial
    # blocks[j]: (end i, weight) for every complete shelf block tokens[j:i]
    blocks: list[list[tuple[int, float]]] = []
    for j in range(m):
        found: list[tuple[int, float]] = []
        a = 0
        while j + a < m and tokens[j + a] is None:
            a += 1
            found.append((j + a, 2.0 ** a / fact(a)))
        start = j + a
        if start < m:
            for end, e in _c_runs(tokens, start):
                found.append((end + e, 2.0 / (fact(a) * fact(e))))
        blocks.append(found)
    most = min(m, k)
    splits = [[0.0] * (m + 1) for _ in range(most + 1)]
    splits[0][0] = 1.0
    for r in range(1, most + 1):
        previous, row = splits[r - 1], splits[r]
        for j in range(m):
            if previous[j]:
                for i, weight in blocks[j]:
                    row[i] += previous[j] * weight
    scale = 1.0
    for j in range(m):
        scale *= (total - j) / (2 * k)
    if unseen_c + unseen_s == 0:
        return sum(splits[r][m] * _binomial(k, r) for r in range(most + 1)) * scale
    total_weight = 0.0
    for i in range(m + 1):
        tail = tokens[i:]
        shapes = _tail_shapes(tail)
        if not shapes:
            continue
        for t, ways in _cut_ways(splits, i, most, k):
            later = (k - t) / k
            total_weight += ways * sum(
                _tail_weight(shape, later, k, unseen_c, unseen_s, tokens, collected)
                for shape in shapes)
    return total_weight * scale


def _c_runs(tokens: Sequence[int | None], start: int) -> list[tuple[int, int]]:
    """From ``start`` (a collected card): every (end of a V-shaped run of collected cards,
    number of undealt-part cards that may follow it in the same block)."""
    out: list[tuple[int, int]] = []
    m = len(tokens)
    rising = False
    i = start
    while i < m and tokens[i] is not None:
        if i > start:
            prev, cur = tokens[i - 1], tokens[i]
            assert prev is not None and cur is not None
            if cur > prev:
                rising = True
            elif rising:
                break
        end = i + 1
        if end < m and tokens[end] is not None:
            out.append((end, 0))
        else:
            s = 0
            out.append((end, 0))
            while end + s < m and tokens[end + s] is None:
                s += 1
                out.append((end, s))
        i += 1
    return out


def _tail_shapes(tail: Sequence[int | None]) -> list[tuple[int, int, tuple[int, ...], int]]:
    """The ways ``tail`` can start a shelf: (undealt-part on top, 0, collected V run,
    undealt-part under) with every split of an all-undealt tail; [] when it cannot."""
    if not tail:
        return [(0, 0, (), 0)]
    a = 0
    while a < len(tail) and tail[a] is None:
        a += 1
    if a == len(tail):
        return [(a - e, 0, (), e) for e in range(a + 1)]
    run: list[int] = []
    i, rising = a, False
    while i < len(tail) and tail[i] is not None:
        cur = tail[i]
        assert cur is not None
        if run and cur > run[-1]:
            rising = True
        elif run and rising:
            return []
        run.append(cur)
        i += 1
    e = len(tail) - i
    if any(t is not None for t in tail[i:]):
        return []
    return [(a, 0, tuple(run), e)]


def _tail_weight(shape: tuple[int, int, tuple[int, ...], int], later: float, k: int,
                 unseen_c: int, unseen_s: int, tokens: Sequence[int | None],
                 collected: int) -> float:
    a, _, run, e = shape
    fact = math.factorial
    half, both = 1 / (2 * k), 1 / k
    none = later ** (unseen_c + unseen_s)
    if not run and e == 0 and a == 0:
        return (later + both) ** (unseen_c + unseen_s) - none
    if e > 0:
        # past the collected groups: unseen collected cards are on later shelves; unseen
        # undealt-part cards here go under, after the e seen (x! / (e + x)!)
        joined = _joined(unseen_s, half, later, e)
        lead = (2.0 if run else 1.0) / fact(a)
        return lead * (joined * later ** unseen_c - none / fact(e))
    if not run:
        # a undealt-part cards on top so far: unseen collected cards any side; unseen
        # undealt-part cards under, or on top after the a seen (x! / (a + x)!)
        joined = _joined(unseen_s, half, later + half, a)
        return joined * (later + both) ** unseen_c - none / fact(a)
    # a on top, then a collected run, nothing under yet
    last = run[-1]
    seen = {t for t in tokens if t is not None}
    above = collected - 1 - last - sum(1 for p in seen if p > last)
    below = unseen_c - above
    stub_under = (later + half) ** unseen_s
    under = (later + half) ** above * later ** below * stub_under - none
    falling = all(x > y for x, y in zip(run, run[1:]))
    if falling:
        on_top = (later + both) ** below * (later + half) ** above * stub_under - none
        return (under + on_top) / fact(a)
    return 2 * under / fact(a)


@lru_cache(maxsize=JOINED_CACHE_SIZE)
def _joined(unseen: int, half: float, rest: float, seen: int) -> float:
    """``sum_x C(unseen, x) half^x rest^(unseen-x) x! / (seen + x)!``: the weight of the
    ``unseen`` undealt-part cards of which ``x`` join a group of ``seen`` (in their place order,
    ``x! / (seen + x)!``). It depends on counts and the shelf only, not on the dealt cards, and
    a one-pass likelihood asks it again for every prefix of every deck: remembered, the
    monitors' warm-up of 2,000 decks after a restart took a fifth of the time, and the table's
    other threads no longer queue behind it for the interpreter (issue 27: rounds at 2 a second
    for the warm-up's 45 s on a 1,000,000-record journal)."""
    fact = math.factorial
    return sum(math.comb(unseen, x) * half ** x * rest ** (unseen - x) * fact(x) / fact(seen + x)
               for x in range(unseen + 1))


def _cut_ways(splits: Any, i: int, most: int, k: int) -> Iterator[tuple[int, Any]]:
    """``(t, ways(t))`` for t = 1..k where ways is not zero: ways(t) = sum_r lead[r] C(t-1, r),
    the cuts of seq[:i] over shelves 1..t-1, by forward differences (diffs[j] = sum_r
    lead[r+j] C(t-1, r), diffs[j] += diffs[j+1] from one t to the next)."""
    diffs = [splits[r][i] for r in range(min(i, most) + 1)]
    for t in range(1, k + 1):
        if t > 1:
            diffs = [a + b for a, b in zip(diffs, diffs[1:])] + diffs[-1:]
        if diffs[0]:
            yield t, diffs[0]
