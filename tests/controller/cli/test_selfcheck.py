"""Software authentication (issue 16): ``tablectl selfcheck`` hashes the installed package and
its locked dependencies, checks them against a release manifest, and checks the manifest's
Ed25519 signature against a public key; openssl, which we did not write, agrees with the
signature; the lock file pins exactly the runtime dependencies, with hashes pip enforces."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import replace
from importlib import metadata
from pathlib import Path

import jsonschema
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.cli import main
from controller.selfcheck import build_manifest, take_inventory
from controller.selfcheck.inventory import locked_names

ROOT = Path(__file__).resolve().parents[3]
LOCK = ROOT / "requirements.lock"
WEB_LOCK = ROOT / "requirements-web.lock"
OPENSSL = shutil.which("openssl")


def write_key_pair(directory: Path, name: str = "release") -> tuple[Path, Path]:
    key = Ed25519PrivateKey.generate()
    private, public = directory / f"{name}.pem", directory / f"{name}.pub.pem"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    public.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public


@pytest.fixture(name="release", scope="module")
def fixture_release(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A manifest of this install, built and signed by the CLI, and the key pair."""
    directory = tmp_path_factory.mktemp("release")
    private, public = write_key_pair(directory)
    manifest = directory / "manifest.json"
    assert main(["selfcheck", "--build-manifest", str(manifest), "--lock", str(LOCK),
                 "--sign-key", str(private)]) == 0
    return {"dir": directory, "manifest": manifest, "private": private, "public": public}


