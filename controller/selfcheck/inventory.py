"""Which files make up the installed software, and their SHA-256.

The package's own files are found by walking its import packages (``controller``, ``drivers``,
``firmware_sim``), so a wheel install and an editable checkout are hashed alike. Each locked
dependency is read from its installed distribution's file list (``RECORD``). Left out, because
they change with the install and not with the software: compiled ``__pycache__``, the
installer's own notes (``INSTALLER``, ``REQUESTED``, ``direct_url.json``, ``RECORD``, whose
hashes are those of the files listed here anyway) and files outside ``site-packages`` (console
scripts, whose first line names the venv's interpreter path).
"""

from __future__ import annotations

import hashlib
import importlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from controller.selfcheck.errors import SelfCheckError

OWN_DISTRIBUTION = "tablectl"
OWN_PACKAGES = ("controller", "drivers", "firmware_sim")
_INSTALL_NOTES = frozenset({"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"})
_CHUNK = 1 << 20


def _normal(name: str) -> str:
    """PEP 503 normal form, so ``PyYAML`` in a lock and ``pyyaml`` installed are one name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def software_digest(files: Mapping[str, str]) -> str:
    """SHA-256 over every ``name NUL sha256 LF`` in name order: one 256-bit value that changes
    when any file is added, removed or altered."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(f"{name}\0{files[name]}\n".encode())
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Inventory:
    distributions: Mapping[str, str]
    """Distribution (normal name) -> installed version."""
    files: Mapping[str, str]
    """``distribution/path`` -> SHA-256 hex."""

    @property
    def digest(self) -> str:
        return software_digest(self.files)


def _own_files() -> dict[str, Path]:
    files: dict[str, Path] = {}
    for name in OWN_PACKAGES:
        package = importlib.import_module(name)
        root = Path(package.__file__ or "").resolve().parent
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                files[f"{OWN_DISTRIBUTION}/{name}/{path.relative_to(root).as_posix()}"] = path
    return files


def _distribution_files(name: str) -> tuple[str, dict[str, Path]]:
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise SelfCheckError(f"dependency {name!r} is not installed") from None
    files: dict[str, Path] = {}
    top_dirs: set[str] = set()
    for entry in dist.files or ():
        parts = entry.parts
        if parts[:1] == ("..",) or "__pycache__" in parts or entry.suffix == ".pyc" \
                or (parts[0].endswith(".dist-info") and entry.name in _INSTALL_NOTES):
            continue
        files[f"{_normal(name)}/{entry.as_posix()}"] = Path(str(dist.locate_file(entry)))
        if len(parts) > 1 and not parts[0].endswith((".dist-info", ".data")):
            top_dirs.add(parts[0])
    # A file planted in a dependency's package directory is not in its RECORD: walk them too.
    site = Path(str(dist.locate_file("")))
    for top in sorted(top_dirs):
        for path in (site / top).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                files.setdefault(f"{_normal(name)}/{path.relative_to(site).as_posix()}", path)
    return dist.version, files


def locked_names(lock_file: Path) -> list[str]:
    """The distributions a pip lock file pins (``name==version`` lines, hashes after them):
    the locked dependencies the manifest covers."""
    try:
        text = lock_file.read_text(encoding="utf-8")
    except OSError as error:
        raise SelfCheckError(f"lock file {lock_file}: {error.strerror or error}") from error
    names = [_normal(match[1]) for match in re.finditer(r"(?m)^([A-Za-z0-9][A-Za-z0-9._-]*)==",
                                                         text)]
    if not names:
        raise SelfCheckError(f"lock file {lock_file}: no name==version lines")
    return sorted(set(names) - {OWN_DISTRIBUTION})


def take_inventory(dependencies: Iterable[str] = ()) -> Inventory:
    """Hash the package's files and those of the distributions named in ``dependencies``."""
    names = sorted({_normal(n) for n in dependencies} - {OWN_DISTRIBUTION})
    versions = {OWN_DISTRIBUTION: metadata.version(OWN_DISTRIBUTION)}
    paths = _own_files()
    for name in names:
        versions[name], files = _distribution_files(name)
        paths.update(files)
    hashed = {}
    for key, path in paths.items():
        try:
            hashed[key] = sha256_file(path)
        except OSError as error:
            hashed[key] = f"unreadable: {error.strerror or error}"
    return Inventory(versions, hashed)
