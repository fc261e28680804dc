"""The one command line of the silicon campaigns: ``python -m ptxspec.conformance.silicon``.

::

    python -m ptxspec.conformance.silicon CAMPAIGN COMMAND [ARGUMENTS] [--round ROUND]

Every campaign (:mod:`ptxspec.conformance.silicon.campaign` lists them with their rounds) has the
same commands, where they apply: ``prepare BUNDLE`` (here, with ptxas: the bundle its device
script runs on the GPU machine), ``verify DIR`` (the recording in DIR against the semantics under
the sm_90 profile; exit status 1 when something differs), ``fit DIR [NAME ...]`` (the datapath
that reproduces a recording), ``spec-check DIR`` (the recorded results outside the manual's
sets) and ``separate DIR [NAME ...]`` (how the pinned datapath's one-part changes fare).
``--round`` picks one round of a campaign, by the stem of its files::

    python -m ptxspec.conformance.silicon float-cvt prepare BUNDLE
    python -m ptxspec.conformance.silicon catalogue prepare BUNDLE --round fma-oob-probes
    python -m ptxspec.conformance.silicon mma verify conformance/data/sm_90 --round mma-sp-more
    python -m ptxspec.conformance.silicon wgmma fit conformance/data/sm_90 --round wgmma-more f16-f16-f32
    python -m ptxspec.conformance.silicon movement verify conformance/data/sm_90
    python -m ptxspec.conformance.silicon atomic verify conformance/data/sm_90
    python -m ptxspec.conformance.silicon memory verify conformance/data/sm_90 [--sample N]
    python -m ptxspec.conformance.silicon tma verify conformance/data/sm_90 [--round tma-more]
    python -m ptxspec.conformance.silicon async verify conformance/data/sm_90 [--sample N]
    python -m ptxspec.conformance.silicon approx report
    python -m ptxspec.conformance.silicon exhaustive verify --chunks 8
    python -m ptxspec.conformance.silicon all prepare BUNDLE            # every round, BUNDLE/ROUND/
    python -m ptxspec.conformance.silicon digest-arrays OUT/ROUND meta-ROUND.json 'ROUND-*.npz'

The device scripts (numpy and CuPy only, no ptxspec) run there, each ``python3 SCRIPT run BUNDLE
OUT [ROUND]``; ``python3 conformance/silicon/scalar_device.py run-all BUNDLE OUT`` runs every
round that ``all prepare`` wrote. A bad input (a missing file, an unknown round, an option out of
range) is one line on standard error and exit status 2, never a traceback.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from ptxspec.conformance.silicon import approx as approx_campaign
from ptxspec.conformance.silicon import (
    async_campaign,
    atomic_campaign,
    catalogue_campaign,
    exhaustive,
    float_cvt_campaign,
    memory_campaign,
    mma_campaign,
    tma_campaign,
    movement_campaign,
    replay,
    wgmma_campaign,
)
from ptxspec.conformance.silicon.campaign import DATA, array_digests
from ptxspec.spec.errors import PtxSpecError

BUNDLE = click.argument("bundle", type=click.Path(file_okay=False, path_type=Path))
DIRECTORY = click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=DATA)
NAMES = click.argument("names", nargs=-1)
PTXAS = click.option("--ptxas", default="ptxas", show_default=True, help="The ptxas to assemble with (-arch=sm_90a).")


def round_option(rounds, default: str) -> Callable:
    """``--round NAME``: one of ``rounds`` (by the stem of its files)."""
    return click.option(
        "--round", "round_name", type=click.Choice(list(rounds)), default=default, show_default=True, help="The round, by the stem of its files."
    )


def _status(report: dict) -> int:
    """A verify command's exit status: 1 when some entry mismatches, else 0."""
    return 1 if any(r.get("mismatches") if isinstance(r, dict) else r for r in report.values()) else 0


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def silicon() -> None:
    """The silicon campaigns: prepare a bundle here, run it on the GPU, verify the recording."""


# ---------------------------------------------------------------------------------------------
# The scalar campaigns: float-cvt and catalogue
# ---------------------------------------------------------------------------------------------


