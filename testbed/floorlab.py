"""A floor on one machine, for the feed tests, the benchmark and the demo: a real Mosquitto
with TLS (a throwaway CA, one client certificate per identity, whose CN is the MQTT username)
and the ACL docs/feed.md prescribes (a table writes only under ``tablectl/<site>/<its id>/``;
the floor only reads), and the feed's and the floor's config files pointing at it.

No pytest here: ``examples/floor_demo.py`` runs with the plain install."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

SITE = "site1"
REPO = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 10.0


class MissingBinary(RuntimeError):
    """A program the lab needs is not installed."""


def find_binary(name: str) -> str:
    """The path of ``name`` (also in /usr/sbin, where Debian puts mosquitto)."""
    found = shutil.which(name) or next((str(p) for p in (Path("/usr/sbin") / name,
                                                          Path("/usr/local/bin") / name)
                                        if p.exists()), None)
    if found is None:
        raise MissingBinary(f"{name} is not installed: apt-get install -y "
                            "--no-install-recommends mosquitto postgresql openssl")
    return found


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run([find_binary("openssl"), *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)


def make_pki(directory: Path, identities: list[str]) -> Path:
    """CA, a server certificate for 127.0.0.1, and ``<id>.pem``/``<id>.key`` per identity;
    and each identity's record signing key (``<id>.sign.key``, 0400) with its public key in
    the floor config's form (``<id>.sign.pub``)."""
    from controller.feed.keys import generate_key_file

    directory.mkdir(parents=True, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
             "-subj", "/CN=tablectl test CA", cwd=directory)
    (directory / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, ext in [("server", ["-extfile", "san.ext"])] + [(i, []) for i in identities]:
        _openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", f"/CN={name}", cwd=directory)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", *ext, cwd=directory)
    for name in identities:
        if not (directory / f"{name}.sign.key").exists():
            public = generate_key_file(directory / f"{name}.sign.key")
            (directory / f"{name}.sign.pub").write_text(public + "\n")
    return directory


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Mosquitto:
    """One broker process on a fixed port, stoppable and restartable (an outage)."""

    def __init__(self, directory: Path, pki: Path) -> None:
        self.binary = find_binary("mosquitto")
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        (directory / "acl").write_text(
            "# the floor (and a test's wire sniffer) read every table; the floor asks any\n"
            "# table to resend\n"
            "user floor\ntopic read tablectl/#\ntopic write tablectl/+/+/resend\n"
            "user sniffer\ntopic read tablectl/#\n\n"
            "# a table writes only its own topics (its certificate's CN is its id) and reads\n"
            "# only the floor's requests to it\n"
            f"pattern write tablectl/{SITE}/%u/#\n"
            f"pattern read tablectl/{SITE}/%u/resend\n")
        (directory / "data").mkdir(exist_ok=True)
        (directory / "mosquitto.conf").write_text(
            f"listener {self.port} 127.0.0.1\n"
            f"cafile {pki / 'ca.pem'}\ncertfile {pki / 'server.pem'}\n"
            f"keyfile {pki / 'server.key'}\n"
            "require_certificate true\nuse_identity_as_username true\n"
            "allow_anonymous false\n"
            f"acl_file {directory / 'acl'}\n"
            f"persistence true\npersistence_location {directory / 'data'}/\n"
            "max_queued_messages 0\nmax_inflight_messages 0\n"
            "log_dest stderr\nlog_type error\nlog_type warning\n"
            f"user {os.environ.get('USER') or 'root'}\n")

    def start(self) -> None:
        log = (self.directory / "mosquitto.log").open("ab")
        self.process = subprocess.Popen([self.binary, "-c", str(self.directory / "mosquitto.conf")],
                                        stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:  # wait for the listener, bounded
            if self.process.poll() is not None:
                raise RuntimeError("mosquitto exited: "
                                   + (self.directory / "mosquitto.log").read_text()[-2000:])
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not listen within 10 s")

    def kill(self) -> None:
        """SIGKILL: what the broker held only in memory (queued messages it acknowledged but
        had not delivered yet, sessions since its last save) is lost."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None


def start_program(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    """``python -m <args>`` from the repository, output appended to ``log``: the feed
    (``controller.feed``, the unit's program) or a floor consumer (``controller floor``)."""
    with log.open("ab") as sink:
        return subprocess.Popen([sys.executable, "-m", *args], cwd=REPO, stdout=sink,
                                stderr=sink)


def feed_config(tmp_path: Path, pki: Path, broker: Mosquitto, table: str,
                journal: Path, identity: str | None = None, window: int | None = None) -> Path:
    """A table config file holding what the feed reads: [table], [journal] and [feed]
    (``window``: the records in flight, the feed's default if None)."""
    who = identity or table
    path = tmp_path / f"{table}.toml"
    path.write_text(
        f'[table]\nid = "{table}"\ngame = "rws-three-card-poker"\n\n'
        f'[journal]\ndirectory = "{journal}"\n\n'
        f'[feed]\nbroker = "mqtts://127.0.0.1:{broker.port}"\nsite = "{SITE}"\n'
        f'ca_file = "{pki / "ca.pem"}"\ncert_file = "{pki / f"{who}.pem"}"\n'
        f'key_file = "{pki / f"{who}.key"}"\n'
        f'state_directory = "{tmp_path / f"feed-{table}"}"\n'
        f'signing_key = "{pki / f"{table}.sign.key"}"\n'
        + (f"window = {window}\n" if window is not None else ""))
    return path


def floor_config(tmp_path: Path, pki: Path, broker: Mosquitto, database: str | None = None,
                 identity: str = "floor", *, group: str | None = None,
                 consumer: str | None = None) -> Path:
    """The floor's config file; ``group`` and ``consumer``: one consumer of a group sharing the
    site's records (its own file and MQTT client id, the group's PostgreSQL ``database``)."""
    name = identity if consumer is None else f"{identity}-{consumer}"
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'[floor]\nbroker = "mqtts://127.0.0.1:{broker.port}"\nsite = "{SITE}"\n'
        f'ca_file = "{pki / "ca.pem"}"\ncert_file = "{pki / f"{identity}.pem"}"\n'
        f'key_file = "{pki / f"{identity}.key"}"\n'
        f'database = "{database or tmp_path / f"{identity}.sqlite3"}"\n'
        f'client_id = "tablectl-{name}"\n'
        + (f'group = "{group}"\n' if group is not None else "")
        + '\n[floor.keys]\n'
        + "".join(f'{key.name.split(".")[0]} = "{key.read_text().strip()}"\n'
                  for key in sorted(pki.glob("*.sign.pub"))))
    return path
