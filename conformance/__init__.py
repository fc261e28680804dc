"""The conformance harness and the user-facing tools built on the specification (the ``ptxspec`` command)."""