@silicon.group("float-cvt")
def float_cvt() -> None:
    """381 forms of §9.7.3 and cvt (§9.7.9.21), listed by hand (round float-cvt)."""


@float_cvt.command("prepare")
@BUNDLE
@PTXAS
def float_cvt_prepare(bundle: Path, ptxas: str) -> None:
    """Assemble every form into BUNDLE (run it with scalar_device.py run BUNDLE OUT)."""
    float_cvt_campaign.prepare(bundle, ptxas)


@float_cvt.command("verify")
@DIRECTORY
@NAMES
def float_cvt_verify(directory: Path, names: tuple[str, ...]) -> int:
    """Replay every recorded vector (of the forms NAMES) against the semantics."""
    return _status(replay.verify(directory, [float_cvt_campaign.NAME], list(names) or None))


@silicon.group("catalogue")
def catalogue() -> None:
    """Every sm_90a form of the scalar and warp chapters, from the catalogue (three rounds)."""


@catalogue.command("prepare")
@BUNDLE
@round_option(catalogue_campaign.ROUNDS, "integer-half-video-warp")
@PTXAS
def catalogue_prepare(bundle: Path, round_name: str, ptxas: str) -> None:
    """Assemble the round's forms into BUNDLE (run it with scalar_device.py run BUNDLE OUT ROUND)."""
    catalogue_campaign.prepare(catalogue_campaign.ROUNDS[round_name], bundle, ptxas)


@catalogue.command("verify")
@DIRECTORY
@round_option(catalogue_campaign.ROUNDS, "integer-half-video-warp")
@NAMES
def catalogue_verify(directory: Path, round_name: str, names: tuple[str, ...]) -> int:
    """Replay every recorded vector of the round (of the forms NAMES) against the semantics."""
    return _status(replay.verify(directory, [round_name], list(names) or None))


# ---------------------------------------------------------------------------------------------
# mma
# ---------------------------------------------------------------------------------------------


@silicon.group("mma")
def mma() -> None:
    """mma.sync.aligned and mma.sp (§9.7.14.5-6): which D sm_90 computes."""


MMA_ROUND = round_option(mma_campaign.ROUNDS, "mma")


@mma.command("prepare")
@BUNDLE
@MMA_ROUND
@click.option("--random", type=click.IntRange(min=0), default=None, help="Random mma per combination (default: the round's).")
@PTXAS
def mma_prepare(bundle: Path, round_name: str, random: int | None, ptxas: str) -> None:
    """Assemble the round's kernels and designed probes into BUNDLE (run it with mma_device.py run BUNDLE OUT ROUND)."""
    mma_campaign.prepare(mma_campaign.ROUNDS[round_name], bundle, random, ptxas)


@mma.command("prepare-sass")
@BUNDLE
@PTXAS
def mma_prepare_sass(bundle: Path, ptxas: str) -> None:
    """The mma-more bundle and the plan of the m8n8k4 .f16 kernels whose SASS sass_device.py records."""
    mma_campaign.prepare_sass(bundle, ptxas)


@mma.command("verify")
@DIRECTORY
@MMA_ROUND
def mma_verify(directory: Path, round_name: str) -> int:
    """Every recorded D (or its digest) against the sm_90 profile."""
    return _status(mma_campaign.verify(directory, mma_campaign.ROUNDS[round_name]))


@mma.command("fit")
@DIRECTORY
@MMA_ROUND
@NAMES
def mma_fit(directory: Path, round_name: str, names: tuple[str, ...]) -> None:
    """The datapath that reproduces each float combination (those named)."""
    mma_campaign.fit(directory, mma_campaign.ROUNDS[round_name], list(names) or None)


@mma.command("spec-check")
@DIRECTORY
@MMA_ROUND
@click.option("--random", type=click.IntRange(min=0), default=None, help="Only the designed probes and so many random mma.")
def mma_spec_check(directory: Path, round_name: str, random: int | None) -> None:
    """The recorded float results outside the spec-level sets."""
    mma_campaign.spec_check(directory, mma_campaign.ROUNDS[round_name], random)


