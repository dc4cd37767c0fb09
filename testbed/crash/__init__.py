"""The crash campaign: controllers SIGKILLed mid-round and restarted with recovery against a
simulated shuffler that keeps running (:mod:`.rig`), where each life is killed
(:mod:`.targets`), and what the journal must show after (:mod:`.reconcile`). ``tests/crash``
runs it CI-sized; ``benchmarks/soak.py`` runs it long."""
