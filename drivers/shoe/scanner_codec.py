"""Decoder for plain serial barcode scanners: one code per line.

Field scanners end a code with CR, LF or CRLF (configurable on the scanner, so we accept all
three), may wrap it in a configured prefix/suffix (often STX/ETX) and may put an AIM symbology
identifier (``]C1`` = Code 128) in front. The decoder is pure and incremental: ``decode(buf)``
returns ``(consumed, message)``; ``(0, None)`` means "need more bytes". A CR is a terminator by
itself, so a CRLF split across two reads yields the code on CR and an empty line that is skipped
silently. Anything that is not a clean code is returned as :class:`Garbage`, never raised.
"""

from __future__ import annotations

from drivers.shoe.codes import Garbage, ScannedCode, printable, split_aim

CR, LF = 0x0D, 0x0A
DEFAULT_MAX_LENGTH = 80
NO_READ_TEXT = "NR"  # the "no read" message scanners send when configured to report misses

Message = ScannedCode | Garbage


class ScannerCodec:
    """Incremental line decoder with optional prefix/suffix and AIM identifier."""

    def __init__(self, *, prefix: bytes = b"", suffix: bytes = b"", aim: bool = True,
                 max_length: int = DEFAULT_MAX_LENGTH) -> None:
        self.prefix = bytes(prefix)
        self.suffix = bytes(suffix)
        self.aim = aim
        self.max_length = max_length + len(self.prefix) + len(self.suffix)

    def decode(self, buf: bytes) -> tuple[int, Message | None]:
        """Consume at most one line (or one run of noise) from the front of ``buf``."""
        end = _terminator(buf)
        if end < 0:
            if len(buf) > self.max_length:
                return len(buf), Garbage("line too long without CR/LF", len(buf), bytes(buf))
            return 0, None
        consumed = end + 1
        if buf[end] == CR and end + 1 < len(buf) and buf[end + 1] == LF:
            consumed += 1
        line = bytes(buf[:end])
        if not line:
            return consumed, None  # the LF of a split CRLF, or a blank line
        return consumed, self._parse(line)

    def _parse(self, line: bytes) -> Message:
        if len(line) > self.max_length:
            return Garbage("line too long", len(line), line)
        if self.prefix:
            if not line.startswith(self.prefix):
                return Garbage("line without the configured prefix", len(line), line)
            line_body = line[len(self.prefix):]
        else:
            line_body = line
        if self.suffix:
            if not line_body.endswith(self.suffix):
                return Garbage("line without the configured suffix", len(line), line)
            line_body = line_body[: len(line_body) - len(self.suffix)]
        try:
            text = line_body.decode("ascii")
        except UnicodeDecodeError:
            return Garbage("non-ASCII bytes in a code", len(line), line)
        if not text or not printable(text):
            return Garbage("empty or non-printable code", len(line), line)
        symbology, text = split_aim(text) if self.aim else (None, text)
        return ScannedCode(text, symbology)

    def encode(self, code: ScannedCode, ending: bytes = b"\r\n") -> bytes:
        """The bytes a scanner configured like this codec sends for ``code`` (simulators)."""
        aim = (code.symbology or "") if self.aim else ""
        return self.prefix + (aim + code.text).encode("ascii") + self.suffix + ending


def _terminator(buf: bytes) -> int:
    cr, lf = buf.find(b"\r"), buf.find(b"\n")
    if cr < 0:
        return lf
    return cr if lf < 0 else min(cr, lf)
