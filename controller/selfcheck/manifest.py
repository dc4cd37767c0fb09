"""The release manifest: every file's SHA-256 and the software digest, signed with Ed25519.

The manifest is canonical JSON (sorted keys), so building it twice from one install gives the
same bytes. The signature is the raw 64-byte Ed25519 signature of those bytes in
``MANIFEST.sig``, the form ``openssl pkeyutl -sign -rawin`` writes and ``-verify`` reads, so a
regulator can check a manifest without our code. Keys are PEM files (``openssl genpkey
-algorithm ed25519``). The signature is checked before the manifest is read: a manifest whose
signature fails says nothing about the software.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )
# cryptography is imported where a key is used, not here: the service imports this module at
# every start, and cryptography's bindings cost ~7 MB of resident memory (issue 27: the Pi's
# service under 40 MB) that a table with no [software] manifest configured never needs.

from controller.selfcheck.errors import SelfCheckError
from controller.selfcheck.inventory import OWN_DISTRIBUTION, Inventory, take_inventory

MANIFEST_FORMAT = "tablectl-release-manifest/1"
SIGNATURE_SUFFIX = ".sig"
MAX_LISTED = 20
"""Differences named in a result; the rest are counted."""


class Verdict(str, Enum):
    VERIFIED = "verified"
    """Signature valid and every installed file as the manifest lists it."""
    MISMATCH = "mismatch"
    """Signature valid, but a file is changed, missing or not in the manifest."""
    BAD_SIGNATURE = "bad_signature"
    """The manifest is not signed by the configured key (or was changed after signing)."""
    UNREADABLE = "unreadable"
    """The manifest, its signature or the key cannot be read or parsed."""
    NOT_CONFIGURED = "not_configured"
    """No manifest or public key configured: the digest is reported, nothing verified."""


@dataclass(frozen=True, slots=True)
class SoftwareCheck:
    """The installed software's digest and what checking it against the signed manifest found
    (named apart from the journal's background ``CheckResult``: one name, one class)."""

    verdict: Verdict
    digest: str
    """SHA-256 software digest of the installed files (:func:`software_digest`)."""
    files: int
    version: str
    manifest_digest: str | None = None
    differences: tuple[str, ...] = ()
    more_differences: int = 0
    problem: str | None = None
    manifest: str | None = None
    public_key: str | None = None
    public_key_sha256: str | None = None
    covers: tuple[str, ...] = ()
    """The distributions whose files were hashed: without a manifest only tablectl's own (there
    is no list of dependencies to cover); with one, every distribution the manifest names
    (tablectl and its lock's). So a plain ``selfcheck`` and the manifest count and digest
    different sets of files, and say which."""

    @property
    def verified(self) -> bool:
        return self.verdict is Verdict.VERIFIED

    def summary(self) -> str:
        """One line for the log, the journal and ``selfcheck``'s first output line."""
        head = {Verdict.VERIFIED: "VERIFIED", Verdict.MISMATCH: "MISMATCH",
                Verdict.BAD_SIGNATURE: "BAD SIGNATURE", Verdict.UNREADABLE: "UNREADABLE",
                Verdict.NOT_CONFIGURED: "NOT VERIFIED"}[self.verdict]
        text = f"{head}: tablectl {self.version}, {self.files} file(s)"
        if self.covers:
            text += f" of {_covered(self.covers)}"
        text += f", sha256 {self.digest}"
        if self.problem:
            text += f"; {self.problem}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "verified": self.verified,
                "digest": self.digest, "files": self.files, "version": self.version,
                "manifest": self.manifest, "manifest_digest": self.manifest_digest,
                "public_key": self.public_key, "public_key_sha256": self.public_key_sha256,
                "covers": list(self.covers), "differences": list(self.differences),
                "more_differences": self.more_differences, "problem": self.problem}


def build_manifest(inventory: Inventory) -> bytes:
    """The canonical manifest bytes of ``inventory``."""
    document = {"format": MANIFEST_FORMAT, "version": inventory.distributions[OWN_DISTRIBUTION],
                "distributions": dict(inventory.distributions), "files": dict(inventory.files),
                "digest": inventory.digest}
    return (json.dumps(document, sort_keys=True, indent=1) + "\n").encode("utf-8")


def write_release(out: Path, manifest: bytes, signature: bytes | None) -> None:
    """Write the manifest to ``out`` (and the signature to ``out.sig``) whole or not at all.

    Each goes first to a temporary file in its target's directory, fsync'ed; only when both are
    on the disk are they renamed over the targets and the directory fsync'ed. A full disk (or
    any failure) removes the temporaries and leaves an earlier manifest and signature as they
    were: never a 0-byte or half-written manifest, never a new manifest beside an old
    signature."""
    targets = [(out, manifest)]
    if signature is not None:
        targets.append((Path(f"{out}{SIGNATURE_SUFFIX}"), signature))
    written: list[tuple[Path, Path]] = []
    try:
        for target, data in targets:
            try:
                written.append((_write_temporary(target, data), target))
            except OSError as error:
                raise SelfCheckError(f"cannot write {target}: {error.strerror or error} "
                                     f"(nothing replaced: any earlier manifest is as it "
                                     f"was)") from error
        for temporary, target in written:
            try:
                os.replace(temporary, target)
            except OSError as error:
                raise SelfCheckError(f"cannot write {target}: {error.strerror or error}") \
                    from error
    finally:
        for temporary, _target in written:
            try:
                temporary.unlink(missing_ok=True)  # gone once renamed
            except OSError:
                pass  # the first error is the one to tell
    try:
        _sync_directory(out.parent)
    except OSError as error:
        raise SelfCheckError(f"cannot write {out}: syncing its directory: "
                             f"{error.strerror or error}") from error


