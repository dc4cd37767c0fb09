"""A control server in a process of its own at a real open-file limit (test_emfile.py).

``python -m tests.controller.service.emfile_child SOCKET FLAG SPARE``: starts a
:class:`ControlServer` whose cap is far above the limit, then lowers ``RLIMIT_NOFILE`` to the
descriptors it has open plus ``SPARE``, prints ``{"ready": ...}`` and serves until a line on
stdin; then prints ``{"cpu": seconds}``. A peer is a supervisor while the file FLAG exists
(``stat`` needs no descriptor), a dealer otherwise: all test peers share one uid.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from collections.abc import Mapping
from typing import Any

from controller.service.control.server import AccessPolicy, ControlServer, Peer
from controller.service.policy import ConnectionLimits
from controller.service.protocol import Request


def main() -> None:
    path, flag, spare = sys.argv[1], sys.argv[2], int(sys.argv[3])

    def groups_of(uid: int, gid: int) -> frozenset[str]:
        return frozenset({"sup" if os.path.exists(flag) else "ops"})

    def handler(request: Request, peer: Peer) -> Mapping[str, Any]:
        return {"role": peer.role.socket_name}

    policy = AccessPolicy("ops", "surv", groups_of=groups_of, supervisors_group="sup",
                          superusers=frozenset())
    server = ControlServer(path, handler, policy,
                           limits=ConnectionLimits(max_connections=1000, idle_seconds=3600))
    server.start()
    used = len(os.listdir("/proc/self/fd")) - 1  # less the directory listing's own
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (used + spare, hard))
    before = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"ready": True, "open": used, "limit": used + spare}), flush=True)
    sys.stdin.readline()
    after = resource.getrusage(resource.RUSAGE_SELF)
    server.stop()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(json.dumps({"cpu": round(cpu, 3)}), flush=True)


if __name__ == "__main__":
    main()
