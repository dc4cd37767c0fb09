"""The web process's memory under the attacks it is built to survive (docs/web.md, "Measured").

``tablectl web`` as a process, as the unit runs it: TLS (a throwaway certificate), an accounts
file, and the unit's ``LimitNOFILE=1024``. On loopback only, each attack a bounded loop that
stops by itself:

1. **uploads**: four clients offer 100 MB to ``/console/verify`` with a ``Content-Length``, then
   four offer 100 MB chunked (each stops when the server answers or closes, or at 100 MB);
2. **500 event streams**: 21 dealer accounts, 3 logins each, 8 streams per login (504 asked),
   held open while the views flow;
3. **900 idle TLS connections**: handshake done, then nothing sent, held; meanwhile a new
   viewer must still get the login page;
4. **900 slow TLS requests**: the same, each sending a request line and never the rest (the
   server cannot tell it from a slow client: these are held while the idle ones are let go).

After each: the web process's resident memory (``VmRSS``), with its children (the
multiprocessing resource tracker, a verifying child), and its peak (``VmHWM``), against the
unit's ``MemoryMax`` (read from ``systemd/tablectl-web.service``).
"""

from __future__ import annotations

import asyncio
import datetime
import http.client
import re
import resource
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "systemd" / "tablectl-web.service"
UPLOAD_BYTES = 100_000_000
CHUNK = 64 * 1024
DEALER_ACCOUNTS, LOGINS_PER_ACCOUNT, STREAMS_PER_LOGIN = 21, 3, 8
IDLE_CONNECTIONS = 900
IDLE_HOLD_SECONDS = 15.0
DEADLINE_SECONDS = 120.0
"""Bound on each phase's network waits."""


def unit_limits() -> tuple[int, int]:
    """``MemoryMax`` (bytes) and ``LimitNOFILE`` of the unit."""
    text = UNIT.read_text()
    memory = re.search(r"^MemoryMax=(\d+)([KMG]?)$", text, re.M)
    files = re.search(r"^LimitNOFILE=(\d+)$", text, re.M)
    assert memory is not None and files is not None, "the unit names MemoryMax and LimitNOFILE"
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[memory.group(2)]
    return int(memory.group(1)) * scale, int(files.group(1))


