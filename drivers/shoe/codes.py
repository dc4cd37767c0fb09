"""Messages shared by the shoe dialect decoders (scanner lines, HID keystrokes, Bee-Tek ASCII).

A decoder never raises on bad bytes: it returns :class:`Garbage` saying what it dropped and why,
and the driver turns that into a counted, logged :class:`drivers.events.LinkError`.
"""

from __future__ import annotations

from dataclasses import dataclass

AIM_LENGTH = 3  # "]" + symbology letter + modifier digit, ISO/IEC 15424


@dataclass(frozen=True, slots=True)
class ScannedCode:
    """One barcode as the reader sent it; ``symbology`` is the AIM id (``"]C1"``) if present."""

    text: str
    symbology: str | None = None


@dataclass(frozen=True, slots=True)
class Garbage:
    """Bytes the decoder dropped to resynchronise; ``dropped`` counts bytes (or HID reports)."""

    reason: str
    dropped: int
    raw: bytes = b""


def split_aim(text: str) -> tuple[str | None, str]:
    """Split an optional AIM symbology identifier (``]C1``, ``]E0``, ``]d2``) off a code."""
    if (len(text) > AIM_LENGTH and text[0] == "]" and text[1].isalpha()
            and text[2].isalnum()):
        return text[:AIM_LENGTH], text[AIM_LENGTH:]
    return None, text


def scanned(text: str, *, aim: bool) -> ScannedCode | None:
    """The code in ``text`` as a scanner sent it: surrounding whitespace stripped (scanners pad
    codes with spaces, or send a space before the terminator), then the AIM id split off when
    ``aim``; None when nothing but whitespace is left."""
    symbology, code = split_aim(text.strip()) if aim else (None, text)
    code = code.strip()
    return ScannedCode(code, symbology) if code else None


def printable(text: str) -> bool:
    """Barcodes we accept are printable ASCII; anything else is line noise."""
    return all(" " <= ch <= "~" for ch in text)
