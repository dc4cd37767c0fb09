"""``tablectl web --config`` over TLS, as a surveillance room reaches it: the process serves
HTTPS with the configured certificate, says so, marks its session cookie ``Secure`` and sends
HSTS; and it refuses at start to listen beyond loopback without TLS (one line, exit 2)."""

from __future__ import annotations

import datetime
import http.client
import ssl
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlencode

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from controller.web.auth import Role, add_account
from testbed.journalgen import write_synthetic_journal

START_SECONDS = 20.0


def _certificate(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "table7.local")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_served_over_tls_with_secure_session(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    accounts = tmp_path / "accounts"
    add_account(accounts, "surv1", Role.SURVEILLANCE, "watch-the-table")
    journal = tmp_path / "journal"
    write_synthetic_journal(journal, 2)
    config = tmp_path / "web.toml"
    config.write_text(f'[web]\nport = 0\ntls_cert = "{cert}"\ntls_key = "{key}"\n'
                      f'accounts = "{accounts}"\njournal = "{journal}"\n'
                      f'socket = "{tmp_path / "none.sock"}"\nindex = "{tmp_path / "i.sqlite"}"\n')
    process = subprocess.Popen([sys.executable, "-m", "controller", "web", "--config",
                                str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first: list[str] = []
    got = threading.Event()

    def read_first() -> None:
        assert process.stderr is not None
        first.append(process.stderr.readline().decode())
        got.set()
        for _ in process.stderr:
            pass  # keep draining: a full pipe would stop the server

    reader = threading.Thread(target=read_first, name="tls-stderr")
    reader.start()
    try:
        assert got.wait(START_SECONDS) and "listening on https://" in first[0], first
        port = int(first[0].split("https://")[1].split("/")[0].rsplit(":", 1)[1])
        context = ssl.create_default_context(cafile=str(cert))
        context.check_hostname = False  # the test certificate names table7.local
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=context,
                                                 timeout=10)
        connection.request("POST", "/login", urlencode({"name": "surv1",
                                                        "password": "watch-the-table"}),
                           {"content-type": "application/x-www-form-urlencoded",
                            "origin": f"https://127.0.0.1:{port}"})
        reply = connection.getresponse()
        reply.read()
        cookie = reply.getheader("set-cookie") or ""
        assert reply.status == 303 and "secure" in cookie.lower() and "httponly" in \
            cookie.lower(), cookie
        assert reply.getheader("strict-transport-security", "").startswith("max-age=")
        connection.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
        reader.join(timeout=5)
        if process.stderr:
            process.stderr.close()


def test_remote_without_tls_is_refused_at_start(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "controller", "web", "--listen", "0.0.0.0",
                             "--journal", str(tmp_path)], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "tablectl web: web.listen 0.0.0.0: remote access needs TLS (web.tls_cert, "
        "web.tls_key)"]
