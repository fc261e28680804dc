"""The record of a profile: every choice a chip makes where the PTX manual leaves a result open, or
where the chip was measured to depart from the manual -- one typed field per choice.

Each field's default is the manual's answer: no choice (the spec-level allowed set) or the manual's
own rule. :data:`ptxspec.profiles.spec.SPEC` is the record with every field at its default. A
chip's package (:mod:`ptxspec.profiles.sm_90`) sets the fields it measured and names, in
:attr:`Profile.evidence`, the recordings under ``conformance/data/`` that pin each one.

The semantic functions cite the manual, then read the chip's choice from the profile they are
given (``profile.integer_division_by_zero``, ``profile.mma_datapaths[key]``, ...); no semantic
module keeps a table keyed by a profile's name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from ptxspec.spec.types import FloatFormat, NanEncoding
from ptxspec.semantics.numerics import canonical_nan, fmt_of
from ptxspec.semantics.results import AnyNaN, OneOf, Result

if TYPE_CHECKING:  # types of values the chips' packages fill in (they live in the semantics)
    import numpy as np

    from ptxspec.semantics.floating_point_approx import Real
    from ptxspec.semantics.mma import Datapath
    from ptxspec.semantics.numerics import NaN
    from ptxspec.spec.catalogue import Form
    from ptxspec.spec.types import IntegerType


def _rounding_name(rounding: Any) -> str | None:
    """A rounding modifier's name ("rn", "rz", ...), from its name or a Rounding."""
    return None if rounding is None else getattr(rounding, "value", rounding)


@attrs.frozen
class MatrixKey:
    """The one key of the matrix datapath tables (:attr:`Profile.mma_datapaths`,
    :attr:`Profile.wgmma_datapaths`, :attr:`Profile.tcgen05_datapaths`): the A, B, C and D types and what else the datapath was
    measured for. ``shape`` is the ``.mMnNkK`` it was measured on (None: every shape, as for wgmma,
    whose K the types fix and whose datapath the recording shows the same for every N; for
    tcgen05.mma ``"k<K>"``, the instruction's K, M and N changing no element's dot product);
    ``rounding`` the ``.f64`` rounding modifier (None for the other types); ``sparse`` whether it is
    the datapath of the ``.sp`` form (the K/2 products of the stored elements); ``kind`` the
    ``.kind`` of tcgen05.mma (``"f16"``, ``"tf32"``, ``"f8f6f4"``, ``"mxf8f6f4"``, ``"mxf4"``,
    ``"mxf4nvf4"``; None for mma and wgmma), which the types alone do not fix: e2m1 x e2m1 is
    ``.kind::f8f6f4``, ``.kind::mxf8f6f4``, ``.kind::mxf4`` or ``.kind::mxf4nvf4``."""

    atype: str
    btype: str
    ctype: str
    dtype: str
    shape: str | None = None
    rounding: str | None = attrs.field(default=None, converter=_rounding_name)
    sparse: bool = False
    kind: str | None = None

    @property
    def types(self) -> tuple[str, str, str, str]:
        """(A, B, C, D) types."""
        return (self.atype, self.btype, self.ctype, self.dtype)

    def parts(self) -> tuple[str, ...]:
        """The key as words: the kind where set, the four types, the rounding modifier and the
        shape where set, and ``"sp"`` for a sparse form (``"-".join(key.parts())`` names it)."""
        return (
            ((self.kind,) if self.kind is not None else ())
            + self.types
            + tuple(x for x in (self.rounding, self.shape) if x is not None)
            + (("sp",) if self.sparse else ())
        )


def _known_fields(instance: Profile, _attribute: attrs.Attribute, value: dict[str, tuple[str, ...]]) -> None:
    names = {a.name for a in attrs.fields(Profile)}
    unknown = sorted(set(value) - names)
    if unknown:
        raise ValueError(f"profile {instance.name!r}: evidence for fields that do not exist: {', '.join(unknown)}")


