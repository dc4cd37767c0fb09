"""CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR.

Chosen because every integrator's tool (and every MCU vendor's HAL) has it; the check value
``crc16(b"123456789") == 0x29B1`` pins the variant, since several "CCITT" CRCs differ only in
their initial value. Table-driven: one lookup per byte keeps the reader thread cheap.
"""

from __future__ import annotations

CHECK_VALUE = 0x29B1


def _make_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_TABLE = _make_table()


def crc16(data: bytes | bytearray | memoryview, crc: int = 0xFFFF) -> int:
    """Return the CRC-16/CCITT-FALSE of ``data`` (pass ``crc`` to continue a running CRC)."""
    table = _TABLE
    for byte in bytes(data):
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ byte]
    return crc
