"""The script and the notebook that draw a released synthetic table again, only through the ledger.

``synthetic_script`` and ``synthetic_notebook`` are the Synthetic table page's downloads, the counterparts
of ``dpdash.export.release_script`` and ``dpdash.notebook.release_notebook``, and built from the same
parts: the table's file is read and checked as the app reads it (``dpdash.reproduce.TableReproduction``),
the declared facts are rebuilt from the release's domain (``SyntheticDomain.facts``, written as
``dpdash.workspace.facts_to_dict`` writes them), and ``dpdash.synthesize`` runs with the same columns,
method, bins, ε, δ and number of rows (``dpdash.reproduce.SyntheticReproduction``).

By default both only preview (a seeded numpy draw that spends nothing and writes nothing); a release
(``--release``, or ``RELEASE = True`` in the notebook) draws on OS randomness, spends from the ledger the
release was made with in one transaction, and only then writes the synthetic CSV beside the table's file.
User text reaches the script and the notebook's code only as inert literals (``dpdash.export.literal``),
and the notebook's Markdown only escaped (``dpdash.markdown.md``).
"""

from __future__ import annotations

from dpdash import _validation as check
from dpdash.errors import ParameterTypeError
from dpdash.export import script_body, script_text
from dpdash.markdown import md
from dpdash.notebook import listed, reproduction_notebook, shown
from dpdash.synthetic import METHODS, PREVIEW_SEED, SyntheticRelease
from dpdash.table_origin import TableOrigin
from dpdash.wording import guarantee
from dpdash.workspace import facts_to_dict

__all__ = [
    "SYNTHETIC_CONSTANTS", "SYNTHETIC_NOTEBOOK", "SYNTHETIC_SCRIPT", "synthetic_notebook", "synthetic_script",
    "synthetic_values",
]  # fmt: skip

#: The file names the app offers the downloads under (and the ledger sessions they spend in).
SYNTHETIC_SCRIPT = "reproduce_synthetic.py"
SYNTHETIC_NOTEBOOK = "reproduce_synthetic.ipynb"

#: The constants every synthetic script defines, in order.
SYNTHETIC_CONSTANTS = (
    "RELEASE", "RUN", "LEDGER", "TABLE_NAME", "IDENTITY", "FINGERPRINT", "COERCIONS", "LOSSY", "METHOD",
    "WORKLOAD", "COLUMNS", "FACTS", "BINS", "EPSILON", "DELTA", "ROWS", "SEED",
)  # fmt: skip

# The script's code around its constants: fixed text, with no user text in it.
_SCRIPT_DOC = f'''"""Draw a dpdash synthetic table again (RELEASE says which): dpdash.synthesize on the same
table, with the same type changes, columns, declared facts, bins, method, epsilon, delta and number of
rows, and new randomness.

    python {SYNTHETIC_SCRIPT} TABLE_FILE [--release] [--ledger LEDGER] [--output FILE]

with a Python that has dpdash installed (the command RUN names the one that made it), or
``dpdash reproduce {SYNTHETIC_SCRIPT} TABLE_FILE``.

TABLE_FILE is the file the table was loaded from (CSV, TSV, Parquet or Excel), read as the app reads it.
Its identity (dpdash.ledger.fingerprint of the table as read, before the type changes) must be the
dataset's, IDENTITY: any other table is refused.

By default it only previews: a draw with numpy seeded by SEED, on the true table, whose first rows it
prints. Nothing is spent or written, and the preview must not be published. With --release it draws anew
on OS randomness (the release-grade path), spends from the dataset's budget in the ledger the release was
made with, LEDGER (or --ledger: a file, or a postgresql:// URL with its credentials), all or nothing, and
only then writes the synthetic table's CSV (--output, else TABLE-synthetic.csv beside TABLE_FILE; never
over an existing file). A ledger that is not there is refused. If the budget is short, nothing is
recorded or written and the exit code is 1.
"""

from __future__ import annotations

import argparse
import sys

from dpdash.errors import DPDashError
from dpdash.reproduce import SyntheticReproduction, beside
'''