@mma.command("separate")
@DIRECTORY
@MMA_ROUND
@NAMES
def mma_separate(directory: Path, round_name: str, names: tuple[str, ...]) -> None:
    """The mismatches of each one-part change of the pinned datapaths."""
    mma_campaign.separate(directory, mma_campaign.ROUNDS[round_name], list(names) or None)


# ---------------------------------------------------------------------------------------------
# wgmma
# ---------------------------------------------------------------------------------------------


@silicon.group("wgmma")
def wgmma() -> None:
    """wgmma.mma_async{.sp} (§9.7.15): layouts, fragments and numerics against sm_90a."""


WGMMA_ROUND = round_option(wgmma_campaign.ROUNDS, "wgmma")


def _part(round_name: str) -> str:
    return wgmma_campaign.ROUNDS[round_name].part


@wgmma.command("prepare")
@BUNDLE
@WGMMA_ROUND
@PTXAS
def wgmma_prepare(bundle: Path, round_name: str, ptxas: str) -> None:
    """Assemble the round's kernels into BUNDLE, with the device scripts (python3 BUNDLE/wgmma_device.py run BUNDLE OUT)."""
    wgmma_campaign.prepare(bundle, _part(round_name), ptxas)


@wgmma.command("verify")
@DIRECTORY
@WGMMA_ROUND
@NAMES
def wgmma_verify(directory: Path, round_name: str, names: tuple[str, ...]) -> int:
    """Every recorded kernel (those named) against our layouts and the sm_90 datapaths."""
    return _status(wgmma_campaign.verify(directory, list(names) or None, part=_part(round_name)))


@wgmma.command("fit")
@DIRECTORY
@WGMMA_ROUND
@NAMES
def wgmma_fit(directory: Path, round_name: str, names: tuple[str, ...]) -> None:
    """The datapath that reproduces each float combination (those named)."""
    wgmma_campaign.fit(directory, list(names) or None, part=_part(round_name))


@wgmma.command("spec-check")
@DIRECTORY
@WGMMA_ROUND
@NAMES
def wgmma_spec_check(directory: Path, round_name: str, names: tuple[str, ...]) -> None:
    """The recorded float results outside the spec-level sets (a sample of each instance)."""
    wgmma_campaign.spec_check(directory, list(names) or None, part=_part(round_name))


@wgmma.command("separate")
@DIRECTORY
@WGMMA_ROUND
@NAMES
def wgmma_separate(directory: Path, round_name: str, names: tuple[str, ...]) -> None:
    """The mismatches of each one-parameter change of the pinned datapaths."""
    wgmma_campaign.separate(directory, list(names) or None, part=_part(round_name))


@wgmma.command("digests")
@DIRECTORY
def wgmma_digests(directory: Path) -> None:
    """SHA-256 of every kernel's D of the wgmma round in DIRECTORY (a second chip's record)."""
    click.echo(json.dumps(wgmma_campaign.output_digests(directory), indent=1))


# ---------------------------------------------------------------------------------------------
# movement, approx, exhaustive
# ---------------------------------------------------------------------------------------------


@silicon.group("atomic")
def atomic() -> None:
    """Floating-point atom and red .add (§9.7.13.5-6) on global and shared memory, on sm_90."""


@atomic.command("prepare")
@BUNDLE
@PTXAS
def atomic_prepare(bundle: Path, ptxas: str) -> None:
    """Assemble every form into BUNDLE (run it with atomic_device.py run BUNDLE OUT)."""
    plan = atomic_campaign.prepare(bundle, ptxas)
    click.echo(f"{len(plan['forms'])} forms planned, {len(plan['rejected'])} rejected by ptxas")
    for entry in plan["rejected"]:
        click.echo(f"  rejected: {entry['name']}: {entry['message']}")


@atomic.command("verify")
@DIRECTORY
def atomic_verify(directory: Path) -> int:
    """Every recorded atomic against the semantics under the sm_90 profile."""
    report = atomic_campaign.verify(directory)
    for name, entry in report.items():
        click.echo(f"{name}: {entry['pairs']} pairs, {len(entry['mismatches'])} mismatching")
        for item in entry["mismatches"][:5]:
            click.echo(f"  {item}")
    return _status(report)


