"""The software verdict of the running service: checked once at start, journaled with every
session and every round's provenance, and consulted before a round opens.

The verdict belongs to the process (the files do not change under a running interpreter
without a restart, which checks again), so it is held here once rather than threaded through
the journal's recorder; :func:`controller.journal.provenance.software` adds it to each
``session_started`` and ``round_opened`` record.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import structlog

from controller.selfcheck.manifest import SoftwareCheck, Verdict, check

log = structlog.get_logger(__name__)

_lock = threading.Lock()
_current: SoftwareCheck | None = None


def check_and_record(manifest: Path | None, public_key: Path | None, *,
                     required: bool) -> SoftwareCheck:
    """Run the check, remember its verdict for the journal, and log it (an error when the
    config requires verification and it failed)."""
    result = check(manifest, public_key)
    with _lock:
        global _current
        _current = result
    fields = {"verdict": result.verdict.value, "digest": result.digest,
              "problem": result.problem, "differences": list(result.differences[:3])}
    if result.verified:
        log.info("software verified", **fields)
    elif result.verdict is Verdict.NOT_CONFIGURED and not required:
        # nothing was asked to be verified ([software] absent): the digest is journaled, and a
        # warning at every start would only teach people to ignore warnings
        log.info("software not verified", **fields)
    elif required:
        log.error("software not verified: no round opens until it is", **fields)
    else:
        log.warning("software not verified", **fields)
    return result


def current() -> SoftwareCheck | None:
    with _lock:
        return _current


def journal_fields() -> dict[str, Any]:
    """What the journal records of the verdict (empty before any check in this process)."""
    result = current()
    if result is None:
        return {}
    return {"selfcheck": {"verdict": result.verdict.value, "verified": result.verified,
                          "digest": result.digest, "manifest_digest": result.manifest_digest,
                          "public_key_sha256": result.public_key_sha256}}


def reset() -> None:
    """Forget the verdict (a test that starts several services in one process)."""
    with _lock:
        global _current
        _current = None
