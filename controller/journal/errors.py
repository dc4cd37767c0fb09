"""The journal's exception tree.

Every journal error is a :class:`controller.errors.TablectlError`, so the CLI turns it into one
clear line and exit status 2 instead of a traceback. Damage *found by verification* is not an
exception: :func:`controller.journal.verify.verify` returns it in a report, because finding
damage is the verifier's job, not a failure of it.
"""

from __future__ import annotations

from controller.errors import TablectlError


class JournalError(TablectlError):
    """Base of every error the journal raises on purpose."""


class JournalIOError(JournalError, OSError):
    """A journal file or directory that cannot be read, created, written or synced."""


class JournalBehindError(JournalIOError):
    """An input was recorded and acted on, but the outcome records it caused could not be
    written yet: the outcome does not count until they are (``JournaledTable.flush``)."""


class JournalKeyError(JournalError, ValueError):
    """An HMAC key file that is missing, unreadable or not a key (wrong format, too short)."""


class JournalValueError(JournalError, ValueError):
    """A payload value the journal cannot represent deterministically (NaN, an unknown type)."""


class JournalFormatError(JournalError, ValueError):
    """A line that is not a journal record, met where records are read without verifying."""


class MixedJournals(JournalFormatError):
    """Records of two tables, or of two chains, met in one read meant for one journal."""


class JournalFromLaterRelease(JournalError):
    """The journal's last session was written by a later release than the one running (a
    downgrade): its records may say what this release cannot read, so it is not resumed, and
    nothing is appended to it."""


class JournalConfigError(JournalError, ValueError):
    """A writer opened on a journal that belongs elsewhere (another table, another HMAC key)."""


class JournalDamagedError(JournalError):
    """An existing journal whose damage is not a power-cut artefact, so the writer refuses to
    resume it (truncating it would destroy evidence); run ``tablectl journal verify``."""


class JournalClosedError(JournalError):
    """An append to a writer that has been closed."""