def _echo_forms(forms: dict) -> int:
    """Print each replayed form with mismatches (its first five) and the totals; the number of
    forms with mismatches."""
    bad = 0
    for form in forms.values():
        if form.mismatches:
            bad += 1
            click.echo(f"{form.name}: {form.records} records, {len(form.mismatches)} mismatching")
            for item in form.mismatches[:5]:
                click.echo(f"  {item}")
    records = sum(r.records for r in forms.values())
    click.echo(f"{len(forms)} forms, {records} records replayed, {bad} form(s) with mismatches")
    return bad


@silicon.group("memory")
def memory() -> None:
    """ld, st, atom, red on memory images (§9.7.9.8-11, §9.7.13.5-6), the generic address windows
    (cvta, isspacep, mapa, getctarank) and createpolicy, on sm_90."""


@memory.command("prepare")
@BUNDLE
@PTXAS
def memory_prepare(bundle: Path, ptxas: str) -> None:
    """Assemble every form into BUNDLE (run it with memory_device.py run BUNDLE OUT)."""
    plan = memory_campaign.prepare(bundle, ptxas)
    click.echo(f"{len(plan['forms'])} forms planned, {len(plan['rejected'])} rejected by ptxas")
    for entry in plan["rejected"]:
        click.echo(f"  rejected: {entry['name']}: {entry['message'].splitlines()[0]}")


@memory.command("verify")
@DIRECTORY
@click.option("--sample", type=click.IntRange(1), default=None, help="Replay only the first N records of each form.")
def memory_verify(directory: Path, sample: int | None) -> int:
    """Every recorded memory instruction (and the address map, createpolicy) against the semantics
    under the sm_90 profile."""
    report = memory_campaign.verify(directory, sample)
    bad = _echo_forms(report["forms"])
    for part in ("address_map", "createpolicy"):
        click.echo(f"{part}: {len(report[part])} mismatching")
        for item in report[part][:10]:
            click.echo(f"  {item}")
    return int(bool(bad or report["address_map"] or report["createpolicy"]))


@silicon.group("async")
def async_group() -> None:
    """cp.async, cp.async.bulk, cp.reduce.async.bulk, st.async and red.async with their mbarrier
    complete-tx (§9.7.9.12, §9.7.9.25.3-4, §9.7.13.7), and mbarrier programs (§9.7.13.15), on sm_90."""


@async_group.command("prepare")
@BUNDLE
@PTXAS
def async_prepare(bundle: Path, ptxas: str) -> None:
    """Assemble every form into BUNDLE (run it with async_device.py run BUNDLE OUT)."""
    plan = async_campaign.prepare(bundle, ptxas)
    click.echo(f"{len(plan['forms'])} forms and {len(plan['programs'])} mbarrier programs planned, {len(plan['rejected'])} forms rejected by ptxas")


@async_group.command("verify")
@DIRECTORY
@click.option("--sample", type=click.IntRange(1), default=None, help="Replay only the first N records of each form and the first N mbarrier programs.")
def async_verify(directory: Path, sample: int | None) -> int:
    """Every recorded copy, reduction and mbarrier program against the semantics under the sm_90
    profile."""
    report = async_campaign.verify(directory, sample)
    bad = _echo_forms(report["forms"])
    click.echo(f"mbarrier programs: {len(report['programs'])} mismatching")
    for index, items in list(report["programs"].items())[:5]:
        click.echo(f"  program {index}: {items[0]}")
    return int(bool(bad or report["programs"]))


@silicon.group("tma")
def tma() -> None:
    """cp.async.bulk.tensor (the TMA engine) over driver-made tensor maps (§5.5, §9.7.9.25.5), on sm_90."""


@tma.command("prepare")
@BUNDLE
@PTXAS
@round_option(tma_campaign.ROUNDS, "tma")
def tma_prepare(bundle: Path, ptxas: str, round_name: str) -> None:
    """Assemble the kernels and write the plan into BUNDLE (run it with tma_device.py run BUNDLE OUT ROUND)."""
    plan = tma_campaign.prepare(bundle, ptxas, round_name)
    click.echo(f"{len(plan['cases'])} cases planned")


