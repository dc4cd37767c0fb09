"""The five rule sets: cards, hand ranks and pay tables, as data plus small pure functions."""

from __future__ import annotations
