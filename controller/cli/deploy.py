"""``tablectl deploy-files DIR [--force]``: write the units, example configs and udev rules
this release ships (``controller.deploy``) into DIR, for the Raspberry Pi guide's ``install``
steps (docs/install-raspberry-pi.md): the files come from the installed release itself, so
they always match the software they start."""

from __future__ import annotations

import argparse
from typing import Any

from controller.cli.argtypes import nonempty_path
from controller.deploy import write_files


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("deploy-files", help="write the units, example configs and "
                                                        "udev rules this release ships")
    parser.add_argument("directory", metavar="DIR", type=nonempty_path,
                        help="where to write them (created)")
    parser.add_argument("--force", action="store_true",
                        help="replace files already in DIR")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    written = write_files(args.directory, overwrite=args.force)
    width = max(len(str(path)) for _, path in written)
    for item, path in written:
        print(f"{str(path):<{width}}  -> {item.installs_to} ({item.mode}; "
              + (f"section {item.section})" if item.section.isdigit() else f"{item.section})"))
    return 0