@tma.command("verify")
@DIRECTORY
@round_option(tma_campaign.ROUNDS, "tma")
def tma_verify(directory: Path, round_name: str) -> int:
    """Every recorded tensor copy (and fault) against the semantics under the sm_90 profile."""
    report = tma_campaign.verify(directory, round_name=round_name)
    bad = [r for r in report.values() if r.mismatches]
    for r in bad:
        click.echo(f"{r.name}: {'; '.join(r.mismatches)}")
    open_ = [r for r in report.values() if r.not_modelled]
    partly = [r for r in report.values() if not r.mismatches and not r.not_modelled and (r.unrecorded or r.completion_open)]
    exact = len(report) - len(bad) - len(open_) - len(partly)
    click.echo(f"{len(report)} cases, {exact} replay exactly, {len(bad)} differ, {len(open_)} not modelled (the semantics refuse them)")
    if partly:
        unrecorded = sum(bool(r.unrecorded) for r in partly)
        click.echo(
            f"{len(partly)} replay in part: {len(partly) - unrecorded} loads sent more than the kernel's expect_tx (phase completion not compared), "
            f"{unrecorded} read past the recorded buffer (the load not compared)"
        )
    return int(bool(bad))


@silicon.group("movement")
def movement() -> None:
    """ldmatrix, stmatrix and movmatrix (§9.7.14.5.15-17) on sm_90."""


@movement.command("prepare")
@BUNDLE
@click.option("--executions", type=click.IntRange(min=1), default=movement_campaign.EXECUTIONS, show_default=True, help="Warp executions per form.")
@PTXAS
def movement_prepare(bundle: Path, executions: int, ptxas: str) -> None:
    """Assemble every recordable form into BUNDLE (run it with movement_device.py run BUNDLE OUT)."""
    content = movement_campaign.prepare(bundle, executions, ptxas)
    click.echo(
        f"{len(content['entries'])} forms planned ({executions} executions each), {len(content['rejected'])} rejected by ptxas, "
        f"{len(content['not_recordable'])} not recordable on sm_90a"
    )
    for text, why in content["rejected"].items():
        click.echo(f"  rejected: {text}: {why}")


@movement.command("verify")
@DIRECTORY
def movement_verify(directory: Path) -> int:
    """Every recorded output against the semantics."""
    result = movement_campaign.verify(directory)
    for text, f in result["forms"].items():
        click.echo(
            f"{text}: {f['executions']} executions, {f['wrong_executions']} stored whole mismatching ({f['wrong_values']} values), "
            f"{f['wrong_blocks']} digest blocks mismatching"
        )
        for item in f["located"][:5]:
            click.echo(f"    {item}")
    click.echo(
        f"{len(result['forms'])} forms, {result['executions']} executions on {result['device'].get('gpu')}: {len(result['mismatching_forms'])} forms mismatch"
    )
    return 1 if result["mismatching_forms"] else 0


@silicon.group("approx")
def approx() -> None:
    """The .approx forms: the f32/f64 error scan and the bit-exact 16-bit tables."""


@approx.command("prepare")
@BUNDLE
@PTXAS
def approx_prepare(bundle: Path, ptxas: str) -> None:
    """Assemble the scan kernels and write the plan into BUNDLE (run it with approx_device.py run BUNDLE OUT)."""
    approx_campaign.prepare(bundle, ptxas)


@approx.command("tables")
@click.option("--write", is_flag=True, help="Write semantics/data/approx16-sm90.npz (else: check it).")
def approx_tables(write: bool) -> None:
    """Extract the 16-bit .approx tables from the integer-half-video-warp recording (or check the stored file)."""
    click.echo(approx_campaign.tables(write))


@approx.command("report")
@click.option("--write-docs", is_flag=True, help="Rewrite the table in docs/silicon-approx.rst.")
@click.option("--data", type=click.Path(path_type=Path, file_okay=False), default=DATA, help="The recording's folder.")
def approx_report(write_docs: bool, data: Path) -> None:
    """Recompute the kept extremes exactly and print the table of the .approx scan."""
    click.echo(approx_campaign.report(write_docs, data))


@silicon.group("exhaustive")
def exhaustive_group() -> None:
    """Every input of the small forms (binary16 arithmetic, cvt from .f32), as chunk digests."""


