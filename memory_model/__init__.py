"""The PTX memory consistency model (chapter 8 of the PTX ISA): litmus tests (:mod:`.litmus`), the model as
relations and axioms (:mod:`.ptx`), and its two interpreters (:mod:`.z3_engine`, :mod:`.explicit`)."""
