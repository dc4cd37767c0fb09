"""The floor side of the feed: every table's events from the broker, each table's hash chain
checked across messages, each record applied once, and the floor view in a database
(``docs/feed.md``)."""