@attrs.frozen
class Profile:
    """Which of the manual's open choices an implementation makes, and where it departs from the
    manual. Fields are grouped by the manual's sections; each says what its value means and what
    the default (the manual) is."""

    #: The profile's name, as ``--profile`` and :func:`ptxspec.profiles.profile_named` take it.
    name: str
    #: One line for help texts: what implementation this is and where its choices come from.
    description: str = ""
    #: Per field name set here, the recordings that pin it (files under ``conformance/data/``,
    #: replayed by the test suite). Every field a chip sets is backed by an entry.
    evidence: dict[str, tuple[str, ...]] = attrs.field(factory=dict, validator=_known_fields)

    # --- §9.7.3 (and §9.7.4) NaN results -----------------------------------------------------

    #: §9.7.3 "single-precision instructions return an unspecified NaN" (and §9.7.4 for f16,
    #: bf16): True when that NaN is the canonical NaN; False (the manual): any NaN.
    canonical_nan: bool = False
    #: §9.7.3 "double-precision instructions support NaN payloads": how f64 picks its NaN result.
    #: "any" (the manual): one of the quieted input NaNs, or any NaN for an invalid operation.
    #: "ordered": the quieted NaN operand that :attr:`nan_operand_priority` ranks first, and
    #: :attr:`default_nan` for an invalid operation.
    payload_nan_rule: str = attrs.field(default="any", validator=attrs.validators.in_(("any", "ordered")))
    #: Per opcode, the operand positions (0 = a) in the order the chip prefers their NaNs when
    #: several operands are NaN. Opcodes not listed prefer the last operand first.
    nan_operand_priority: dict[str, tuple[int, ...]] = attrs.field(factory=dict)
    #: Per format, the NaN an invalid operation (inf - inf, 0 * inf, sqrt(-1)) returns.
    default_nan: dict[str, int] = attrs.field(factory=dict)

    # --- §9.7.13.5-6 atom and red -------------------------------------------------------------

    #: Per (state space, type) of a floating-point ``atom``/``red`` ``.add`` with a NaN operand: the
    #: operand positions (0 = the value in memory, 1 = the operand b) in the order the atomic takes
    #: their NaNs, and whether it quiets a signalling one. Not listed (the manual, which gives an
    #: atomic no NaN rule of its own): as the ``add`` of §9.7.3 under this profile.
    atomic_add_nan: dict[tuple[str, str], tuple[tuple[int, ...], bool]] = attrs.field(factory=dict)

    # --- §9.7.9.25.4.2 cp.reduce.async.bulk ----------------------------------------------------

    #: Per type, the instruction that computes a bulk reduction's ``.add`` where the chip departs
    #: from the manual's (``semantics.atomics.BULK_FLOAT_REDUCTIONS``: .f32 flushes subnormals). Its NaN
    #: rule, where pinned, is :attr:`atomic_add_nan`'s ``("bulk", type)`` entry (0 = the value in
    #: the destination, 1 = the source element).
    bulk_reduce_add: dict[str, str] = attrs.field(factory=dict)

    # --- §9.7.9.25.5 tensor copies -------------------------------------------------------------

    #: Whether a shared-to-global tensor copy whose bounding box starts below the tensor (a
    #: negative coordinate) faults on the chip ("illegal instruction") instead of writing the
    #: in-bound elements as §5.5.3.3 describes. False (the manual): it writes them.
    tensor_store_below_bounds_faults: bool = False
    #: Where a shared-to-global tensor copy writes dimension 0 beyond the tensor: up to its row's
    #: bytes rounded up to this many (the chip checks that bound a chunk at a time). None (the
    #: manual): "elements ... outside the tensor are not written".
    tensor_store_row_granule: int | None = None
    #: The OOB-NaN a tensor copy with ``NaN_REQUEST_ZERO_FMA`` fill writes (§5.5.3.3: "a special
    #: NaN called OOB-NaN"), per element format. Not listed (the manual): any NaN of the format.
    tensor_oob_nan: dict[str, int] = attrs.field(factory=dict)
    #: Whether a tile-mode copy through an interleaved (16B/32B) map is evaluated as this chip reads
    #: the map (:func:`ptxspec.semantics.tensor_map.interleaved_box`: dimension 0 in interleave-sized
    #: slices, dimension rank-2 not stepped). False (the manual, which gives no element address for
    #: the interleaved layouts of §5.5.6): such copies are not modelled.
    tensor_interleaved_slices: bool = False

    # --- §9.7.9.18 createpolicy ----------------------------------------------------------------

    #: How the chip encodes the "opaque 64-bit" policy of ``createpolicy.fractional``:
    #: ``(primary, secondary, fraction bits) -> policy`` (the priorities as written,
    #: ``"L2::evict_last"``; the fraction an f32 in (0, 1]). None (the manual): any 64 bits.
    createpolicy_fractional: Callable[[str, str, int], int] | None = None

    # --- §9.7.1-2 integer arithmetic ---------------------------------------------------------

    #: §9.7.1.8 div and §9.7.1.9 rem by zero ("an unspecified, machine-specific value"): the value
    #: written, per type. None (the manual): any value of the type.
    integer_division_by_zero: Callable[[IntegerType], int] | None = None
    #: §9.7.1.9 rem of negative operands ("machine-dependent"): True when the remainder takes the
    #: sign of the dividend (division rounds toward zero), False toward minus infinity. None (the
    #: manual): either.
    integer_remainder_toward_zero: bool | None = None
    #: §9.7.1.17 fns with base > 31 ("behavior is undefined"): the value written. None: any.
    fns_base_beyond_31: int | None = None
    #: Departure from §9.7.1.17: fns with offset = -2^31 writes this instead of the manual's result.
    fns_most_negative_offset: int | None = None
    #: Departure from §9.7.1.19-20 (bfe, bfi: "pos = b & 0xff; len = c & 0xff"): per type width,
    #: the mask the chip applies to the position and length operands. A width not listed: 0xff.
    bit_field_operand_mask: dict[int, int] = attrs.field(factory=dict)
    #: Departure from §9.7.2: sub.cc and subc write CC.CF = 1 - borrow (the carry of a + ~b + 1)
    #: and subc reads its borrow-in as 1 - CC.CF. False (the manual): CC.CF holds the borrow.
    carry_flag_holds_not_borrow: bool = False

    # --- §9.7.3.18-19 sin.approx, cos.approx ------------------------------------------------

    #: Per opcode ("sin", "cos"), the absolute error the chip reaches on [-2 pi, 2 pi] where it
    #: exceeds the manual's 2^-20.5 (a departure). An opcode not listed: the manual's bound.
    sin_cos_near_bound: dict[str, Real] = attrs.field(factory=dict)

    # --- §9.7.4 half precision ---------------------------------------------------------------

    #: §9.7.4.4 fma.oob: the manual gives the OOB-NaN no encoding. (encodings, operand positions):
    #: the NaN encodings the chip reads as OOB-NaN and the operands (0 = a) where it looks for
    #: them. None (the manual): every NaN operand may or may not be the OOB-NaN.
    fma_oob_nan: tuple[frozenset[int], tuple[int, ...]] | None = None
    #: §9.7.4.9 tanh.approx and §9.7.4.10 ex2.approx on 16-bit inputs: the data file (in
    #: ``semantics/data/``, the package data of ``ptxspec.semantics``) holding the chip's result
    #: for every input, as uint16 arrays keyed ``tanh.f16``, ``tanh.bf16``, ``ex2.f16``,
    #: ``ex2.ftz.bf16``. None (the manual): every encoding within the error bound.
    approx16_tables: str | None = None
    #: §9.7.4.9: per format, how far the chip's tanh.approx strays where it exceeds the manual's
    #: absolute error (a departure; the tables above are the results, this the bound they keep).
    tanh_absolute: dict[str, Real] = attrs.field(factory=dict)
    #: Per table key, the inputs whose recorded result lies outside the manual's set: the
    #: documented departures of :attr:`approx16_tables` (a test recomputes them from the tables).
    approx16_outside_bound: dict[str, frozenset[int]] = attrs.field(factory=dict)

    # --- §9.7.9.21 cvt -----------------------------------------------------------------------

    #: The NaN a conversion writes where the manual leaves it open: ``(form, source format,
    #: destination format, the decoded NaN, its bits) -> bits``. None (the manual): any NaN of the
    #: destination (the profile's :meth:`unspecified_nan`).
    cvt_nan: Callable[[Form, FloatFormat, FloatFormat, NaN, int], int] | None = None
    #: :attr:`cvt_nan` for an ``.f32`` source over a batch of inputs (``(form, destination format,
    #: uint32 array) -> bits or array of bits``), for the numpy paths of
    #: :mod:`ptxspec.semantics.batch`; set whenever :attr:`cvt_nan` is and :attr:`batch_paths`.
    cvt_nan_from_f32_batch: Callable[[Form, FloatFormat, np.ndarray], int | np.ndarray] | None = None
    #: Departure from "in float-to-integer conversions, NaN inputs are converted to 0": the
    #: integer written, per form. None (the manual): 0.
    cvt_integer_nan: Callable[[Form], int] | None = None
    #: Departure from ``.ftz`` ("subnormal inputs ... flushed"): whether the form's .ftz flushes a
    #: subnormal .f32 input. None (the manual): always.
    cvt_ftz_flushes_input: Callable[[Form], bool] | None = None

    # --- §9.7.14.5.14 mma, §9.7.15.5 wgmma: "accumulation order, rounding ... unspecified" ----

    #: The datapath (:class:`ptxspec.semantics.mma.Datapath`) of ``mma``/``mma.sp`` per
    #: :class:`MatrixKey` (types, shape measured, .f64 rounding, sparse). A combination not listed
    #: gets the manual's allowed sets.
    mma_datapaths: dict[MatrixKey, Datapath] = attrs.field(factory=dict)
    #: The datapath of ``wgmma.mma_async{.sp}`` per :class:`MatrixKey` (shape None: every shape).
    wgmma_datapaths: dict[MatrixKey, Datapath] = attrs.field(factory=dict)
    #: The datapath of ``tcgen05.mma`` (§9.7.16.10.9) per :class:`MatrixKey` with its ``kind`` set
    #: (shape None: every shape of the kind). For the block-scaled kinds (``mxf8f6f4``, ``mxf4``,
    #: ``mxf4nvf4``) the datapath takes the scale factors too (:func:`ptxspec.semantics.mma.datapath_dot`'s
    #: ``scales``); one datapath serves every scale type and vector size of the kind. A
    #: combination not listed gets the spec-level sets.
    tcgen05_datapaths: dict[MatrixKey, Datapath] = attrs.field(factory=dict)
    #: §9.7.15.5.2 scale-d false ("D = A*B"): the zero C that stands in for D, "-0" (the identity
    #: of IEEE addition: the manual's reading) or "+0".
    wgmma_scale_d_false_c: str = attrs.field(default="-0", validator=attrs.validators.in_(("-0", "+0")))

    # --- §9.7.18 video -----------------------------------------------------------------------

    #: Departure from §9.7.18.1's pseudo-code for vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr,
    #: vset: ``(form, exact result of the operation, c or None) -> d``. None: the manual.
    scalar_video: Callable[[Form, int, int | None], int] | None = None
    #: Departure from §9.7.18.1.3 (vmad): ``(form, a, b, c) -> d``. None: the manual.
    vmad: Callable[[Form, int, int, int], int] | None = None
    #: :attr:`scalar_video` over a batch (``(form, int64 array of exact results, int64 array of c
    #: or None, key) -> int64 array``), for the numpy paths of :mod:`ptxspec.semantics.batch_video`;
    #: set whenever :attr:`scalar_video` is and :attr:`batch_paths` (``key`` maps an unsaturated
    #: vshl's wrapped result to a stand-in that compares as the exact one).
    scalar_video_batch: Callable[..., np.ndarray] | None = None
    #: :attr:`vmad` over a batch (``(form, a, b, c) -> int64 array``): the twin of :attr:`vmad`.
    vmad_batch: Callable[..., np.ndarray] | None = None

    # --- Not a choice of the chip: what the implementation has proved for this profile ------

    #: Whether the numpy paths of :mod:`ptxspec.semantics.batch` may serve this profile: they read
    #: its choices from the fields above, and tests/test_batch_exhaustive.py proves them against
    #: the scalar semantics under it. A new profile starts False: the scalar semantics serve it.
    batch_paths: bool = False

    def choices(self) -> tuple[str, ...]:
        """The names of the fields this profile sets away from the manual's default."""
        defaults = Profile(self.name)
        skip = {"name", "description", "evidence", "batch_paths"}
        return tuple(a.name for a in attrs.fields(Profile) if a.name not in skip and getattr(self, a.name) != getattr(defaults, a.name))

    def unspecified_nan(self, fmt: FloatFormat | str) -> Result:
        """The result where the manual says only "a NaN" (an unspecified NaN)."""
        fmt = fmt_of(fmt)
        if self.canonical_nan and fmt.nan is not NanEncoding.NONE:
            return canonical_nan(fmt)
        return AnyNaN(fmt)

    def payload_nan(self, fmt: FloatFormat | str, operands: list[int | None], opcode: str | None = None) -> Result:
        """The NaN result of a format that supports NaN payloads (f64).

        ``operands`` holds, in operand order, each NaN operand made quiet and None for the others.
        """
        fmt = fmt_of(fmt)
        nans = [q for q in operands if q is not None]
        if self.payload_nan_rule == "ordered":
            if not nans:
                return self.default_nan.get(fmt.name, canonical_nan(fmt))
            priority = self.nan_operand_priority.get(opcode or "", tuple(reversed(range(len(operands)))))
            return next(q for i in priority if i < len(operands) and (q := operands[i]) is not None)
        if not nans:
            return AnyNaN(fmt)
        members = frozenset(nans)
        return next(iter(members)) if len(members) == 1 else OneOf(members, fmt.width)


__all__ = ["MatrixKey", "Profile"]
