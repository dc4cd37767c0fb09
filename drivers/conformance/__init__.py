"""The device conformance kit: a scripted scenario matrix run against any shuffler or shoe.

What a casino's engineer runs (``tablectl conformance``) to accept a new device model before it
goes on a table. Every scenario checks one or more MUSTs of docs/protocols.md and names the
clause when the device breaks it. Layers: :mod:`.wire` (raw frames to and from the device, so a
scenario can send what our driver never would: a bad CRC, another version, a repeated SEQ),
:mod:`.session` (the verdict vocabulary and the few steps scenarios share), :mod:`.shuffler` and
:mod:`.shoe` (the scenarios, as data), :mod:`.reader` (what the talk-only shoe dialects allow),
:mod:`.runner` (runs a matrix and collects the results).
"""

from drivers.conformance.runner import Result, Verdict, run_suite
from drivers.conformance.session import Operator

__all__ = ["Operator", "Result", "Verdict", "run_suite"]
