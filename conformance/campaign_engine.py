"""The one campaign engine: chunked work on Dask, resumable, the same bytes whatever the workers.

A *campaign* is a list of :class:`Task` values -- a key that names the chunk, a function that
is importable by name (a worker process imports it) and its arguments -- whose results are
combined in the order of their keys, never in the order they finish. :func:`run` sends the tasks
that have no result yet to a Dask cluster (``dask.distributed``):

* by default an in-process :class:`distributed.LocalCluster` of ``workers`` processes, one thread
  each (the numerics are single-threaded numpy and Python: processes scale, threads would not);
* with ``scheduler`` the address of a running scheduler (``tcp://host:8786``), the cluster
  behind it: ``dask scheduler`` on one machine, ``dask worker tcp://host:8786`` on each of the
  others, each with ptxspec installed (docs/campaigns.rst).

With a ``store`` folder every result is written there as it arrives (one JSON file per key, written
whole and then renamed, so a killed run leaves no half file), and a later run with the same store
reads those back instead of recomputing them: a campaign killed and restarted recomputes only the
missing chunks. A stored result is taken only for the same function, arguments and ptxspec
version (:attr:`Task.fingerprint`): a run with other settings, or a newer semantics, recomputes. ``workers=0`` runs the tasks here, in order, without Dask (the reference the
tests compare the cluster with).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from ptxspec.spec.errors import PtxSpecError


@attrs.frozen
class Task:
    """One chunk of a campaign: ``function`` (``module:name``) applied to ``arguments`` (JSON
    values); its result must be a JSON value too."""

    key: str
    function: str
    arguments: tuple = ()

    def __call__(self):
        return call(self.function, self.arguments)

    @property
    def fingerprint(self) -> str:
        """What a stored result must have been made from to be taken: the function, its arguments
        and the ptxspec version (a newer semantics recomputes)."""
        from ptxspec import __version__

        return hashlib.sha256(json.dumps([self.function, self.arguments, __version__], default=repr).encode()).hexdigest()


def call(function: str, arguments: tuple):
    """Import ``module:name`` and apply it (what a worker runs)."""
    module, _, name = function.partition(":")
    return getattr(importlib.import_module(module), name)(*arguments)


def result_path(store: Path, key: str) -> Path:
    """The file of a key's result: its readable part, and a hash that keeps keys that read alike
    (``MP+a_b`` and ``MP_a+b``) apart."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)[:80]
    return store / f"{safe}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.json"


def stored(store: Path | None, tasks: Sequence[Task]) -> dict[str, object]:
    """The results already in ``store`` for these tasks (by key)."""
    if store is None:
        return {}
    found = {}
    for task in tasks:
        path = result_path(store, task.key)
        if path.exists():
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):  # not a whole result (written by something else): made anew
                continue
            if isinstance(record, dict) and record.get("key") == task.key and record.get("fingerprint") == task.fingerprint:
                found[task.key] = record["result"]
    return found


def keep(store: Path | None, task: Task, result) -> None:
    if store is None:
        return
    path = result_path(store, task.key)
    partial = path.with_suffix(".partial")
    try:
        partial.write_text(json.dumps({"key": task.key, "fingerprint": task.fingerprint, "result": result}))
        os.replace(partial, path)
    except OSError as error:
        raise PtxSpecError(f"cannot keep a chunk's result: {error.strerror or error}", where=str(store)) from None


def run(
    tasks: Sequence[Task],
    *,
    workers: int = 0,
    scheduler: str | None = None,
    store: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, object]:
    """The result of every task, by key (in the tasks' order), computing only those ``store``
    lacks: here (``workers=0`` and no ``scheduler``), on a LocalCluster of ``workers`` processes,
    or on the cluster of ``scheduler``. ``progress(done, total)`` after each result."""
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        raise PtxSpecError("two tasks of a campaign have one key", where="campaign")
    if store is not None:
        try:
            store.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise PtxSpecError(f"cannot make the folder of results: {error.strerror or error}", where=str(store)) from None
    results = stored(store, tasks)
    missing = [t for t in tasks if t.key not in results]
    done = len(results)
    if progress is not None:
        progress(done, len(tasks))
    if scheduler is None and workers == 0:
        for task in missing:
            results[task.key] = task()
            keep(store, task, results[task.key])
            done += 1
            if progress is not None:
                progress(done, len(tasks))
    elif missing:
        for task, result in _on_dask(missing, workers, scheduler):
            results[task.key] = result
            keep(store, task, result)
            done += 1
            if progress is not None:
                progress(done, len(tasks))
    return {key: results[key] for key in keys}


def options(command):
    """The engine's options of a campaign command (``--workers``, ``--scheduler``, ``--resume``);
    the command receives them as ``workers``, ``scheduler`` and ``store`` (see :func:`settings`)."""
    import click

    command = click.option(
        "--resume",
        "store",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Keep each chunk's result in this folder; a later run with it recomputes only the chunks missing there.",
    )(command)
    command = click.option("--scheduler", default=None, help="The address of a running Dask scheduler (tcp://host:8786): its workers do the chunks.")(command)
    return click.option(
        "--workers",
        "--jobs",
        "workers",
        type=click.IntRange(min=0),
        default=None,
        help="Processes of the in-process Dask LocalCluster [default: one per core]; 0: no cluster, every chunk here in turn.",
    )(command)


def settings(workers: int | None, scheduler: str | None, store: Path | None) -> dict:
    """The keyword arguments of :func:`run` from the options (``workers`` None: one per core)."""
    return {"workers": (os.cpu_count() or 1) if workers is None else workers, "scheduler": scheduler, "store": store}


#: Dask starts its workers with ``MALLOC_TRIM_THRESHOLD_`` set, which stops glibc from raising its
#: mmap threshold: every large numpy temporary of a chunk is then mapped and unmapped anew, and a
#: chunk of the exhaustive check took 3.7 times as long as in this process (bench/scale.py). A high
#: mmap threshold keeps those arrays on the heap. Start the workers of a real cluster with it too.
WORKER_ENVIRON = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30)}


def local_cluster(workers: int):
    """A LocalCluster of ``workers`` processes, one thread each, with :data:`WORKER_ENVIRON`."""
    import dask
    from distributed import LocalCluster

    with dask.config.set({f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_ENVIRON.items()}):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40)


def _on_dask(tasks: Sequence[Task], workers: int, scheduler: str | None):
    """(task, result) as each finishes, on a LocalCluster of ``workers`` or the cluster of
    ``scheduler``."""
    try:
        from distributed import Client, as_completed
    except ImportError:  # pragma: no cover - a dependency of the package
        raise PtxSpecError("campaigns on several workers need dask.distributed (pip install 'distributed')") from None
    cluster = None
    try:
        if scheduler is not None:
            client = Client(scheduler, timeout="30s")
        else:
            cluster = local_cluster(workers)
            client = Client(cluster)
    except (OSError, ValueError, TypeError) as error:  # unreachable, or not an address
        raise PtxSpecError(f"cannot reach the Dask scheduler: {error}", where=scheduler or "LocalCluster") from None
    run_id = os.urandom(6).hex()  # two campaigns on one scheduler never share a future
    try:
        futures = {client.submit(call, t.function, t.arguments, key=f"ptxspec-{run_id}-{t.key}", pure=False): t for t in tasks}
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
