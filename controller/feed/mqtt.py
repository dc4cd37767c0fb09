"""One place that turns a :class:`~controller.feed.config.Broker` into a paho-mqtt 2 client
(MQTT 5, TLS, identity, bounded reconnect back-off), for the feed and the floor alike."""

from __future__ import annotations

import signal
import ssl
import threading
from typing import Any

import paho.mqtt.client as mqtt

from controller.feed.config import Broker

RECONNECT_MIN_S = 0.25
RECONNECT_MAX_S = 4.0
"""paho doubles the delay from the minimum to the maximum between attempts: bounded, backs
off, and a broker back after an outage is found within 4 s."""
MAX_QUEUED = 10_000


def topic_events(site: str, table: str) -> str:
    return f"tablectl/{site}/{table}/events"


def topic_status(site: str, table: str) -> str:
    return f"tablectl/{site}/{table}/status"


def topic_resend(site: str, table: str) -> str:
    """Where the floor asks one table's feed to send its records again from a seq
    (``{"from": N}``): the floor may write it, only that table may read it (the ACL)."""
    return f"tablectl/{site}/{table}/resend"


def make_client(broker: Broker, client_id: str) -> mqtt.Client:
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=mqtt.MQTTv5)
    if broker.tls:
        client.tls_set(ca_certs=str(broker.ca_file) if broker.ca_file else None,
                       certfile=str(broker.cert_file) if broker.cert_file else None,
                       keyfile=str(broker.key_file) if broker.key_file else None,
                       cert_reqs=ssl.CERT_REQUIRED, tls_version=ssl.PROTOCOL_TLS_CLIENT)
    if broker.username is not None:
        client.username_pw_set(broker.username, broker.password)
    client.reconnect_delay_set(min_delay=RECONNECT_MIN_S,  # type: ignore[arg-type]
                               max_delay=RECONNECT_MAX_S)  # paho sleeps floats fine
    client.max_queued_messages_set(MAX_QUEUED)
    return client


SESSION_EXPIRY_S = 7 * 24 * 3600


def start(client: mqtt.Client, broker: Broker, *, persistent: bool = False) -> None:
    """Connect in the background: paho's loop thread retries (with the back-off above) until
    the broker answers, so a table whose broker is down at boot starts anyway.

    ``persistent`` (the floor): a session the broker keeps while we are away, so the records
    published meanwhile are queued for us instead of dropped."""
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    properties = None
    if persistent:
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = SESSION_EXPIRY_S
    client.connect_async(broker.host, broker.port, keepalive=broker.keepalive,
                         clean_start=not persistent, properties=properties)
    client.loop_start()


def user_properties(pairs: dict[str, str]) -> Any:
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    properties = Properties(PacketTypes.PUBLISH)
    properties.ContentType = "application/json"
    properties.UserProperty = list(pairs.items())
    return properties


def stop(client: mqtt.Client) -> None:
    """Disconnect, stop paho's thread and close its sockets now. paho 2 closes the wake-up
    socket pair of ``loop_start`` only when the client is garbage-collected; a process that
    restarts its client would otherwise hold two descriptors per restart."""
    client.disconnect()
    client.loop_stop()
    client._reset_sockets()  # noqa: SLF001 -- the only way to close them before __del__


def stop_on_signals(stop: threading.Event) -> None:
    """SIGTERM (systemd) and SIGINT set ``stop``: the loop finishes its turn and closes
    cleanly (the feed saves its cursor and marks the table offline)."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
