"""Post-processing of released values: the steps a release may apply after the noise (they cost no privacy),
how each is written and described, and applying them. ``release`` records the steps it applied;
``dpdash.published`` states the ± of the post-processed values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.queries import (
    GroupByMean,
    Mean,
    Query,
    SecondMoment,
    SelectionQuery,
    Variance,
)

__all__ = [
    "POSTPROCESSING",
    "apply_steps",
    "checked_steps",
    "describe_postprocessing",
    "parse_step",
    "postprocess_is_integer",
    "postprocess_values",
    "postprocessing_step",
]


#: Post-processing steps, by name, and what each does. Post-processing costs no privacy. A step with a
#: parameter is written ``"name:parameter"`` (``"round_decimals:2"``, ``"round_significant:3"``) and
#: recorded so. ``Release.accuracy`` is the ± of the published (post-processed) values, as
#: ``dpdash.published`` defines it (and the preview states it).
POSTPROCESSING: dict[str, str] = {
    "clamp_nonnegative": "every value v ↦ max(v, 0) (counts and sums of non-negative values)",
    "round": "every value rounded to the nearest integer (ties to even)",
    "round_decimals": "every value rounded to N decimal places (ties to even; N < 0 rounds to tens, "
    "hundreds, …); written round_decimals:N",
    "round_significant": "every value rounded to N significant digits (ties to even); written "
    "round_significant:N",
    "clamp_to_bounds": "a mean into [L, U]; a variance into [0, ((U − L)/2)²]",
    "project_psd": "a second-moment matrix to the nearest positive semidefinite one (eigenvalues < 0 → 0)",
}


#: Steps that take a parameter, with its allowed range (inclusive).
_PARAMETERS: dict[str, tuple[int, int]] = {"round_decimals": (-9, 12), "round_significant": (1, 15)}


def postprocessing_step(name: str, parameter: int | None = None) -> str:
    """The recorded form of a step: ``"round"``, ``"round_decimals:2"`` (validated)."""
    step = name if parameter is None else f"{name}:{parameter}"
    parse_step(step)
    return step


def describe_postprocessing(step: str) -> str:
    """One step in words, its parameter filled in: ``"round_decimals:2"`` → "every value rounded to 2
    decimal places (ties to even)"."""
    name, parameter = parse_step(step)
    if name == "round_decimals":
        if parameter is not None and parameter < 0:
            return f"every value rounded to the nearest multiple of {10 ** (-parameter):g} (ties to even)"
        return f"every value rounded to {parameter} decimal place{'s' * (parameter != 1)} (ties to even)"
    if name == "round_significant":
        return f"every value rounded to {parameter} significant digit{'s' * (parameter != 1)} (ties to even)"
    return POSTPROCESSING[name]


def parse_step(step: object) -> tuple[str, int | None]:
    if not isinstance(step, str):
        raise ParameterTypeError(f"a postprocess step must be a string, got {step!r}")
    name, _, text = step.partition(":")
    if name not in POSTPROCESSING:
        raise ParameterError(f"postprocess steps must be among {sorted(POSTPROCESSING)}, got {step!r}")
    if name not in _PARAMETERS:
        if text:
            raise ParameterError(f"postprocess step {name!r} takes no parameter, got {step!r}")
        return name, None
    low, high = _PARAMETERS[name]
    try:
        parameter = int(text)
    except ValueError:
        parameter = None
    if parameter is None or str(parameter) != text.strip() or not low <= parameter <= high:
        raise ParameterError(
            f"postprocess step {name!r} needs an integer N from {low} to {high}, written '{name}:N', "
            f"got {step!r}"
        )
    return name, parameter


