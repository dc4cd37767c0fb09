"""The table side of the floor feed: follow the journal (the outbox) and publish each record to
an MQTT 5 broker, QoS 1, in chain order, never a face-down card before its reveal
(``docs/feed.md``)."""