def selfcheck(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    code = main(["selfcheck", *argv, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else {}, captured.err


def test_the_installed_software_verifies(release: dict[str, Path],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The manifest of this install verifies: exit 0, a 256-bit digest (>= 128 bits asked by
    N.J.A.C. 13:69O-1.5), the manifest's own digest, every file of the package and of each
    locked dependency; the JSON matches the published schema."""
    code, out, _ = selfcheck(capsys, "--manifest", str(release["manifest"]),
                             "--public-key", str(release["public"]))
    schema = json.loads((ROOT / "schemas" / "selfcheck.schema.json").read_text())
    jsonschema.validate(out, schema)
    assert (code, out["verdict"], out["differences"]) == (0, "verified", [])
    assert re.fullmatch(r"[0-9a-f]{64}", out["digest"]) and out["manifest_digest"] == out["digest"]
    listed = json.loads(release["manifest"].read_bytes())
    assert set(listed["distributions"]) == {"tablectl", *locked_names(LOCK)}
    assert any(name.startswith("tablectl/controller/settlement/") for name in listed["files"])
    assert any(name.startswith("cryptography/") for name in listed["files"])
    assert sorted(out["covers"]) == sorted(listed["distributions"])


@pytest.mark.skipif(OPENSSL is None, reason="openssl not installed")
def test_openssl_verifies_the_signature(release: dict[str, Path]) -> None:
    """The signature is a plain Ed25519 signature of the manifest bytes: openssl checks it."""
    result = subprocess.run(
        [str(OPENSSL), "pkeyutl", "-verify", "-pubin", "-inkey", str(release["public"]),
         "-rawin", "-in", str(release["manifest"]), "-sigfile",
         f"{release['manifest']}.sig"], capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 0 and "Signature Verified Successfully" in result.stdout


def _signed(directory: Path, manifest: bytes, private: Path, name: str) -> Path:
    path = directory / name
    path.write_bytes(manifest)
    key = serialization.load_pem_private_key(private.read_bytes(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    Path(f"{path}.sig").write_bytes(key.sign(manifest))
    return path


def test_a_manifest_changed_after_signing_fails(release: dict[str, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """One hash edited in the signed manifest: the signature no longer holds, exit 1."""
    text = release["manifest"].read_text()
    name = next(iter(json.loads(text)["files"]))
    edited = tmp_path / "manifest.json"
    edited.write_text(re.sub(rf'("{re.escape(name)}": ")[0-9a-f]{{64}}"', r'\g<1>' + "0" * 64
                             + '"', text, count=1))
    shutil.copy(f"{release['manifest']}.sig", f"{edited}.sig")
    assert edited.read_text() != text
    code, out, _ = selfcheck(capsys, "--manifest", str(edited),
                             "--public-key", str(release["public"]))
    assert (code, out["verdict"]) == (1, "bad_signature")


def test_a_manifest_signed_by_another_key_fails(release: dict[str, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A correct manifest signed by a key other than the configured one is refused."""
    other, _ = write_key_pair(tmp_path, "other")
    path = _signed(tmp_path, release["manifest"].read_bytes(), other, "manifest.json")
    code, out, _ = selfcheck(capsys, "--manifest", str(path),
                             "--public-key", str(release["public"]))
    assert (code, out["verdict"]) == (1, "bad_signature")


def test_a_changed_missing_or_extra_file_is_named(release: dict[str, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A validly signed manifest that differs from the install names each difference: a file
    whose hash differs, one the manifest lacks, one it lists that is not installed."""
    inventory = take_inventory(locked_names(LOCK))
    files = dict(inventory.files)
    changed = "tablectl/controller/settlement/engine.py"
    unlisted = "tablectl/controller/settlement/payout.py"
    files[changed] = "f" * 64
    del files[unlisted]
    files["tablectl/controller/backdoor.py"] = "0" * 64
    manifest = build_manifest(replace(inventory, files=files))
    path = _signed(tmp_path, manifest, release["private"], "manifest.json")
    code, out, _ = selfcheck(capsys, "--manifest", str(path),
                             "--public-key", str(release["public"]))
    assert (code, out["verdict"]) == (1, "mismatch")
    assert out["differences"] == ["missing tablectl/controller/backdoor.py",
                                  f"changed {changed}", f"not in the manifest {unlisted}"]


def test_nothing_configured_is_not_verified(capsys: pytest.CaptureFixture[str]) -> None:
    """Without a manifest and key the digest is printed but nothing is verified: exit 1."""
    assert main(["selfcheck"]) == 1
    assert capsys.readouterr().out.startswith("NOT VERIFIED: tablectl ")


def test_plain_selfcheck_says_why_its_count_differs_from_the_manifests(
        release: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27: plain ``selfcheck`` showed 232 files and one digest, the manifest it had just
    built 535 files and another, with no word on why. It hashes tablectl's own files only (no
    manifest: no list of dependencies), and now says so, naming what each covers."""
    assert main(["selfcheck"]) == 1
    line = capsys.readouterr().out
    assert "file(s) of tablectl only" in line
    assert "also covers every locked dependency, so its file count and digest differ" in line
    code, out, _ = selfcheck(capsys)
    assert (code, out["covers"]) == (1, ["tablectl"])
    listed = json.loads(release["manifest"].read_bytes())
    assert out["files"] < len(listed["files"])


def test_an_unreadable_key_is_one_line_exit_2(release: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A public key file that is not a key: one line naming it on stderr, exit 2."""
    bad = tmp_path / "key.pem"
    bad.write_text("not a key\n")
    code, out, err = selfcheck(capsys, "--manifest", str(release["manifest"]),
                               "--public-key", str(bad))
    assert (code, out["verdict"]) == (2, "unreadable")
    assert err.startswith(f"tablectl selfcheck: public key {bad}: not a PEM public key")
    assert len(err.splitlines()) == 1


def _runtime_closure(name: str, extra: str = "") -> set[str]:
    """The distributions ``name`` (with ``extra`` on itself) needs at run time."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = [(name, extra)]
    done: set[tuple[str, str]] = set()
    while todo:
        current, wanted = todo.pop()
        if (current, wanted) in done:
            continue
        done.add((current, wanted))
        for text in metadata.requires(current) or []:
            requirement = Requirement(text)
            if requirement.marker is not None and \
                    not requirement.marker.evaluate({"extra": wanted}):
                continue
            dep = re.sub(r"[-_.]+", "-", requirement.name).lower()
            seen.add(dep)
            # a requirement's own extras (psycopg[binary]) are followed too
            todo += [(dep, "")] + [(dep, e) for e in sorted(requirement.extras)]
    return seen


def test_the_lock_pins_exactly_the_runtime_dependencies() -> None:
    """requirements.lock names the closure of tablectl's runtime requirements (markers
    evaluated for this Python), each pinned to the installed version with hashes."""
    text = LOCK.read_text()
    pins = dict(re.findall(r"(?m)^([a-z0-9-]+)==(\S+) \\", text))
    assert set(pins) == _runtime_closure("tablectl")
    for name, version in pins.items():
        assert metadata.version(name) == version, name
    assert text.count("--hash=sha256:") >= len(pins)


def test_the_web_lock_pins_what_the_web_extra_adds() -> None:
    """requirements-web.lock names what ``tablectl[web]`` needs beyond requirements.lock (the
    Pi's web process installs both, hash-checked), each at the installed version, with an
    x86_64 and an aarch64 hash for every compiled wheel."""
    text = WEB_LOCK.read_text()
    pins = dict(re.findall(r"(?m)^([a-z0-9-]+)==(\S+) \\", text))
    assert set(pins) == _runtime_closure("tablectl", "web") - _runtime_closure("tablectl")
    for name, version in pins.items():
        assert metadata.version(name) == version, name
    for compiled in ("argon2-cffi-bindings", "markupsafe"):
        block = text.split(f"{compiled}==", 1)[1].split("# via", 1)[0]
        assert block.count("--hash=sha256:") == 2, compiled


EXTRA_LOCKS = {
    # extra -> its lock and the distributions of it that are compiled (a wheel per platform)
    "web": (WEB_LOCK, ("argon2-cffi-bindings", "markupsafe")),
    "floor": (ROOT / "requirements-floor.lock", ("psycopg-binary",)),
    "analysis": (ROOT / "requirements-analysis.lock",
                 ("contourpy", "fonttools", "kiwisolver", "matplotlib", "numpy", "pillow",
                  "scipy")),
}


def test_every_runtime_extra_has_its_lock() -> None:
    """Issue 27: the lock covered the runtime and web extras but not floor or analysis. Every
    extra a machine of the floor runs has a lock; ``test`` and ``bench`` are the developer's
    (pytest, pokerkit), never installed on a Pi."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert set(extras) - {"test", "bench"} == set(EXTRA_LOCKS)


@pytest.mark.parametrize("extra", ["floor", "analysis"])
def test_an_extras_lock_pins_what_the_extra_adds(extra: str) -> None:
    """Like the web lock: what ``tablectl[EXTRA]`` needs beyond requirements.lock, each at the
    installed version, an x86_64 and an aarch64 hash for every compiled wheel."""
    lock, compiled = EXTRA_LOCKS[extra]
    text = lock.read_text()
    pins = dict(re.findall(r"(?m)^([a-z0-9-]+)==(\S+) \\", text))
    assert set(pins) == _runtime_closure("tablectl", extra) - _runtime_closure("tablectl")
    for name, version in pins.items():
        assert metadata.version(name) == version, name
    for name in compiled:
        block = text.split(f"\n{name}==", 1)[1].split("# via", 1)[0]
        assert block.count("--hash=sha256:") == 2, name
    assert f"-r requirements.lock -r {lock.name}" in text


def test_the_lock_installs_with_require_hashes(tmp_path: Path) -> None:
    """pip accepts the lock with --require-hashes: every wheel it picks here has a listed
    hash (pip download checks them as an install does)."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--require-hashes",
         "--only-binary=:all:", "--no-deps", "-r", str(LOCK), "-d", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(list(tmp_path.glob("*.whl"))) == 9
