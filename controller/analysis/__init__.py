"""Analyses built on the rules and settlement code (no I/O): exact odds by enumeration."""

from __future__ import annotations