def _write_temporary(target: Path, data: bytes) -> Path:
    """``data`` in a new file beside ``target``, fsync'ed; removed again if that fails."""
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass  # the write's error is the one to tell
        raise
    os.close(fd)
    return temporary


def _sync_directory(directory: Path) -> None:
    """The renames themselves on the disk."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise SelfCheckError(f"{what} {path}: {error.strerror or error}") from error


def load_private_key(path: Path) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(_read(path, "signing key"), password=None)
    except (ValueError, TypeError) as error:
        raise SelfCheckError(f"signing key {path}: not an unencrypted PEM private key "
                             f"({error})") from error
    if not isinstance(key, Ed25519PrivateKey):
        raise SelfCheckError(f"signing key {path}: not an Ed25519 key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(_read(path, "public key"))
    except (ValueError, TypeError) as error:
        raise SelfCheckError(f"public key {path}: not a PEM public key ({error})") from error
    if not isinstance(key, Ed25519PublicKey):
        raise SelfCheckError(f"public key {path}: not an Ed25519 key")
    return key


def sign_manifest(manifest: bytes, private_key: Path) -> bytes:
    """The raw 64-byte Ed25519 signature of ``manifest``."""
    return load_private_key(private_key).sign(manifest)


def _compare(listed: Mapping[str, str], installed: Mapping[str, str]) -> list[str]:
    differences = []
    for name in sorted(set(listed) | set(installed)):
        if name not in installed:
            differences.append(f"missing {name}")
        elif name not in listed:
            differences.append(f"not in the manifest {name}")
        elif listed[name] != installed[name]:
            differences.append(f"changed {name}")
    return differences


def _parse(manifest: bytes, path: Path) -> dict[str, Any]:
    try:
        document = json.loads(manifest)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SelfCheckError(f"manifest {path}: not JSON ({error})") from error
    if not isinstance(document, dict) or document.get("format") != MANIFEST_FORMAT or \
            not isinstance(document.get("files"), dict) or \
            not isinstance(document.get("distributions"), dict):
        raise SelfCheckError(f"manifest {path}: not a {MANIFEST_FORMAT} document")
    return document


def check(manifest_path: Path | None, public_key_path: Path | None) -> SoftwareCheck:
    """Verify the installed software against a signed manifest. Never raises for a file that
    cannot be used: that is the ``unreadable`` verdict, with the problem in one line."""
    if manifest_path is None or public_key_path is None:
        inventory = take_inventory()
        return SoftwareCheck(Verdict.NOT_CONFIGURED, inventory.digest, len(inventory.files),
                             inventory.distributions[OWN_DISTRIBUTION],
                             problem="no manifest and public key configured (only tablectl's own "
                                     "files are hashed; a manifest built with --build-manifest "
                                     "--lock also covers every locked dependency, so its file "
                                     "count and digest differ from these)",
                             covers=tuple(inventory.distributions))
    from cryptography.exceptions import InvalidSignature

    where = {"manifest": str(manifest_path), "public_key": str(public_key_path)}
    try:
        key = load_public_key(public_key_path)
        manifest = _read(manifest_path, "manifest")
        signature_path = Path(f"{manifest_path}{SIGNATURE_SUFFIX}")
        signature = _read(signature_path, "signature")
        key_id = _key_id(key)
        try:
            key.verify(signature, manifest)
        except InvalidSignature:
            inventory = take_inventory()
            return SoftwareCheck(Verdict.BAD_SIGNATURE, inventory.digest, len(inventory.files),
                                 inventory.distributions[OWN_DISTRIBUTION],
                                 problem=f"{signature_path} is not a signature of {manifest_path} "
                                         f"by the key {public_key_path}",
                                 public_key_sha256=key_id, **where)
        document = _parse(manifest, manifest_path)
        inventory = take_inventory(document["distributions"])
    except SelfCheckError as error:
        inventory = take_inventory()
        return SoftwareCheck(Verdict.UNREADABLE, inventory.digest, len(inventory.files),
                             inventory.distributions[OWN_DISTRIBUTION], problem=str(error),
                             **where)
    differences = _compare(document["files"], inventory.files)
    verdict = Verdict.MISMATCH if differences else Verdict.VERIFIED
    problem = f"{len(differences)} difference(s) from the manifest" if differences else None
    return SoftwareCheck(verdict, inventory.digest, len(inventory.files),
                         inventory.distributions[OWN_DISTRIBUTION],
                         manifest_digest=str(document.get("digest")),
                         differences=tuple(differences[:MAX_LISTED]),
                         more_differences=max(len(differences) - MAX_LISTED, 0), problem=problem,
                         public_key_sha256=key_id, covers=tuple(inventory.distributions),
                         **where)


def _covered(names: tuple[str, ...]) -> str:
    """``tablectl only`` or ``tablectl and 9 locked distribution(s)``."""
    others = len(names) - 1
    return f"{names[0]} only" if not others else \
        f"{names[0]} and {others} locked distribution(s)"


def _key_id(key: Ed25519PublicKey) -> str:
    """SHA-256 of the raw public key: names the key in the journal without the key file."""
    from cryptography.hazmat.primitives import serialization

    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()
