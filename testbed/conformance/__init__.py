"""The conformance kit's bench: the device variants (conformant and broken), the mutants per
field, and a run of the kit against them, shared by the kit's tests and benchmarks/conformance.py."""
