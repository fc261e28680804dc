"""Litmus tests against the PTX memory model (chapter 8), from Python::

    import ptxspec

    verdict = ptxspec.litmus.check("examples/litmus/MP.litmus")   # a file, or the test's text
    verdict.ok       # herd's Ok: whether the final condition holds under the model
    verdict.states   # the final states of the consistent executions

:func:`check` is what ``ptxspec litmus`` runs for one test (:func:`ptxspec.memory_model.check.check`
on the test lowered by :func:`ptxspec.memory_model.lowering.load`); bad input raises
:class:`~ptxspec.spec.errors.PtxSpecError` with its file, line and column.
"""

from __future__ import annotations

from pathlib import Path

from ptxspec.memory_model.check import Verdict

__all__ = ["Verdict", "check"]


def check(test: str | Path, *, model: str = "ptx-8.7", engine: str = "both", timeout_s: float | None = None, unroll_bound: int | None = None) -> Verdict:
    """The verdict of one litmus test: ``test`` is a ``.litmus`` file's path or the test's text.
    ``engine``: ``both`` (Z3, cross-checked by the explicit engine), ``z3`` or ``explicit``;
    ``timeout_s`` bounds the check (None: no limit); ``unroll_bound`` how often loops are unrolled."""
    from ptxspec.memory_model import lowering
    from ptxspec.memory_model.check import check as check_program

    kwargs = {} if unroll_bound is None else {"unroll_bound": unroll_bound}
    program = lowering.load(test, **kwargs)
    return check_program(program, model=model, engine=engine, timeout_s=timeout_s)
