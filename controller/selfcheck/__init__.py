"""Software authentication: the installed files, their digest, and a signed release manifest.

Regulators require that the software of a gaming device can be verified in the field with a
digest of at least 128 bits (N.J.A.C. 13:69O-1.5; GLI-11 asks the same). ``tablectl
selfcheck`` hashes every installed file of the package and of its locked dependencies
(:mod:`.inventory`), compares them with a release manifest and checks the manifest's Ed25519
signature against a public key named in the config (:mod:`.manifest`). The service runs the
same check at start, journals the digest and the verdict with every session, and refuses to
open a round when the config requires verification and it failed (:mod:`.status`).
"""

from __future__ import annotations

from controller.selfcheck.errors import SelfCheckError
from controller.selfcheck.inventory import Inventory, take_inventory
from controller.selfcheck.manifest import (
    SoftwareCheck,
    Verdict,
    build_manifest,
    check,
    sign_manifest,
)

__all__ = ["Inventory", "SelfCheckError", "SoftwareCheck", "Verdict", "build_manifest", "check",
           "sign_manifest", "take_inventory"]
