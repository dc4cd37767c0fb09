"""``tablectl selfcheck --build-manifest`` on a full disk (issue 34, "bad input"): one line
naming the manifest, exit 2, and the earlier manifest and signature as they were. On the
previous main the manifest was truncated first and left 0 bytes (or one page) long. A real
256 KiB tmpfs (root only; skipped elsewhere), never a patched write."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.cli import EXIT_USAGE, main
from tests.controller.cli.test_selfcheck import LOCK, write_key_pair
from tests.controller.journal.smalldisk import fill, small_disk
from tests.stderr import one_error_line

EARLIER = b'{"an": "earlier manifest"}\n'
EARLIER_SIGNATURE = bytes(range(64))


@pytest.fixture(name="disk")
def fixture_disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk") as disk:
        yield disk


def test_a_full_disk_leaves_the_earlier_manifest_and_signature(
        disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The manifest and its signature are written to temporaries beside them, fsync'ed, then
    renamed over: a full disk is an error naming the manifest, the earlier pair is untouched
    and no temporary is left behind."""
    private, _public = write_key_pair(tmp_path)
    manifest = disk / "MANIFEST.json"
    manifest.write_bytes(EARLIER)
    Path(f"{manifest}.sig").write_bytes(EARLIER_SIGNATURE)
    filler = fill(disk)
    assert main(["selfcheck", "--build-manifest", str(manifest), "--lock", str(LOCK),
                 "--sign-key", str(private)]) == EXIT_USAGE
    line = one_error_line(capsys)
    assert str(manifest) in line and "No space left on device" in line
    assert manifest.read_bytes() == EARLIER
    assert Path(f"{manifest}.sig").read_bytes() == EARLIER_SIGNATURE
    assert sorted(p.name for p in disk.iterdir()) == sorted(
        [manifest.name, f"{manifest.name}.sig", filler.name])

    filler.unlink()  # space again: the same command replaces both, leaving nothing else
    assert main(["selfcheck", "--build-manifest", str(manifest), "--lock", str(LOCK),
                 "--sign-key", str(private)]) == 0
    assert manifest.read_bytes().startswith(b"{") and manifest.read_bytes() != EARLIER
    assert len(Path(f"{manifest}.sig").read_bytes()) == 64
    assert sorted(p.name for p in disk.iterdir()) == [manifest.name, f"{manifest.name}.sig"]
