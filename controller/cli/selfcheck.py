"""``tablectl selfcheck [--config PATH | --manifest PATH --public-key PATH] [--json]``: verify
the installed software against the signed release manifest; and ``tablectl selfcheck
--build-manifest OUT --lock requirements.lock [--sign-key KEY]``: write a release's manifest
(and its signature) from the install it runs in.

Exit 0 when verified, 1 when not (changed files, a bad signature, nothing configured), 2 when a
file cannot be used (one line naming it). See docs/install-raspberry-pi.md "Software
authentication".
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from controller.cli.argtypes import nonempty_path
from controller.cli.output import print_json
from controller.selfcheck.errors import SelfCheckError
from controller.selfcheck.inventory import locked_names, take_inventory
from controller.selfcheck.manifest import (
    SIGNATURE_SUFFIX,
    Verdict,
    build_manifest,
    check,
    sign_manifest,
    write_release,
)

EXIT_NOT_VERIFIED = 1
EXIT_UNUSABLE = 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("selfcheck", help="verify the installed software against "
                                                     "the signed release manifest")
    parser.add_argument("--config", metavar="PATH", type=nonempty_path,
                        help="service config whose [software] names the manifest and key")
    parser.add_argument("--manifest", metavar="PATH", type=nonempty_path,
                        help="release manifest (JSON)")
    parser.add_argument("--public-key", metavar="PATH", type=nonempty_path,
                        help="Ed25519 public key (PEM)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--build-manifest", metavar="OUT", type=nonempty_path,
                        help="write the manifest of this install to OUT (and OUT.sig)")
    parser.add_argument("--lock", metavar="FILE", default="requirements.lock", type=nonempty_path,
                        help="lock file naming the dependencies to cover (with "
                             "--build-manifest; default %(default)s)")
    parser.add_argument("--sign-key", metavar="PATH", type=nonempty_path,
                        help="Ed25519 private key (PEM) to sign the manifest with")
    parser.set_defaults(func=run)


def _build(args: argparse.Namespace) -> int:
    inventory = take_inventory(locked_names(Path(args.lock)))
    manifest = build_manifest(inventory)
    out = Path(args.build_manifest)
    signature = sign_manifest(manifest, Path(args.sign_key)) if args.sign_key else None
    write_release(out, manifest, signature)  # whole or not at all: a full disk leaves the old
    signed = f", signed ({out}{SIGNATURE_SUFFIX})" if signature is not None else ", unsigned"
    print(f"manifest {out}: tablectl {inventory.distributions['tablectl']}, "
          f"{len(inventory.files)} file(s) of {len(inventory.distributions)} distribution(s), "
          f"sha256 {inventory.digest}{signed}")
    return 0


def _locations(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    manifest = Path(args.manifest) if args.manifest else None
    key = Path(args.public_key) if args.public_key else None
    if args.config:
        from controller.service.config import load_config

        software = load_config(args.config).software
        manifest = manifest or software.manifest
        key = key or software.public_key
    return manifest, key


def run(args: argparse.Namespace) -> int:
    if args.build_manifest:
        return _build(args)
    result = check(*_locations(args))
    if args.json:
        print_json(result.to_json())
    else:
        print(result.summary())
        for difference in result.differences:
            print(f"  {difference}")
        if result.more_differences:
            print(f"  ... and {result.more_differences} more")
    if result.verdict is Verdict.UNREADABLE:
        raise SelfCheckError(result.problem or "unreadable")
    return 0 if result.verified else EXIT_NOT_VERIFIED
