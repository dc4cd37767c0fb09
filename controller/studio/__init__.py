"""The studio gateway: a game server elsewhere on the network runs LIVE-3P rounds on this table
over HTTPS with mutual TLS (docs/studio.md).

``config`` the ``studio.toml``, ``errors`` the package's exceptions, ``wire`` the bodies a game
server sends, ``ledger`` the idempotency keys and refusals, ``book`` the rounds as the table's
``watch`` stream tells them, ``gateway`` the verbs forwarded to the control socket with
delegation, ``server`` the HTTPS listener, ``arithmetic`` and ``client`` the reference game
server (``tablectl studio-client``)."""
