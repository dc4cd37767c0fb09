"""``tablectl studio --config PATH``: the studio gateway for a game server (docs/studio.md);
``tablectl studio-client ...``: the reference game server and load test."""

from __future__ import annotations

import argparse
import json
from typing import Any

from controller.cli.argtypes import nonempty_path

DEFAULT_CONFIG = "/etc/tablectl/studio.toml"


def register(subparsers: Any) -> None:
    gateway = subparsers.add_parser(
        "studio", help="the studio gateway: a game server's round API over HTTPS with mutual "
                       "TLS (docs/studio.md)")
    gateway.add_argument("--config", default=DEFAULT_CONFIG, type=nonempty_path,
                         help="the gateway's config file (default %(default)s)")
    gateway.set_defaults(func=run_gateway)

    client = subparsers.add_parser(
        "studio-client", help="the reference game server: rounds, members' wagers in "
                              "batches, every settlement checked (docs/studio.md)")
    client.add_argument("--url", required=True, help="the gateway, https://HOST:PORT")
    client.add_argument("--cert", required=True, type=nonempty_path, help="this game server's "
                        "client certificate (PEM)")
    client.add_argument("--key", required=True, type=nonempty_path, help="its private key (PEM)")
    client.add_argument("--ca", required=True, type=nonempty_path, help="the CA that signed the "
                        "gateway's certificate")
    client.add_argument("--shift", default="shift", help="name of the shift: the prefix of "
                        "every idempotency key (default %(default)s)")
    client.add_argument("--seed", type=int, default=1)
    client.add_argument("--rounds", type=int, default=100)
    client.add_argument("--wagers", type=int, default=2000, help="wagers a round")
    client.add_argument("--batch", type=int, default=500, help="wagers a batch")
    client.add_argument("--betting-seconds", type=int, default=15)
    client.add_argument("--wait-window", action="store_true", help="let the betting window "
                        "run out instead of closing betting once every batch is placed")
    client.add_argument("--state", type=nonempty_path, help="a file of finished rounds: a "
                        "restarted client takes up the shift where it stopped")
    client.set_defaults(func=run_client)


def run_gateway(args: argparse.Namespace) -> int:
    from controller.studio.config import load_studio_config
    from controller.studio.run import run_studio

    return run_studio(load_studio_config(args.config))


def run_client(args: argparse.Namespace) -> int:
    from urllib.parse import urlsplit

    from controller.studio.client import Connection, Shift, client_context, run_shift
    from controller.studio.errors import StudioClientError

    url = urlsplit(args.url)
    if url.scheme != "https" or not url.hostname or not url.port:
        raise StudioClientError(f"--url {args.url}: must be https://HOST:PORT")
    for name in ("rounds", "wagers", "batch", "betting_seconds"):
        if getattr(args, name) < 1:
            raise StudioClientError(f"--{name.replace('_', '-')}: must be at least 1")
    shift = Shift(args.shift, args.seed, args.rounds, args.wagers, args.batch,
                  args.betting_seconds, close_early=not args.wait_window)
    connection = Connection(url.hostname, url.port,
                            client_context(args.cert, args.key, args.ca))
    try:
        reports = run_shift(connection, shift, args.state)
    finally:
        connection.close()
    bad = [r for r in reports if r.mismatches]
    print(json.dumps({"rounds": len(reports), "accepted": sum(r.accepted for r in reports),
                      "settled": sum(r.settled for r in reports),
                      "returned": sum(r.returned for r in reports),
                      "mismatched_rounds": len(bad)}), flush=True)
    return 1 if bad else 0
