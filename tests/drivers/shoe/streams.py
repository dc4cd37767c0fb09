"""Shared hypothesis strategies and a decode loop for the shoe decoder fuzz tests."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st


def decode_all(decode: Callable[[bytes], tuple[int, object]], data: bytes,
               chunks: list[int] | None = None) -> tuple[list[object], bytes]:
    """Feed ``data`` (whole, or split at ``chunks`` sizes) the way a driver does."""
    pieces: list[bytes] = []
    if chunks:
        pos = 0
        for size in chunks:
            pieces.append(data[pos:pos + size])
            pos += size
        pieces.append(data[pos:])
    else:
        pieces = [data]
    out: list[object] = []
    buf = b""
    for piece in pieces:
        buf += piece
        while buf:
            consumed, message = decode(buf)
            assert 0 <= consumed <= len(buf)
            if consumed == 0:
                break
            buf = buf[consumed:]
            if message is not None:
                out.append(message)
    return out, buf


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    """``base`` with random insertions, deletions and byte flips."""
    data = bytearray(base)
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["insert", "delete", "flip"]))
        pos = draw(st.integers(0, len(data)))
        if op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete" and data:
            del data[pos:pos + draw(st.integers(1, 8))]
        elif data:
            data[min(pos, len(data) - 1)] ^= draw(st.integers(1, 255))
    return bytes(data)


chunk_sizes = st.lists(st.integers(1, 16), max_size=20)
