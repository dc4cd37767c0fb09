"""Signing records on the table, small: Ed25519 through the OpenSSL ``libcrypto`` that the
``ssl`` module has loaded already (TLS to the broker), called with ``ctypes``.

Why not ``cryptography`` here: importing its Ed25519 costs the feed 7.6 MB of RSS (it carries
a second, statically linked OpenSSL), a third of the feed's 25 MB budget; ``ctypes`` and the
already-mapped ``libcrypto`` cost about 0.7 MB (docs/feed.md, memory). Ed25519 is deterministic,
so both give the same signature for the same key and bytes
(``tests/controller/feed/test_keys.py`` checks that they do, and the floor verifies with
``cryptography``). Where no shared ``libcrypto`` with Ed25519 is mapped (a Python with OpenSSL
linked in statically), the feed falls back to ``cryptography`` and says so in its log.
"""

from __future__ import annotations

import ctypes
import ssl  # noqa: F401 -- loads libcrypto, which this module then finds mapped
from collections.abc import Callable
from pathlib import Path

from controller.feed.errors import SigningError

EVP_PKEY_ED25519 = 1087
"""OpenSSL's NID for Ed25519 (``NID_ED25519``), stable since OpenSSL 1.1.1."""
SIGNATURE_BYTES = 64


def _mapped_libcrypto() -> str | None:
    """The path of the ``libcrypto`` this process has mapped (Linux ``/proc``), if any."""
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
            for line in maps:
                path = line.rsplit(" ", 1)[-1].strip()
                if "/libcrypto.so" in path:
                    return path
    except OSError:
        return None
    return None


class _Libcrypto:
    """One Ed25519 key held by ``libcrypto``; a signature per call, no state between calls."""

    def __init__(self, path: str, seed: bytes) -> None:
        lib = ctypes.CDLL(path)
        pointer = ctypes.c_void_p
        lib.EVP_PKEY_new_raw_private_key.restype = pointer
        lib.EVP_PKEY_new_raw_private_key.argtypes = [ctypes.c_int, pointer, ctypes.c_char_p,
                                                     ctypes.c_size_t]
        lib.EVP_MD_CTX_new.restype = pointer
        lib.EVP_MD_CTX_new.argtypes = []
        lib.EVP_MD_CTX_free.restype = None
        lib.EVP_MD_CTX_free.argtypes = [pointer]
        lib.EVP_DigestSignInit.restype = ctypes.c_int
        lib.EVP_DigestSignInit.argtypes = [pointer, pointer, pointer, pointer, pointer]
        lib.EVP_DigestSign.restype = ctypes.c_int
        lib.EVP_DigestSign.argtypes = [pointer, ctypes.c_char_p,
                                       ctypes.POINTER(ctypes.c_size_t), ctypes.c_char_p,
                                       ctypes.c_size_t]
        self._lib = lib
        self._key = lib.EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, None, seed, len(seed))
        if not self._key:
            raise SigningError(f"{path}: this libcrypto does not take an Ed25519 key")

    def sign(self, message: bytes) -> bytes:
        lib = self._lib
        context = lib.EVP_MD_CTX_new()
        if not context:
            raise SigningError("libcrypto: out of memory for a signing context")
        try:
            out = ctypes.create_string_buffer(SIGNATURE_BYTES)
            size = ctypes.c_size_t(SIGNATURE_BYTES)
            if lib.EVP_DigestSignInit(context, None, None, None, self._key) != 1 or \
                    lib.EVP_DigestSign(context, out, ctypes.byref(size), message,
                                       len(message)) != 1 or size.value != SIGNATURE_BYTES:
                raise SigningError("libcrypto refused to sign a record with Ed25519")
            return out.raw
        finally:
            lib.EVP_MD_CTX_free(context)


def _with_cryptography(seed: bytes) -> Callable[[bytes], bytes]:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(seed).sign


class Signer:
    """Signs with one table's private key; :attr:`backend` says which library does it."""

    def __init__(self, seed: bytes, *, prefer_libcrypto: bool = True) -> None:
        path = _mapped_libcrypto() if prefer_libcrypto else None
        self._sign: Callable[[bytes], bytes]
        if path is not None:
            try:
                self._sign = _Libcrypto(path, seed).sign
                self.backend = f"libcrypto ({Path(path).name})"
                return
            except (OSError, AttributeError, SigningError):
                pass  # no such symbol or no Ed25519 there: the fallback below
        self._sign = _with_cryptography(seed)
        self.backend = "cryptography"

    def sign(self, message: bytes) -> bytes:
        return self._sign(message)
