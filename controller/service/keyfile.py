"""The journal's HMAC key, loaded with least-privilege checks before the service uses it.

The key is what makes a rewritten journal detectable (docs/journal.md): anyone who can read it
can forge records that verify. So the service refuses a key file that group or other can read
(or write), one that is not a regular file, or one owned by another account than the service's
(a key planted by someone else is not our key). ``chmod 0400`` and ``chown tablectl`` fix it;
the error line says exactly that. The hex format itself is checked by
:func:`controller.journal.keys.load_hmac_key`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from controller.journal.errors import JournalKeyError
from controller.journal.keys import load_hmac_key
from controller.service.errors import ServiceError


def load_service_key(path: Path, *, uid: int | None = None) -> bytes:
    """Read the key at ``path`` after checking owner and mode; :class:`ServiceError` says why
    not, naming the config key ``journal.hmac_key_file`` and the fix."""
    where = f"journal.hmac_key_file {path}"
    owner_uid = os.getuid() if uid is None else uid
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ServiceError(f"{where}: not found") from None
    except OSError as error:
        raise ServiceError(f"{where}: {error.strerror or error}") from error
    if not stat.S_ISREG(info.st_mode):
        raise ServiceError(f"{where}: not a regular file")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise ServiceError(f"{where}: mode {mode:04o} lets group or others read or change the "
                           f"key; run chmod 0400 {path}")
    if info.st_uid != owner_uid:
        raise ServiceError(f"{where}: owned by uid {info.st_uid}, not by the service's user "
                           f"(uid {owner_uid}); chown it to that user, mode 0400")
    try:
        return load_hmac_key(path)
    except JournalKeyError as error:
        raise ServiceError(str(error)) from error
