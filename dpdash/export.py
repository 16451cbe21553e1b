"""Exports of a release a person may publish: CSV, the JSON record, and a script that reproduces it.

None of them contains a true value. Text cells that a spreadsheet would execute as a formula (starting
with = + - @, or a tab or carriage return) are escaped with a leading apostrophe (OWASP's advice on CSV
injection); numbers are written as numbers.

The script (``release_script``) never releases outside the ledger: it reads the table's file as the app
reads it, refuses any table whose identity is not the dataset's, re-applies the app's type changes, and
releases only by spending from the same dataset's budget in the ledger, all or nothing. Its ``--preview``
runs ``simulate_release``: numpy draws that spend nothing and are not a release.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import pprint
import shlex
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.key_release import key_accuracy, key_preview
from dpdash.mechanisms import DiscreteGaussian, Gaussian, RandomizedResponse
from dpdash.published import Accuracy, numeric_accuracy, selection_accuracy
from dpdash.queries import CompositeQuery, KeyCounts, Query, SelectionQuery
from dpdash.release import (
    MECHANISMS,
    OPTIONS,
    Release,
    calibrate,
    check_options,
    mechanism_class,
    postprocess_is_integer,
    postprocess_values,
)
from dpdash.rounding import published_figures
from dpdash.table_origin import TableOrigin

__all__ = ["SimulatedRelease", "escape_cell", "release_csv", "release_script", "simulate_release"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(value: object) -> object:
    """A text cell that starts like a formula gets a leading ``'``; numbers and other text pass."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def release_csv(release: Release) -> str:
    """label, released value, ± each value (with its confidence), and with several values the ± for
    all of them at once: one row per released value, the ± the release states (``dpdash.published``)
    in the values' units, its meaning in the header. Values and ± are written as shown
    (``dpdash.rounding.published_figures``: each value to what its ± supports, the ± to two significant
    digits); the JSON record keeps the full values."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    accuracy = release.accuracy
    shown = published_figures(release)
    header = ["label", "released value", accuracy.column_label]
    if shown.joint_half_width is not None:
        header.append(
            f"± all {len(release.values)} values at once ({accuracy.confidence * 100:.4g}% confidence)"
        )
    writer.writerow(header)
    rows = zip(release.labels, shown.values, shown.texts, shown.half_width_texts, strict=False)
    for label, value, text, width in rows:
        cell = text if isinstance(value, numbers.Number) else escape_cell(str(value))
        joint = [shown.joint_text] if shown.joint_half_width is not None else []
        writer.writerow([escape_cell(str(label)), cell, width, *joint])
    return buffer.getvalue()


class _NonFinite:
    """A non-finite float, written as the call ``float('nan')`` (``nan`` alone is not a Python literal)."""

    __slots__ = ("text",)

    def __init__(self, value: float) -> None:
        self.text = f"float({str(value)!r})"

    def __repr__(self) -> str:
        return self.text


def _inert(value: object, name: str) -> object:
    """``value`` rebuilt from exact builtin types (str, int, float, bool, None, list, dict with str keys),
    whose ``repr`` is a literal that runs nothing; other objects are refused (a subclass could override
    ``__repr__``)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, numbers.Integral):
        return int.__int__(int(value))  # an exact int, whatever the class's __int__ returned
    if isinstance(value, numbers.Real):
        x = float.__float__(float(value))
        return x if math.isfinite(x) else _NonFinite(x)
    if isinstance(value, list | tuple):
        return [_inert(v, name) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {str.__str__(k): _inert(v, name) for k, v in value.items()}
    raise ParameterTypeError(
        f"{name} must hold only strings, numbers, None, lists and dicts with string keys to be written "
        f"into a script, got {value!r} of type {type(value).__name__}"
    )


def literal(value: object, name: str) -> str:
    """Python source for ``value``: an inert literal (see ``_inert``), laid out by ``pprint``."""
    return pprint.pformat(_inert(value, name), width=100)


# The script's code after its constants. It holds no user text at all: everything that comes from the
# release or the caller is in the constants block, written by ``literal`` only.
_SCRIPT_DOC = '''"""Reproduce a dpdash release (RELEASE says which): the same query on the same table,
with the same type changes, public facts, mechanism, epsilon, delta, confidence and post-processing, and
new noise.

    python reproduce_release.py TABLE_FILE [--ledger LEDGER] [--preview]

with a Python that has dpdash installed (the command RUN names the one that made it), or
``dpdash reproduce reproduce_release.py TABLE_FILE``.

TABLE_FILE is the file the table was loaded from (CSV, TSV, Parquet or Excel), read as the app reads it.
Its identity (dpdash.ledger.fingerprint of the table as read, before the type changes) must be the
dataset's, IDENTITY: any other table is refused.

A run is a real release. It spends from the dataset's budget in the ledger the release was spent from,
LEDGER (or --ledger: a file, or a postgresql:// URL with its credentials), all or nothing, and prints the
released values only after the spend is recorded. A ledger that is not there is refused. If the budget
is short, nothing is recorded, nothing is printed as released, and the exit code is 1. With --preview it
only simulates: numpy draws, no budget spent, and the numbers it prints are not a release
and must not be published.
"""

from __future__ import annotations

import argparse
import sys

from dpdash.errors import DPDashError
from dpdash.reproduce import Reproduction
'''

# The code after a script's constants, around the parts each kind of script fills in (``script_body``).
_SCRIPT_MAIN = '''
REPRODUCTION = {cls}(
{fields}
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description={description}
    )
    parser.add_argument("table", help="the file the table was loaded from (CSV, TSV, Parquet or Excel)")
{options}
    args = parser.parse_args(argv)
    try:
        table = REPRODUCTION.load(args.table)
{run}
    except DPDashError as error:
        print(f"Not released, nothing was spent: {{error}}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def script_body(cls: str, names: Sequence[str], *, description: str, options: str, run: str) -> str:
    """The fixed code after a script's constants: ``REPRODUCTION``, the ``cls`` of ``dpdash.reproduce``
    built from the constants ``names`` but ``RUN`` (each the keyword of its name in lower case), and
    ``main``, whose parser has the ``description`` (the code of a string) and, after the table's file,
    the statements ``options``; it loads and checks the table, runs the statements ``run`` on it, and
    prints a refusal on stderr with exit code 1. Every part is fixed code, with no user text in it."""
    keywords = ", ".join(f"{name.lower()}={name}" for name in names if name != "RUN") + ","
    fields = textwrap.fill(keywords, width=106, initial_indent="    ", subsequent_indent="    ")
    return _SCRIPT_MAIN.format(cls=cls, fields=fields, description=description,
                               options=textwrap.indent(options, "    "), run=textwrap.indent(run, " " * 8))


#: The constants every script defines, in order (tests compare them with the release's).
SCRIPT_CONSTANTS = (
    "RELEASE", "RUN", "LEDGER", "TABLE_NAME", "IDENTITY", "FINGERPRINT", "COERCIONS", "LOSSY", "QUERY",
    "MECHANISM", "OPTIONS", "EPSILON", "DELTA", "CONFIDENCE", "POSTPROCESS",
)  # fmt: skip

_SCRIPT_BODY = script_body(
    "Reproduction",
    SCRIPT_CONSTANTS,
    description='''"Reproduce a dpdash release on its table, spending from the dataset's budget in the "
        "ledger (see the docstring at the top of this file)."''',
    options='''parser.add_argument("--ledger", help=f"the ledger (default: the release's own, {LEDGER})")
parser.add_argument("--preview", action="store_true", help="simulate only: no release, no budget spent")''',
    run='''if args.preview:
    REPRODUCTION.preview(table)
else:
    REPRODUCTION.spend(table, args.ledger or LEDGER, session="reproduce_release.py")''',
)


def _mechanism_name(release: Release) -> str:
    """The ``MECHANISMS`` key of the release's mechanism class (what ``release()`` takes by name)."""
    for name, cls in MECHANISMS.items():
        if cls.__name__ == release.mechanism:
            return name
    raise ParameterError(
        f"the release's mechanism must be one of {sorted(c.__name__ for c in MECHANISMS.values())}, "
        f"got {release.mechanism!r}"
    )


def script_text(
    doc: str,
    body: str,
    names: Sequence[str],
    values: Mapping[str, object],
    *,
    origin: TableOrigin,
    python: str,
    script: str,
) -> str:
    """A script: the comment line that says how to run it (``RUN``: ``python script TABLE_FILE``, see
    ``TableOrigin.table_file``), the fixed ``doc``, the constants ``names`` in that order as inert
    literals (``literal``) of ``values`` and ``RUN``, and the fixed ``body``."""
    values = {**values, "RUN": shlex.join([str(python), script, origin.table_file])}
    constants = "\n".join(f"{name} = {literal(values[name], name.lower())}" for name in names)
    run = "".join(ch if ch.isprintable() else "?" for ch in str(values["RUN"]))  # one comment line, inert
    return f"# Run it with: {run}\n{doc}\n{constants}\n{body}"


def reproduction_values(release: Release, *, origin: TableOrigin = TableOrigin()) -> dict[str, object]:
    """What a reproduction of ``release`` needs, checked, as plain data: the ``SCRIPT_CONSTANTS`` but
    ``RUN``, in that order (the keyword arguments of ``dpdash.reproduce.Reproduction``, upper-cased).
    The script and the notebook both write them (``release_script`` says what each argument is).

    Raises:
        ParameterError, ParameterTypeError: as ``release_script`` says.
    """
    if not release.dataset_identity:
        raise ParameterError(
            "the release must state its dataset_identity (the ledger key of its table) to be reproduced "
            "through the ledger; this record has none"
        )
    budget = f"ε = {release.epsilon:g}" + (f", δ = {release.delta:g}" if release.delta else "")
    mechanism = _mechanism_name(release)
    allowed = OPTIONS.get(MECHANISMS[mechanism], ())
    first = release.pieces[0].parameters if release.pieces else {}
    return {
        "RELEASE": f"{release.query_name} with {release.mechanism}, {budget}",
        **origin.values(release.dataset_identity, release.dataset_fingerprint),
        "QUERY": release.query,
        "MECHANISM": mechanism,
        "OPTIONS": {name: first[name] for name in allowed if name in first},
        "EPSILON": release.epsilon,
        "DELTA": release.delta or None,
        "CONFIDENCE": release.accuracy.confidence,
        "POSTPROCESS": list(release.postprocessing),
    }


def release_script(release: Release, *, origin: TableOrigin = TableOrigin(), python: str = "python") -> str:
    """A Python script that makes the same release again, and only through the ledger.

    ``python reproduce_release.py TABLE_FILE [--ledger LEDGER] [--preview]`` reads the file with
    ``dpdash.loading.load_table``, refuses it unless its identity (``dpdash.ledger.fingerprint``,
    before any type change) is the release's ``dataset_identity``, re-applies ``origin.coercions`` (the
    app's type changes, in order, with ``drop_invalid=origin.lossy``), checks that the result is the exact
    table the release states (``dataset_fingerprint``), and releases the same query (its public facts are
    in ``release.query``) with the same mechanism, ε, δ, confidence and post-processing, spending from the
    dataset's budget in the ledger (``--ledger``, else ``origin.ledger``, the one the release was spent
    from) in one transaction: if it does not fit, nothing is recorded or printed and the exit code is 1.
    ``--preview`` prints simulated values (``simulate_release``), labelled as such, and spends nothing.

    Every value taken from the release or the caller (query, column names, categories, the table's name,
    fingerprints, post-processing) is a ``repr`` literal of a builtin type in the constants block; the
    code around it is fixed text, so no name can end a string and run code. No true value is written.

    Args:
        release: the release to reproduce (it must state its ``dataset_identity``).
        origin: the table's type changes (``coercions``, ``lossy``), its name in the app and the ledger
            the release was spent from (``dpdash.table_origin.TableOrigin``; the script's ``--ledger``
            defaults to that ledger).
        python: the Python the script's ``RUN`` command names (the app gives its own, ``sys.executable``).

    Raises:
        ParameterError: a release without a dataset identity, or with a mechanism ``release()`` does not
            know.
        ParameterTypeError: a part of the release that is not plain data (see ``Release.to_dict``).
    """
    values = reproduction_values(release, origin=origin)
    return script_text(_SCRIPT_DOC, _SCRIPT_BODY, SCRIPT_CONSTANTS, values, origin=origin, python=python,
                       script="reproduce_release.py")  # fmt: skip


# ---- the script's --preview ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SimulatedRelease:
    """What a release could look like: numpy draws from the mechanism's noise law, for previews only.

    Not a release: nothing was spent and the draws are not release-grade, so these values must never be
    published. ``accuracy`` is the ± a real release with these values would state (``dpdash.published``,
    the same function), ``half_widths`` and ``definition`` its parts; ``postprocessing`` and ``spec``
    the steps applied and the query (``dpdash.rounding.published_figures`` reads them).
    """

    labels: tuple[str, ...]
    values: tuple[Any, ...]
    accuracy: Accuracy
    postprocessing: tuple[str, ...] = ()
    spec: Query | None = None

    @property
    def half_widths(self) -> tuple[float, ...]:
        return self.accuracy.half_widths

    @property
    def definition(self) -> str:
        return self.accuracy.definition


def simulate_release(
    query: Query,
    mechanism: type | str,
    df: pd.DataFrame,
    *,
    epsilon: float,
    delta: float | None = None,
    confidence: float = 0.95,
    postprocess: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
    rng: np.random.Generator | int | None = None,
) -> SimulatedRelease:
    """One possible release of ``query`` on ``df``, calibrated as ``release`` calibrates it, drawn with
    the mechanisms' fast ``simulate`` (numpy), post-processed as ``release`` would, with the ± a release
    of these values would state: a preview that spends nothing.

    Raises:
        ParameterError: what ``release`` refuses (unsuitable mechanism, bad parameters), and randomized
            response, which has no simulated preview here.
    """
    if not isinstance(query, Query):
        raise ParameterTypeError(f"query must be a query spec from dpdash.queries, got {type(query)!r}")
    cls = mechanism_class(mechanism)
    epsilon = check.epsilon(epsilon)
    confidence = check.open_unit(confidence, "confidence")
    extra = check_options(cls, options)
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    if cls is RandomizedResponse:
        raise ParameterError("randomized response has no simulated preview; release it to see values")
    evaluation = query.evaluate(df)
    if isinstance(query, KeyCounts):  # the keys that one simulated threshold lets through
        preview = key_preview(query, evaluation, epsilon=epsilon, delta=delta, confidence=confidence,
                              rng=generator)  # fmt: skip
        kept = preview.table[preview.table["simulated: published"]]
        values = tuple(int(v) for v in kept["simulated: noisy count"])
        accuracy = key_accuracy(preview.mechanism, len(values), confidence)
        return SimulatedRelease(tuple(kept["key"]), values, accuracy)
    if isinstance(query, SelectionQuery):
        count = len(query.selections)
        values, selectors = [], []
        for u, sensitivity in zip(evaluation.utilities or (), query.utility_sensitivities, strict=True):
            mech = cls(**extra, epsilon=epsilon / count, sensitivity=sensitivity, monotone=query.monotone)
            index = int(mech.simulate([int(x) for x in u], 1, generator)[0])
            values.append(query.candidates[index])
            selectors.append(mech)
        accuracy, _ = selection_accuracy(query, selectors, evaluation.utilities or (), confidence)
        return SimulatedRelease(tuple(query.selections), tuple(values), accuracy)
    if cls in (Gaussian, DiscreteGaussian) and delta is None:
        raise ParameterError(f"delta is required for the {cls.__name__} mechanism, got delta=None")
    pieces = calibrate(query, cls, df, epsilon=epsilon, delta=delta or 0.0, options=extra)
    truth = evaluation.pieces if isinstance(query, CompositeQuery) else {"answer": evaluation.values}
    noisy = {}
    for piece in pieces:
        true = np.asarray(truth[piece.name])
        noisy[piece.name] = np.asarray(piece.mechanism.simulate(true, 1, generator))[0].reshape(true.shape)
    if isinstance(query, CompositeQuery):
        drawn = np.atleast_1d(query.combine(noisy)).ravel()
    else:
        drawn = np.asarray(noisy["answer"]).ravel()
    steps = tuple(postprocess)
    shown: Sequence[Any] = drawn.tolist()
    if steps:
        shown = list(postprocess_values(steps, query, drawn))
        if postprocess_is_integer(steps, drawn.dtype.kind in "iu"):
            shown = [int(v) for v in shown]
    accuracy, _, _ = numeric_accuracy(query, pieces, noisy, confidence=confidence, postprocess=steps)
    return SimulatedRelease(
        tuple(str(label) for label in query.labels),  # type: ignore[attr-defined]
        tuple(v.item() if isinstance(v, np.generic) else v for v in shown),
        accuracy,
        steps,
        query,
    )
