"""tablectl's benchmarks: speed and memory are measured here, never asserted in a timed test.

A benchmark imports nothing from ``tests``, and a test nothing from here (but the tests of the
benchmarks themselves, in ``tests/benchmarks/``); what both run on (made-up journals, the
scripted shift, the crash campaign's rig) lives in ``testbed/`` (``tests/test_layout.py``).
"""