_SCRIPT_BODY = script_body(
    "SyntheticReproduction",
    SYNTHETIC_CONSTANTS,
    description='''"Draw a dpdash synthetic table again on its table: a preview by default; with "
        "--release, spending from the dataset's budget in the ledger (see the docstring at the top)."''',
    options='''mode = parser.add_mutually_exclusive_group()
mode.add_argument("--preview", action="store_true", help="simulate only (the default): nothing spent")
mode.add_argument("--release", action="store_true", help="release: spend from the ledger, write the CSV")
parser.add_argument("--ledger", help=f"the ledger (default: the release's own, {LEDGER})")
parser.add_argument("--output", help="the CSV to write (default: TABLE-synthetic.csv beside the table)")''',
    run=f'''if args.release:
    output = args.output or beside(args.table)
    REPRODUCTION.spend(table, args.ledger or LEDGER, session={SYNTHETIC_SCRIPT!r}, output=output)
else:
    REPRODUCTION.preview(table)
    print("To release: run it again with --release (spends from the ledger, writes the CSV).")''',
)


def synthetic_values(
    synthetic: SyntheticRelease, *, origin: TableOrigin = TableOrigin()
) -> dict[str, object]:
    """What drawing ``synthetic`` again needs, checked, as plain data: the ``SYNTHETIC_CONSTANTS`` but
    ``RUN``, in that order (``dpdash.reproduce.SyntheticReproduction``'s fields, upper-cased).

    Raises:
        ParameterError, ParameterTypeError: as ``synthetic_script`` says.
    """
    if not isinstance(synthetic, SyntheticRelease):
        raise ParameterTypeError(
            f"synthetic must be a dpdash.synthetic.SyntheticRelease, got {type(synthetic).__name__}"
        )
    domain = synthetic.domain
    return {
        "RELEASE": f"{synthetic.query_name}, ε = {synthetic.epsilon:g}, δ = {synthetic.delta:g}",
        **origin.values(synthetic.dataset_identity, synthetic.dataset_fingerprint),
        "METHOD": check.one_of(synthetic.method, "method", METHODS),
        "WORKLOAD": [list(pair) for pair in synthetic.workload],
        "COLUMNS": list(domain.names),
        "FACTS": facts_to_dict(domain.facts()),
        "BINS": domain.edges(),
        "EPSILON": synthetic.epsilon,
        "DELTA": synthetic.delta,
        "ROWS": len(synthetic.table),
        "SEED": PREVIEW_SEED,
    }


def synthetic_script(
    synthetic: SyntheticRelease, *, origin: TableOrigin = TableOrigin(), python: str = "python"
) -> str:
    """A Python script that draws ``synthetic`` again, and releases it only through the ledger.

    ``python reproduce_synthetic.py TABLE_FILE`` reads and checks the table as ``release_script`` does
    (its identity, ``origin.coercions`` re-applied with ``drop_invalid=origin.lossy``, the exact table's
    fingerprint),
    then previews: ``dpdash.synthesize`` with the same columns, facts, bins, method, ε, δ and number of
    rows, seeded (``PREVIEW_SEED``), spending nothing. ``--release`` draws on OS randomness, spends from
    the ledger (``--ledger``, else ``origin.ledger``) in one transaction, and only then writes the CSV.

    Every value from the release or the caller is an inert literal in the constants block; the code around
    it is fixed text. No true value is written (only the synthetic table's number of rows).

    Args:
        synthetic: the synthetic release to draw again.
        origin, python: as ``dpdash.export.release_script``.

    Raises:
        ParameterError: a method ``synthesize`` does not know.
        ParameterTypeError: a part of the release that is not plain data, arguments of the wrong type.
    """
    values = synthetic_values(synthetic, origin=origin)
    return script_text(_SCRIPT_DOC, _SCRIPT_BODY, SYNTHETIC_CONSTANTS, values, origin=origin, python=python,
                       script=SYNTHETIC_SCRIPT)  # fmt: skip


# ---- the notebook ----------------------------------------------------------------------------------------

_SPEND_CODE = f"""released, written = REPRODUCTION.spend(
    table, LEDGER, session={SYNTHETIC_NOTEBOOK!r}, output=OUTPUT or beside(TABLE_FILE)
)"""


def _column_line(column: dict[str, object]) -> str:
    name = shown(column["name"])
    if column["kind"] == "numeric":
        edges = list(column.get("bins", []))  # type: ignore[call-overload]
        return (f"- {name}: numeric, {len(edges) - 1} equal bins over its declared bounds "
                f"[{shown(edges[0])}, {shown(edges[-1])}], and a cell for values outside them")  # fmt: skip
    return f"- {name}: the declared categories {listed(column.get('categories', []))}, and a cell “(other)”"


