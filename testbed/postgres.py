"""A private PostgreSQL cluster for one test: ``initdb`` in a temp dir, ``pg_ctl`` on a free
loopback port, trust auth for the local test user; as root the cluster runs as ``postgres``
(PostgreSQL refuses to run as root). A missing program or user raises
:class:`~testbed.floorlab.MissingBinary`: a benchmark stops on it, and the tests' wrapper
(``tests/feed_e2e/postgres.py``) fails in CI and skips elsewhere."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from testbed.floorlab import MissingBinary, find_binary, free_port


def _pg_binary(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else find_binary(name)


class Postgres:
    def __init__(self) -> None:
        self.initdb = _pg_binary("initdb")
        self.pg_ctl = _pg_binary("pg_ctl")
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="tablectl-pg-"))
        self.user = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
        if os.geteuid() == 0:
            try:
                entry = pwd.getpwnam("postgres")
            except KeyError:
                raise MissingBinary("running as root and there is no postgres user to run "
                                    "PostgreSQL") from None
            os.chown(self.directory, entry.pw_uid, entry.pw_gid)
        self.url = f"postgresql://{self.user}@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        command = list(args)
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=120)

    def start(self) -> None:
        data = self.directory / "data"
        self._run(self.initdb, "-D", str(data), "-U", self.user, "--auth=trust",
                  "--no-sync", "-E", "UTF8")
        self._run(self.pg_ctl, "-D", str(data), "-w", "-t", "60", "-l",
                  str(self.directory / "log"), "-o",
                  f"-p {self.port} -k {self.directory} -h 127.0.0.1 -F", "start")

    def stop(self) -> None:
        try:
            self._run(self.pg_ctl, "-D", str(self.directory / "data"), "-m", "fast", "-w",
                      "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
