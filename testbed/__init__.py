"""What the tests and the benchmarks both run on: journals of made-up tables, the scripted
shift at a table, the crash campaign's rig (issue 35).

``tests/`` and ``benchmarks/`` never import each other: a benchmark that imported a test module
ran the test suite's fixtures and helpers as its method, and a test that imported a benchmark
made the benchmark's speed-measuring code part of what the suite must keep working. What both
need lives here, imports ``controller``, ``drivers`` and ``firmware_sim`` as any user of them
would, and imports neither ``tests`` nor ``benchmarks`` (``tests/test_layout.py`` keeps that
true). Tests of a benchmark itself live in ``tests/benchmarks/`` and may import it; a test may
also run a benchmark as a process. Not installed with tablectl: it runs from the repository,
as the tests and the benchmarks do.
"""