@exhaustive_group.command("prepare")
@BUNDLE
@click.option("--forms", "pattern", default=None, help="Only the forms matching this glob.")
@PTXAS
def exhaustive_prepare(bundle: Path, pattern: str | None, ptxas: str) -> None:
    """Assemble every form into BUNDLE (run it with exhaustive_device.py run BUNDLE OUT)."""
    exhaustive.prepare(bundle, pattern, ptxas)


exhaustive_group.add_command(exhaustive.exhaustive_check_command, "verify")


# ---------------------------------------------------------------------------------------------
# Every round at once, and a second chip's digests
# ---------------------------------------------------------------------------------------------

#: Every round of the whole campaign, in the order the device runs them: name -> (how it is
#: prepared here into BUNDLE/NAME, and its device script and arguments after ``run BUNDLE OUT``).
PARTS: dict[str, tuple[Callable[[Path], object], str, tuple[str, ...]]] = {
    float_cvt_campaign.NAME: (float_cvt_campaign.prepare, "scalar_device.py", (float_cvt_campaign.NAME,)),
    **{name: (functools.partial(catalogue_campaign.prepare, r), "scalar_device.py", (name,)) for name, r in catalogue_campaign.ROUNDS.items()},
    "exhaustive": (exhaustive.prepare, "exhaustive_device.py", ()),
    "approx": (approx_campaign.prepare, "approx_device.py", ()),
    **{name: (functools.partial(mma_campaign.prepare, r), "mma_device.py", (name,)) for name, r in mma_campaign.ROUNDS.items()},
    **{name: (functools.partial(wgmma_campaign.prepare, part=r.part), "wgmma_device.py", ()) for name, r in wgmma_campaign.ROUNDS.items()},
    "sass": (mma_campaign.prepare_sass, "sass_device.py", ()),
    "movement": (movement_campaign.prepare, "movement_device.py", ()),
    "atomic": (atomic_campaign.prepare, "atomic_device.py", ()),
    "memory": (memory_campaign.prepare, "memory_device.py", ()),
    **{name: (functools.partial(tma_campaign.prepare, round_name=name), "tma_device.py", (name,)) for name in tma_campaign.ROUNDS},
    "async": (async_campaign.prepare, "async_device.py", ()),
}


@silicon.group("all")
def all_rounds() -> None:
    """Every round of every campaign."""


@all_rounds.command("prepare")
@BUNDLE
def all_prepare(bundle: Path) -> None:
    """Every round into BUNDLE/ROUND, and BUNDLE/parts.json (scalar_device.py run-all BUNDLE OUT runs them)."""
    bundle.mkdir(parents=True, exist_ok=True)
    for name, (prepare, _, _) in PARTS.items():
        prepare(bundle / name)
    parts = [[name, script, "run", *args] for name, (_, script, args) in PARTS.items()]
    (bundle / "parts.json").write_text(json.dumps(parts, indent=1))
    click.echo(f"campaign prepared in {bundle}: {', '.join(PARTS)}")


@silicon.command("digest-arrays")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.argument("meta")
@click.argument("pattern")
def digest_arrays(directory: Path, meta: str, pattern: str) -> None:
    """A second chip's run of a round as digests: its meta, and the SHA-256 of every file and of
    every array of the files matching PATTERN (compared with the first chip's in the tests)."""
    click.echo(json.dumps(array_digests(directory, meta, pattern), indent=0, sort_keys=True))


# ---------------------------------------------------------------------------------------------
# Running it
# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run the command line; a bad input is one line on standard error and exit status 2."""
    try:
        status = silicon.main(args=argv, prog_name="python -m ptxspec.conformance.silicon", standalone_mode=False)
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.Abort:
        click.echo("aborted", err=True)
        return 1
    except PtxSpecError as error:
        click.echo(f"error: {error.one_line()}", err=True)
        return 2
    except OSError as error:
        where = error.filename or ""
        click.echo(f"error: {where}: {error.strerror or error}" if where else f"error: {error}", err=True)
        return 2
    return status if isinstance(status, int) else 0


if __name__ == "__main__":
    sys.exit(main())
