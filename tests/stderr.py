"""What a command printed on stderr when it refused: the project's rule is one line naming the
problem, never a traceback (STYLE.md, "Bad input"). The tests of every entry point read it
here, so the rule is checked the same way everywhere."""

from __future__ import annotations

import pytest


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The one line the command wrote on stderr (no traceback, nothing else)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]