def _certificate(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def memory_mb(pid: int) -> dict[str, float]:
    """The process's VmRSS and VmHWM, and VmRSS with its children, in MB."""
    def status(p: int) -> dict[str, str]:
        try:
            lines = Path(f"/proc/{p}/status").read_text().splitlines()
        except OSError:
            return {}
        return dict(line.split(":", 1) for line in lines if ":" in line)

    def kb(fields: dict[str, str], name: str) -> int:
        return int(fields.get(name, "0 kB").split()[0])

    own = status(pid)
    children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    tree = kb(own, "VmRSS") + sum(kb(status(c), "VmRSS") for c in children)
    return {"rss": kb(own, "VmRSS") / 1024, "peak": kb(own, "VmHWM") / 1024,
            "with_children": tree / 1024}


class WebUnderAttack:
    """``tablectl web`` over TLS with accounts, under the unit's file limit."""

    def __init__(self, work: Path) -> None:
        from testbed.journalgen import write_synthetic_journal
        from controller.web.auth import Role, add_account

        self.work = work
        cert, key = _certificate(work)
        accounts = work / "accounts"
        add_account(accounts, "surv1", Role.SURVEILLANCE, "watch-the-table")
        self.dealers = [f"d{n:02d}" for n in range(DEALER_ACCOUNTS)]
        for name in self.dealers:
            add_account(accounts, name, Role.DEALER, "deal-the-cards")
        journal = work / "attack-journal"
        write_synthetic_journal(journal, 200, seed=3)
        config = work / "web.toml"
        config.write_text(f'[web]\nport = 0\ntls_cert = "{cert}"\ntls_key = "{key}"\n'
                          f'accounts = "{accounts}"\njournal = "{journal}"\n'
                          f'socket = "{work / "none.sock"}"\nindex = "{work / "a.sqlite"}"\n')
        _, files = unit_limits()

        def as_the_unit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

        self.process = subprocess.Popen(
            [sys.executable, "-m", "controller", "web", "--config", str(config)], cwd=ROOT,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=as_the_unit)
        assert self.process.stderr is not None
        line = self.process.stderr.readline().decode()
        self.port = int(line.split("listening on https://127.0.0.1:")[1].split("/")[0])
        self.origin = f"https://127.0.0.1:{self.port}"
        self.context = ssl.create_default_context()
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE  # our own throwaway certificate, loopback
        self._drain = threading.Thread(target=self._read_log, name="web-log", daemon=True)
        self._drain.start()

    def _read_log(self) -> None:
        assert self.process.stderr is not None
        for _ in self.process.stderr:
            pass

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)

    def memory(self) -> dict[str, float]:
        return memory_mb(self.process.pid)

    # -- plain requests ---------------------------------------------------------------------
    def connection(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context,
                                           timeout=DEADLINE_SECONDS)

    def login(self, name: str, password: str) -> tuple[str, str]:
        """A session: its cookie and its CSRF token."""
        connection = self.connection()
        try:
            body = f"name={name}&password={password}"
            connection.request("POST", "/login", body=body, headers={
                "Origin": self.origin, "Content-Type": "application/x-www-form-urlencoded"})
            reply = connection.getresponse()
            reply.read()
            cookie = (reply.getheader("Set-Cookie") or "").split(";")[0]
            assert reply.status == 303 and cookie, f"login {name}: {reply.status}"
            connection.request("GET", "/dealer", headers={"Cookie": cookie})
            page = connection.getresponse().read().decode()
        finally:
            connection.close()
        token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page)
        assert token is not None
        return cookie, token.group(1)

    def answers_login_page(self) -> float | None:
        """Seconds for a new viewer to get the login page (None: not within the deadline)."""
        began = time.perf_counter()
        try:
            connection = self.connection()
            connection.timeout = 30
            connection.request("GET", "/login")
            ok = connection.getresponse().status == 200
            connection.close()
        except OSError:
            return None
        return time.perf_counter() - began if ok else None

    # -- 1. uploads -------------------------------------------------------------------------
    def upload(self, cookie: str, token: str, chunked: bool, statuses: list[str]) -> None:
        """Offer 100 MB until the server answers or closes; the status it gave."""
        sent = 0
        try:
            raw = socket.create_connection(("127.0.0.1", self.port), timeout=DEADLINE_SECONDS)
            with self.context.wrap_socket(raw) as tls:
                length = ("Transfer-Encoding: chunked" if chunked
                          else f"Content-Length: {UPLOAD_BYTES}")
                tls.sendall((f"POST /console/verify HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                             f"Origin: {self.origin}\r\nCookie: {cookie}\r\n"
                             f"X-CSRF-Token: {token}\r\nContent-Type: application/json\r\n"
                             f"{length}\r\n\r\n").encode())
                block = b"[" * CHUNK
                framed = f"{len(block):x}\r\n".encode() + block + b"\r\n" if chunked else block
                tls.settimeout(0.0)
                while sent < UPLOAD_BYTES:
                    try:  # an answer already? (a refusal on the Content-Length, or at the cap)
                        first = tls.recv(64)
                        statuses.append(first.split(b"\r\n")[0].decode(errors="replace")
                                        if first else "closed")
                        return
                    except (ssl.SSLWantReadError, BlockingIOError):
                        pass
                    tls.settimeout(DEADLINE_SECONDS)
                    tls.sendall(framed)
                    tls.settimeout(0.0)
                    sent += CHUNK
                tls.settimeout(DEADLINE_SECONDS)
                first = tls.recv(64)
                statuses.append(first.split(b"\r\n")[0].decode(errors="replace") or "closed")
        except OSError as error:
            statuses.append(f"closed after {sent // 1_000_000} MB ({type(error).__name__})")

    def uploads(self) -> dict[str, Any]:
        cookie, token = self.login("surv1", "watch-the-table")
        out: dict[str, Any] = {}
        for chunked in (False, True):
            statuses: list[str] = []
            threads = [threading.Thread(target=self.upload, args=(cookie, token, chunked,
                                                                  statuses)) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(DEADLINE_SECONDS)
            out["chunked" if chunked else "content_length"] = sorted(statuses)
        out["memory"] = self.memory()
        return out

    # -- 2. event streams -------------------------------------------------------------------
    async def _streams(self, sessions: list[str]) -> tuple[dict[str, int], dict[str, float]]:
        writers: list[asyncio.StreamWriter] = []
        statuses: dict[str, int] = {}

        async def open_one(cookie: str) -> None:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port,
                                                           ssl=self.context)
            writers.append(writer)
            writer.write(f"GET /dealer/events HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                         f"Cookie: {cookie}\r\nAccept: text/event-stream\r\n\r\n".encode())
            await writer.drain()
            line = (await reader.readline()).decode().split()
            status = line[1] if len(line) > 1 else "closed"
            statuses[status] = statuses.get(status, 0) + 1

        asks = [open_one(cookie) for cookie in sessions for _ in range(STREAMS_PER_LOGIN)]
        await asyncio.wait_for(asyncio.gather(*asks, return_exceptions=True),
                               DEADLINE_SECONDS)
        await asyncio.sleep(3)  # the held streams get their views and heartbeats meanwhile
        memory = self.memory()
        for writer in writers:
            writer.close()
        return statuses, memory

    def streams(self) -> dict[str, Any]:
        sessions = [self.login(name, "deal-the-cards")[0] for name in self.dealers
                    for _ in range(LOGINS_PER_ACCOUNT)]
        statuses, memory = asyncio.run(self._streams(sessions))
        return {"asked": len(sessions) * STREAMS_PER_LOGIN, "answers": statuses,
                "memory": memory}

    # -- 3. idle TLS connections ------------------------------------------------------------
    async def _idle(self, begun: bool = False) -> dict[str, Any]:
        writers: list[asyncio.StreamWriter] = []
        readers: list[asyncio.StreamReader] = []
        failed = 0

        async def hold_one() -> None:
            nonlocal failed
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(
                    "127.0.0.1", self.port, ssl=self.context), 30)
                if begun:  # a request line, and never the rest (a slow client)
                    writer.write(b"GET /login HTTP/1.1\r\n")
                    await writer.drain()
                writers.append(writer)
                readers.append(reader)
            except (OSError, TimeoutError):
                failed += 1

        began = time.monotonic()
        await asyncio.gather(*(hold_one() for _ in range(IDLE_CONNECTIONS)))
        handshakes_seconds = time.monotonic() - began
        await asyncio.sleep(1)
        open_now = sum(not reader.at_eof() for reader in readers)
        memory = self.memory()
        login_page = await asyncio.to_thread(self.answers_login_page)
        await asyncio.sleep(IDLE_HOLD_SECONDS)  # does the server let idle connections go?
        closed_by_server = sum(reader.at_eof() for reader in readers)
        later = self.memory()
        for writer in writers:
            writer.close()
        return {"asked": IDLE_CONNECTIONS, "handshakes": len(writers), "failed": failed,
                "handshakes_seconds": handshakes_seconds, "open_when_measured": open_now,
                "memory": memory, "login_page_seconds": login_page,
                f"closed_by_server_after_{IDLE_HOLD_SECONDS:g}s": closed_by_server,
                "memory_later": later}

    def idle(self, begun: bool = False) -> dict[str, Any]:
        return asyncio.run(self._idle(begun))


def measure_attacks(work: Path) -> dict[str, Any]:
    """Each attack in turn on one web process; memory after each, and the peak."""
    memory_max, files = unit_limits()
    web = WebUnderAttack(work)
    try:
        started = web.memory()
        uploads = web.uploads()
        streams = web.streams()
        idle = web.idle()
        begun = web.idle(begun=True)
        final = web.memory()
    finally:
        web.close()
    return {"memory_max_mb": memory_max / 1024**2, "limit_nofile": files,
            "started": started, "uploads": uploads, "streams": streams, "idle_tls": idle,
            "begun_requests_tls": begun,
            "peak_mb": final["peak"]}


def main() -> int:
    import json
    import shutil
    import tempfile

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="webattack"))
    try:
        print(json.dumps(measure_attacks(work), indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