def checked_steps(steps: Sequence[str], query: Query) -> list[str]:
    if isinstance(steps, str):
        steps = [steps]
    out = []
    for step in steps:
        name, _ = parse_step(step)
        if isinstance(query, SelectionQuery):
            raise ParameterError(
                f"a selection ({query.name}) has no numeric values to post-process, got {step!r}"
            )
        if name == "clamp_to_bounds" and not isinstance(query, Mean | Variance | GroupByMean):
            raise ParameterError(f"clamp_to_bounds applies to means and variances, not to {query.name}")
        if name == "project_psd" and not isinstance(query, SecondMoment):
            raise ParameterError(f"project_psd applies to a SecondMoment, not to {query.name}")
        out.append(step)
    return out


def postprocess_values(steps: Sequence[str], query: Query, values: Any) -> np.ndarray:
    """The post-processing ``steps`` applied, in order, to released values of ``query``: a vector of
    its k values, or an array (..., k) of many possible releases (the preview's simulation uses the
    same function as ``release``). Returns floats; see ``postprocess_is_integer``."""
    checked = checked_steps(steps, query)
    out = np.array(values, dtype=float)
    for step in checked:
        name, parameter = parse_step(step)
        if name == "clamp_nonnegative":
            out = np.maximum(out, 0.0)
        elif name == "round":
            out = np.rint(out)
        elif name == "round_decimals":
            out = _round_decimals(out, np.full(out.shape, parameter))
        elif name == "round_significant":
            assert parameter is not None
            with np.errstate(divide="ignore"):
                magnitude = np.floor(np.log10(np.abs(out)))
            magnitude = np.where(np.isfinite(magnitude), magnitude, 0.0)
            out = _round_decimals(out, (parameter - 1 - magnitude).astype(int))
        elif name == "clamp_to_bounds":
            bounds = query.bounds  # type: ignore[attr-defined]
            if isinstance(query, Variance):
                out = np.clip(out, 0.0, bounds.half_width**2)
            else:
                out = np.clip(out, bounds.lower, bounds.upper)
        elif name == "project_psd":
            assert isinstance(query, SecondMoment)
            flat = out.reshape(-1, out.shape[-1])
            iu = np.triu_indices(query.size)
            for row in range(flat.shape[0]):
                eigenvalues, vectors = np.linalg.eigh(query.matrix(flat[row]))
                projected = (vectors * np.maximum(eigenvalues, 0.0)) @ vectors.T
                flat[row] = ((projected + projected.T) / 2.0)[iu]
            out = flat.reshape(out.shape)
    return out


def _round_decimals(values: np.ndarray, decimals: np.ndarray) -> np.ndarray:
    """Each value rounded to its number of decimals (negative: tens, hundreds, …), ties to even. The
    scaling multiplies or divides by an exact power of ten, so the result is the double nearest the
    rounded decimal (26.75780335979852 → 26.76)."""
    scale = np.power(10.0, np.abs(decimals))
    with np.errstate(over="ignore", invalid="ignore"):
        up = np.rint(values * scale) / scale
        down = np.rint(values / scale) * scale
    out = np.where(decimals >= 0, up, down)
    return np.where(np.isfinite(out), out, values)  # huge values: nothing to round at that precision


def postprocess_is_integer(steps: Sequence[str], noisy_integer: bool) -> bool:
    """Whether the post-processed values are integers: integer noisy values stay integers under every
    step but clamp_to_bounds and project_psd; ``round`` and ``round_decimals:N`` with N ≤ 0 make them so."""
    integer = noisy_integer
    for step in steps:
        name, parameter = parse_step(step)
        if name == "round" or (name == "round_decimals" and parameter is not None and parameter <= 0):
            integer = True
        elif name in ("clamp_to_bounds", "project_psd"):
            integer = False
    return integer


def apply_steps(steps: Sequence[str], query: Query, values: Sequence[Any]) -> tuple[Any, ...]:
    out = postprocess_values(steps, query, values)
    if postprocess_is_integer(steps, np.asarray(values).dtype.kind in "iu"):
        return tuple(int(v) for v in out)
    return tuple(float(v) for v in out)
