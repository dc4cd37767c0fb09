"""A real small filesystem for the tests of a full or read-only journal disk.

A full disk is a condition of the kernel's, not of our code: a 256 KiB tmpfs gives the journal
a real ENOSPC (and, remounted read-only, a real EROFS) without patching any I/O call.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PAGE = resource.getpagesize()


@contextmanager
def small_disk(where: Path, size: str = "256k") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` (root only; skipped otherwise), unmounted
    afterwards."""
    where.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount(8) on this machine: a full filesystem needs a small tmpfs")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def remount(where: Path, mode: str) -> None:
    """``mode`` ``ro`` or ``rw``: what an SD card going read-only after errors looks like."""
    subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], check=True,
                   capture_output=True)


def fill(disk: Path) -> Path:
    """Take every free page of the filesystem."""
    path = disk / "filler"
    with path.open("wb", buffering=0) as handle:
        block = bytes(PAGE)
        try:
            while handle.write(block):
                pass
        except OSError:
            pass
    return path
