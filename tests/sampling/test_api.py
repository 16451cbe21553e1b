"""The public API of ``dpdash.sampling``: names, shapes, validation messages, and what it avoids."""

from __future__ import annotations

import ast
import importlib
import math
import pkgutil
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import dpdash.sampling as sampling
from dpdash.errors import DPDashError, ParameterError, ParameterTypeError
from dpdash.sampling import (
    bernoulli,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    uniform_integers,
)
from dpdash.sampling._params import to_fraction
from dpdash.sampling._threads import MIN_PARALLEL

PACKAGE_DIR = Path(sampling.__file__).parent
SAMPLERS = [
    lambda size: bernoulli(Fraction(1, 3), size),
    lambda size: bernoulli_exp(Fraction(1, 2), size),
    lambda size: discrete_laplace(10, size),
    lambda size: discrete_gaussian(3, size),
    lambda size: uniform_integers(1000, size),
]


def test_all_lists_exactly_the_public_names() -> None:
    public = {n for n in vars(sampling) if not n.startswith("_")}
    submodules = {m.name for m in pkgutil.iter_modules(sampling.__path__)}
    exported = set(sampling.__all__)
    # a sampler may share its module's name (``discrete_laplace`` in ``discrete_laplace.py``)
    assert exported == (public - submodules) | (exported & submodules)
    assert exported & submodules <= {n for n in exported if callable(getattr(sampling, n))}
    for name in sampling.__all__:
        assert hasattr(sampling, name)


def test_every_module_declares_all() -> None:
    for info in pkgutil.iter_modules(sampling.__path__):
        module = importlib.import_module(f"dpdash.sampling.{info.name}")
        if not info.name.startswith("_"):
            assert isinstance(module.__all__, list), info.name


@pytest.mark.parametrize("sample", SAMPLERS)
def test_shapes_and_dtype(sample) -> None:
    assert sample(0).shape == (0,)
    assert sample(7).shape == (7,)
    assert sample((2, 3)).shape == (2, 3)
    assert sample(()).shape == ()
    assert sample(5).dtype == np.int64


@pytest.mark.parametrize("sample", SAMPLERS[2:])
def test_two_draws_differ(sample) -> None:
    assert not np.array_equal(sample(1000), sample(1000))


def test_large_calls_split_across_threads_return_every_draw() -> None:
    x = discrete_laplace(10, MIN_PARALLEL + 3)
    assert x.shape == (MIN_PARALLEL + 3,)
    assert abs(x.mean()) < 0.5  # mean 0, standard error 0.04


def test_floats_are_taken_as_their_exact_binary_value() -> None:
    assert to_fraction(0.7, "scale", "") == Fraction(3152519739159347, 2**52)
    assert to_fraction(0.7, "scale", "") != Fraction(7, 10)
    assert to_fraction(np.float32(0.5), "scale", "") == Fraction(1, 2)
    assert to_fraction(np.int64(3), "scale", "") == 3
    assert to_fraction(Decimal("0.1"), "scale", "") == Fraction(1, 10)


BAD = [
    (
        lambda: discrete_laplace(-1),
        ParameterError,
        "scale must be a finite number > 0, got scale=-1",
    ),
    (lambda: discrete_laplace(0), ParameterError, "scale must be a finite number > 0, got scale=0"),
    (
        lambda: discrete_laplace(math.nan),
        ParameterError,
        "scale must be a finite number > 0, got scale=nan",
    ),
    (
        lambda: discrete_laplace(math.inf),
        ParameterError,
        "scale must be a finite number > 0, got scale=inf",
    ),
    (
        lambda: discrete_laplace(2**41),
        ParameterError,
        "scale must be a finite number > 0 and <= 2**40, got scale=2199023255552",
    ),
    (
        lambda: discrete_laplace("1"),
        ParameterTypeError,
        "scale must be a real number, got scale='1' (str)",
    ),
    (
        lambda: discrete_laplace(True),
        ParameterTypeError,
        "scale must be a real number, got scale=True (bool)",
    ),
    (
        lambda: discrete_laplace(1, -1),
        ParameterError,
        "size must be an integer >= 0 or a tuple of integers >= 0, got size=-1",
    ),
    (
        lambda: discrete_laplace(1, 2.5),
        ParameterTypeError,
        "size must be an integer >= 0 or a tuple of integers >= 0, got size=2.5 (float)",
    ),
    (
        lambda: discrete_gaussian(-2),
        ParameterError,
        "sigma must be a finite number > 0, got sigma=-2",
    ),
    (
        lambda: discrete_gaussian(sigma_squared=0),
        ParameterError,
        "sigma_squared must be a finite number > 0, got sigma_squared=0",
    ),
    (
        lambda: discrete_gaussian(),
        ParameterTypeError,
        "give exactly one of sigma and sigma_squared, got sigma=None, sigma_squared=None",
    ),
    (
        lambda: discrete_gaussian(1, sigma_squared=1),
        ParameterTypeError,
        "give exactly one of sigma",
    ),
    (lambda: bernoulli(1.5), ParameterError, "p must be a number in [0, 1], got p=1.5"),
    (lambda: bernoulli(-0.1), ParameterError, "p must be a number in [0, 1], got p=-0.1"),
    (lambda: bernoulli(math.nan), ParameterError, "p must be a number in [0, 1], got p=nan"),
    (lambda: bernoulli_exp(-1), ParameterError, "gamma must be a finite number >= 0, got gamma=-1"),
    (
        lambda: bernoulli_exp(math.inf),
        ParameterError,
        "gamma must be a finite number >= 0, got gamma=inf",
    ),
    (
        lambda: uniform_integers(0),
        ParameterError,
        "upper must be an integer in [1, 2**63], got upper=0",
    ),
    (
        lambda: uniform_integers(2**63 + 1),
        ParameterError,
        "upper must be an integer in [1, 2**63], got upper=9223372036854775809",
    ),
    (
        lambda: uniform_integers(2.0),
        ParameterTypeError,
        "upper must be an integer in [1, 2**63], got upper=2.0 (float)",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD)
def test_bad_parameters_are_refused_with_a_message(call, error, message) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value).startswith(message)
    assert isinstance(info.value, DPDashError)
    assert isinstance(info.value, ValueError if error is ParameterError else TypeError)


def test_a_short_bit_source_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="returned 1 bytes, expected 2"):
        discrete_laplace(10, 1, _bits=lambda n: b"\x00")


# --- what the release-grade code must not use ------------------------------------------------


def _sampling_modules() -> list[Path]:
    return sorted(PACKAGE_DIR.glob("*.py"))


@pytest.mark.parametrize("path", _sampling_modules(), ids=lambda p: p.name)
def test_no_numpy_or_python_generators(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            assert node.attr not in {"random", "default_rng", "Generator"}, (
                f"{path.name}: {node.attr}"
            )
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            assert not any(n == "random" or n.startswith("numpy.random") for n in names), path.name


@pytest.mark.parametrize(
    "path", [p for p in _sampling_modules() if p.name != "_params.py"], ids=lambda p: p.name
)
def test_no_floating_point_in_the_samplers(path: Path) -> None:
    # _params.py converts a caller's float exactly (Fraction(x)); nothing else may touch floats.
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            assert not isinstance(node.value, float), f"{path.name}: float literal {node.value}"
        if isinstance(node, ast.Name):
            assert node.id != "float", f"{path.name}: float()"
        if isinstance(node, ast.Attribute):
            forbidden = {"exp", "log", "sqrt", "float64", "float32", "expm1", "log1p"}
            assert node.attr not in forbidden, f"{path.name}: .{node.attr}"