def _facts_markdown(synthetic: SyntheticRelease) -> str:
    unit = synthetic.domain.unit
    lines = [
        "## 2. Whom it protects, and the public facts",
        "",
        f"**Unit of privacy:** {md(guarantee(unit).plain)}",
        "",
        f"In full: {md(unit.describe())}.",
        "",
        "**Columns and their cells** (from the public facts declared by the data owner, never read off the "
        "data):",
        "",
        *(_column_line(c) for c in synthetic.domain.to_dict()["columns"]),
        "",
        "The next cell holds the release's record as data: every name in it is a Python string.",
    ]
    return "\n".join(lines)


#: What each method does, in the notebook's words ({pairs}: the AIM workload, already shown as text).
_METHOD_TEXT = {
    "mst": "**MST** (McKenna, Miklau & Sheldon 2021): every one-way marginal, then the pairs chosen by the "
           "exponential mechanism along a maximum spanning tree, measured with discrete Gaussian noise "
           "({marginals} marginals in the release), a model fitted to them, and {rows:,} rows drawn from it.",
    "aim": "**AIM** (McKenna, Mullins, Sheldon & Miklau 2022) for the workload {pairs}: every one-way "
           "marginal, then rounds that each choose, by the exponential mechanism, the workload marginal the "
           "model gets most wrong, measure it with discrete Gaussian noise and fit the model again, with the "
           "noise halved when a round gains little, until the budget is spent ({marginals} marginals in the "
           "release); then {rows:,} rows drawn from the model.",
}  # fmt: skip


def _method_markdown(synthetic: SyntheticRelease) -> str:
    plain = md(guarantee(synthetic.domain.unit, synthetic.epsilon, synthetic.delta).plain)
    marginals = len(synthetic.measurements)
    return "\n".join([
        "## 4. The method, ε and δ",
        "",
        _METHOD_TEXT[synthetic.method].format(
            marginals=marginals, rows=len(synthetic.table),
            pairs=", ".join(" × ".join(shown(c) for c in pair) for pair in synthetic.workload),
        ),
        "",
        f"**Privacy:** {md(synthetic.guarantee)}. Here: {plain}",
    ])  # fmt: skip


def synthetic_notebook(synthetic: SyntheticRelease, *, origin: TableOrigin = TableOrigin()) -> str:
    """The notebook (nbformat 4.5 JSON, as text) that explains ``synthetic`` and draws it again: run top to
    bottom it previews (``RELEASE = False``); with ``RELEASE = True`` it spends from the ledger and writes
    the CSV. The arguments are ``synthetic_script``'s.

    Raises:
        ParameterError, ParameterTypeError: as ``synthetic_script``.
    """
    values = synthetic_values(synthetic, origin=origin)
    intro = (
        f"# Draw a dpdash synthetic table again: {md(values['RELEASE'])}\n\n"
        f"## 1. What this is\n\nA synthetic table released with dpdash from the table "
        f"{shown(origin.table_name)}. "
        "This notebook explains each step and draws it again with **new randomness**: drawing again spends "
        "privacy budget again, and the two tables together reveal more than either.\n\n"
        "Run it from the top. As downloaded (`RELEASE = False`) it only **previews**: a seeded draw on the "
        "true table that spends nothing and must not be published. With `RELEASE = True` the last cell "
        "releases, records the spend in the ledger (all or nothing), and only then writes the CSV; if the "
        "budget is short it stops and spends nothing. It needs a Python with dpdash installed, and the "
        "table's file."
    )
    preview = (
        "## 5. Preview, then release\n\n**PREVIEW: not a release.** A draw with numpy, seeded, on the true "
        "table: its first rows. It spends nothing and writes nothing; do not publish it."
    )
    release_md = (
        "**RELEASE.** Runs only with `RELEASE = True` (first code cell): draws anew with the exact samplers "
        "on OS randomness, spends ε from `LEDGER` for this dataset, then writes the table to `OUTPUT`. It "
        "cannot be undone."
    )
    return reproduction_notebook(
        values, origin, imports=["SyntheticReproduction", "beside"],
        settings=[
            "OUTPUT = None  # the CSV to write; None: TABLE-synthetic.csv beside TABLE_FILE",
            "RELEASE = False  # True: the last cell releases with new randomness and spends from LEDGER",
        ],
        spend=_SPEND_CODE, intro=intro, facts=_facts_markdown(synthetic), method=_method_markdown(synthetic),
        preview=preview, release=release_md,
    )  # fmt: skip
