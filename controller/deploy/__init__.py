"""What the Raspberry Pi guide installs beside the software, shipped in the package: the
systemd units, the example configs and the udev rules (docs/install-raspberry-pi.md).

They used to be in the repository only, so a Pi installed from the wheel had none of them and
the guide's ``install ... tablectl.service`` named a file the release did not carry. The
repository's ``systemd/`` directory stays their one source: ``files/`` holds links to it, which
the wheel's build resolves into the files themselves. ``tablectl deploy-files DIR`` writes them
out (:func:`write_files`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from controller.errors import TablectlError


class DeployError(TablectlError):
    """The files cannot be written where asked (one line naming the path and the cause)."""


@dataclass(frozen=True, slots=True)
class DeployFile:
    """One shipped file: its name, where the guide installs it, with which mode."""

    name: str
    installs_to: str
    mode: str
    section: str
    """The guide's section that installs it."""


FILES = (
    DeployFile("tablectl.service", "/etc/systemd/system/tablectl.service", "0644", "6"),
    DeployFile("tablectl.example.toml", "/etc/tablectl/tablectl.toml", "0640", "5"),
    DeployFile("99-tablectl.rules", "/etc/udev/rules.d/99-tablectl.rules", "0644", "4"),
    DeployFile("tablectl-web.service", "/etc/systemd/system/tablectl-web.service", "0644",
               "docs/web.md"),
    DeployFile("tablectl-web.example.toml", "/etc/tablectl/web.toml", "0640", "docs/web.md"),
    DeployFile("tablectl-feed.service", "/etc/systemd/system/tablectl-feed.service", "0644",
               "docs/feed.md"),
    DeployFile("tablectl-floor.service", "/etc/systemd/system/tablectl-floor.service", "0644",
               "docs/feed.md"),
    DeployFile("99-tablectl-badge.rules", "/etc/udev/rules.d/99-tablectl-badge.rules", "0644",
               "docs/web.md"),
    DeployFile("tablectl-web.service.d/badge-reader.conf",
               "/etc/systemd/system/tablectl-web.service.d/badge-reader.conf", "0644",
               "docs/web.md"),
    DeployFile("tablectl-studio.service", "/etc/systemd/system/tablectl-studio.service", "0644",
               "docs/studio.md"),
    DeployFile("studio.example.toml", "/etc/tablectl/studio.toml", "0640", "docs/studio.md"),
)


def content(name: str) -> bytes:
    """The shipped bytes of ``name`` (one of :data:`FILES`)."""
    return resources.files(__name__).joinpath("files", name).read_bytes()


def write_files(directory: Path, *, overwrite: bool = False) -> list[tuple[DeployFile, Path]]:
    """Write every file of :data:`FILES` into ``directory`` (created if missing); a file
    already there is refused unless ``overwrite`` (an edited config is not replaced by
    accident). Nothing is written when any would be refused."""
    targets = [(item, directory / item.name) for item in FILES]
    if not overwrite:
        present = [str(path) for _, path in targets if path.exists()]
        if present:
            raise DeployError(f"{present[0]} exists (--force replaces it"
                              + (f" and {len(present) - 1} more)" if len(present) > 1 else ")"))
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for item, path in targets:
            path.parent.mkdir(parents=True, exist_ok=True)  # a unit's drop-in directory
            path.write_bytes(content(item.name))
    except OSError as error:
        where = error.filename or directory
        raise DeployError(f"cannot write {where}: {error.strerror or error}") from error
    return targets
