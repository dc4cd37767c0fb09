"""The device conformance kit: a scripted scenario matrix run against any shuffler or shoe.

What a casino's engineer runs (``tablectl conformance``) to accept a new device model before it
goes on a table. Every scenario checks one or more MUSTs of docs/protocols.md and names the
clause when the device breaks it. Layers: :mod:`.wire` (raw frames to and from the device, so a
scenario can send what our driver never would: a bad CRC, another version, a repeated SEQ),
:mod:`.session` (the verdict vocabulary and the few steps scenarios share), :mod:`.shuffler` and
:mod:`.shoe` (the scenarios, as data), :mod:`.reader` (what the talk-only shoe dialects allow),
:mod:`.runner` (runs a matrix and collects the results), :mod:`.fields` (every field of every
frame the device sends, against the ranges the document gives).
"""

from __future__ import annotations

from drivers.conformance.runner import Result, Verdict, run_suite
from drivers.conformance.session import Operator

KIT_VERSION = "3"
"""The scenario matrix's version, in every ``--json`` report: a casino compares a maker's
report with its own run only when both say the same kit version. Version 2: rows start from a
known state, timing judged against the document's figures, heartbeat period, lid and draw
transitions seen, one report per draw, the 5.2 decision (SHUFFLE with a hand waiting).
Version 3: every field of every frame the device sends checked against the document's ranges
(:mod:`.fields`; a shoe numbering its cards from index 0 fails); a talk-only shoe fails a row
during which its driver dropped bytes outside its dialect."""

__all__ = ["KIT_VERSION", "Operator", "Result", "Verdict", "run_suite"]
