"""The table's signing key: keygen's files and modes, the feed's refusal of a key others can
read, and the feed's small signer (libcrypto through ctypes) against ``cryptography``."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from controller.cli import main
from controller.feed.errors import KeyFileError
from controller.feed.keys import (generate_key_file, parse_public_key, read_private_seed,
                                  signed_bytes)
from controller.feed.signer import Signer

FEED = ('[table]\nid = "T07"\ngame = "rws-three-card-poker"\n\n[journal]\ndirectory = "j"\n\n'
        '[feed]\nbroker = "mqtts://broker.floor.lan"\nsite = "casino-a"\n'
        'signing_key = "keys/T07.ed25519"\n')


def test_keygen_writes_a_0400_key_and_prints_the_floor_line(tmp_path: Path, capsys) -> None:
    """``tablectl feed keygen``: the private key file the config names, 0400, owned by the
    user who ran it; the line for the floor's [floor.keys] is the matching public key; a second
    keygen refuses to replace the key (the floor's copy would no longer match)."""
    config = tmp_path / "tablectl.toml"
    config.write_text(FEED, encoding="utf-8")
    assert main(["feed", "keygen", "--config", str(config)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    key = tmp_path / "keys" / "T07.ed25519"
    info = key.stat()
    assert stat.S_IMODE(info.st_mode) == 0o400 and info.st_uid == os.geteuid()
    assert out[-1].startswith('T07 = "') and out[-1].endswith('"')
    public = Ed25519PublicKey.from_public_bytes(parse_public_key(out[-1].split('"')[1]))
    message = signed_bytes("casino-a", "T07", 5, "ab" * 32)
    public.verify(Signer(read_private_seed(key)).sign(message), message)  # raises if not
    assert main(["feed", "keygen", "--config", str(config)]) == 2
    assert "exists already" in capsys.readouterr().err


def test_a_key_others_can_read_is_refused(tmp_path: Path) -> None:
    key = tmp_path / "k"
    generate_key_file(key)
    key.chmod(0o440)
    with pytest.raises(KeyFileError, match="mode 0440 lets others read it"):
        read_private_seed(key)
    key.chmod(0o600)
    key.write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    with pytest.raises(KeyFileError, match="not an Ed25519 private key"):
        read_private_seed(key)


def test_libcrypto_signer_signs_as_cryptography_does(tmp_path: Path) -> None:
    """The feed signs through the libcrypto that ``ssl`` maps (0.7 MB, not cryptography's 7.6):
    Ed25519 is deterministic, so both must give the same bytes, and the floor's check (with
    cryptography) accepts them."""
    key = tmp_path / "k"
    generate_key_file(key)
    seed = read_private_seed(key)
    small, fallback = Signer(seed), Signer(seed, prefer_libcrypto=False)
    assert small.backend.startswith("libcrypto") and fallback.backend == "cryptography"
    for seq in (1, 2, 1855):
        message = signed_bytes("site1", "T1", seq, f"{seq:064x}")
        assert small.sign(message) == fallback.sign(message)
        assert len(small.sign(message)) == 64


def test_the_feed_will_not_start_with_a_key_others_can_read(tmp_path: Path, capsys) -> None:
    """``tablectl feed`` with a signing key of mode 0440: exit 2 (the unit does not restart
    it: a person must fix the file), one line naming the file and the fix."""
    config = tmp_path / "tablectl.toml"
    config.write_text(FEED, encoding="utf-8")
    assert main(["feed", "keygen", "--config", str(config)]) == 0
    (tmp_path / "keys" / "T07.ed25519").chmod(0o440)
    capsys.readouterr()
    assert main(["feed", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "T07.ed25519" in err[0] and "chmod 0400" in err[0], err
