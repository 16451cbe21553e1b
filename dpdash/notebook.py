"""A Jupyter notebook that explains a release step by step and makes it again only through the ledger.

``release_notebook`` writes the .ipynb (nbformat 4.5, plain JSON) that the Query & release page offers
beside the script. It runs top to bottom: its first code cell names the table's file (``TABLE_FILE``), the
ledger (``LEDGER``) and ``RELEASE = False``; it loads the table and checks its identity, shows a simulated
preview that spends nothing, and releases (spending ε from the ledger, all or nothing) only once the person
sets ``RELEASE = True``. The loading, the preview and the spend are the script's own
(``dpdash.reproduce.Reproduction``), with the same values (``dpdash.export.reproduction_values``).

User text (names, categories, the query's name, where-values) is written into Markdown cells escaped by
``dpdash.markdown.md``, and into code cells only as literals of builtin types (``dpdash.export.literal``),
never as code. The JSON escapes ``<``, ``>`` and ``&`` too, so the file holds no ``</script>`` as text.
"""

from __future__ import annotations

import json
import math
import numbers
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from dpdash.errors import DPDashError
from dpdash.export import literal, reproduction_values
from dpdash.facts import Facts
from dpdash.markdown import md
from dpdash.postprocessing import describe_postprocessing
from dpdash.release import Release
from dpdash.table_origin import TableOrigin
from dpdash.wording import accuracy_words, guarantee

__all__ = ["NOTEBOOK_FILE", "release_notebook"]

#: The file name the app offers the notebook under (and the ledger session it spends in).
NOTEBOOK_FILE = "reproduce_release.ipynb"
_LISTED = 40  # categories, bins, candidates shown in words; the rest are counted (all are in the code)

# The code of each code cell after the settings: fixed text, with no user text in it.
_REPRODUCTION_CODE = "from dpdash.reproduce import {imports}\n\nREPRODUCTION = {cls}(\n{fields}\n)"
_LOAD_CODE = "table = REPRODUCTION.load(TABLE_FILE)  # refused unless it is the release's table"
_PREVIEW_CODE = "simulated = REPRODUCTION.preview(table)  # SIMULATED: not a release, spends nothing"
_RELEASE_CODE = '''if RELEASE:
{spend}
else:
    print(
        "RELEASE is False: nothing was released and nothing was spent. To release, set RELEASE = True in "
        "the first code cell and run the notebook again: it spends epsilon from LEDGER."
    )'''


def shown(value: object) -> str:
    """One public value in words, escaped: text in quotes, numbers as numbers."""
    if isinstance(value, str):
        return f"“{md(value)}”"
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return f"{value:g}" if isinstance(value, float) and math.isfinite(value) else md(value)
    return md(json.dumps(value, ensure_ascii=False, default=str))


def listed(values: object) -> str:
    """Values in words, escaped (``shown``): the first 40, then how many more."""
    items = list(values) if isinstance(values, list | tuple) else [values]
    words = ", ".join(shown(v) for v in items[:_LISTED])
    more = len(items) - _LISTED
    return words + (f" and {more} more (all in the code below)" if more > 0 else "")


def _where(conditions: object) -> str:
    if not isinstance(conditions, list) or not conditions:
        return "every row"
    parts = []
    for c in conditions:
        if isinstance(c, dict):
            parts.append(f"{shown(c.get('column'))} {md(c.get('op'))} {listed(c.get('value'))}")
        else:
            parts.append(shown(c))
    return "the rows where " + " and ".join(parts)


def _fact_line(key: str, value: Any) -> str:
    """One entry of the query's dict in words (any key the wording does not know is shown as data)."""
    if key == "bounds" and isinstance(value, list) and len(value) == 2:
        return (
            f"Bounds (public): every value is clamped to [{shown(value[0])}, {shown(value[1])}] before "
            "the answer is computed."
        )
    if key == "group_bounds" and isinstance(value, list) and len(value) == 2:
        return (
            f"Per-group bounds (public): a person touches at most {shown(value[0])} groups with at most "
            f"{shown(value[1])} rows in each, enforced by the person id column."
        )
    words = {
        "column": "Column", "columns": "Columns", "by": "Grouped by", "categories": "Categories (public)",
        "keys": "Groups (public)", "bins": "Bin edges (public)", "candidates": "Candidate values (public)",
        "quantiles": "Quantiles", "split": "Share of ε spent on the sum (the rest on the count)",
        "norm_bound": "Each row's vector is clipped to norm at most", "outside": "Values outside them",
    }  # fmt: skip
    if key == "where":
        return f"Rows counted: {_where(value)}."
    if key == "outside":
        said = {"other": "counted in an extra cell “(other)”", "drop": "left out"}
        return f"Values outside the declared categories or bins: {said.get(value, shown(value))}."
    if key == "categories" and isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return "Categories (public), per column: " + "; ".join(listed(v) for v in value) + "."
    return f"{words.get(key, md(key))}: {listed(value)}."


def _facts_markdown(query: dict[str, Any], facts: Facts) -> str:
    lines = [
        "## 2. Whom it protects, and the public facts",
        "",
        f"**Unit of privacy:** {md(guarantee(facts).plain)}",
        "",
        f"In full: {md(facts.describe())}.",
        "",
        "**Public facts** of the query (declared by the data owner, not read off the data: reading them off "
        "the private table would leak information):",
        "",
    ]
    lines += [
        f"- {_fact_line(key, value)}" for key, value in query.items() if key not in ("type", "facts")
        and value is not None
    ]  # fmt: skip
    lines += ["", "The next cell holds the release's record as data: every name in it is a Python string."]
    return "\n".join(lines)


def _step(step: str) -> str:
    try:
        return md(describe_postprocessing(step))
    except (DPDashError, KeyError, ValueError, TypeError):
        return shown(step)


def _mechanism_markdown(release: Release, facts: Facts) -> str:
    accuracy = release.accuracy
    delta = f", δ = {release.delta:g}" if release.delta else ""
    means = accuracy_words(accuracy.confidence, accuracy.method, len(release.values), accuracy.scope,
                           accuracy.joint_half_width)  # fmt: skip
    kind = "simulated" if accuracy.method.startswith("simulated") else "exact"
    how = kind if accuracy.method == kind else f"{kind}: {md(accuracy.method)}"
    plain = md(guarantee(facts, release.epsilon, release.delta or 0.0).plain)
    lines = [
        "## 4. The mechanism, ε and the ±",
        "",
        f"Noise from the **{md(release.mechanism)}** mechanism, calibrated to ε = {release.epsilon:g}{delta} "
        "and to the query's sensitivity (computed from the public facts above).",
        "",
        "**What ε means:** whatever the result, its chance changes by at most a factor of e^ε whether or not "
        f"one protected unit's data is in the table. Here: {plain}",
        "",
        f"**The ± the release stated** ({how}): {md(means)}",
        "",
        f"Definition: {md(accuracy.definition)}.",
        "",
    ]
    widths = accuracy.half_widths
    if widths:
        lines += [f"- {shown(str(label))}: ± {width:.4g}" for label, width in
                  zip(release.labels[:_LISTED], widths, strict=False)]  # fmt: skip
        if len(release.labels) > _LISTED:
            lines.append(f"- and {len(release.labels) - _LISTED} more")
        lines.append("")
    if release.postprocessing:
        steps = "; ".join(_step(s) for s in release.postprocessing)
        lines.append(f"Post-processing (spends nothing): {steps}.")
    return "\n".join(lines).rstrip()


def _load_markdown(origin: TableOrigin) -> str:
    """Section 3 of a reproduction notebook: how the table is loaded and checked."""
    changes = "; ".join(f"{shown(column)} to {md(kind)}" for column, kind in origin.coercions)
    lines = [
        "## 3. Load the table and check it is the same one",
        "",
        "The file is read as the app reads it. Its identity (a fingerprint of the table as read, before any "
        "type change) must be the dataset's: any other table is refused, and nothing after this cell runs.",
    ]
    if changes:
        lines.append(
            f"Then the app's type changes are applied again, in order: {changes}"
            + (" (values that do not convert become missing)." if origin.lossy else ".")
        )
    lines.append("The result must be exactly the table the app queried.")
    return "\n".join(lines)


def _cell(kind: str, source: str, index: int) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "id": f"cell-{index}", "metadata": {}, "source": source}
    if kind == "code":
        cell |= {"execution_count": None, "outputs": []}
    return cell


def release_notebook(release: Release, *, origin: TableOrigin = TableOrigin()) -> str:
    """The notebook (nbformat 4.5 JSON, as text) that explains ``release`` and makes it again, with new
    noise, only by spending from the ledger; the arguments are ``release_script``'s.

    Raises:
        ParameterError, ParameterTypeError: as ``dpdash.export.release_script``.
    """
    values = reproduction_values(release, origin=origin)
    facts = Facts.from_dict(release.query.get("facts", {}))
    intro = (
        f"# Reproduce a dpdash release: {md(values['RELEASE'])}\n\n"
        f"## 1. What this is\n\nA release made with dpdash from the table {shown(origin.table_name)}. This "
        "notebook explains each step and makes the same query again, with **new noise**: the same query "
        "again spends privacy budget again, and the two results together reveal more than either.\n\n"
        "Run it from the top. As downloaded (`RELEASE = False`) it only **previews**: simulated values that "
        "spend nothing and must not be published. With `RELEASE = True` the last cell releases and records "
        "the spend in the ledger, all or nothing, before it shows anything; if the budget is short it stops "
        "and spends nothing. It needs a Python with dpdash installed, and the table's file."
    )
    preview = (
        "## 5. Preview, then release\n\n**PREVIEW: not a release.** Simulated values (numpy draws, not "
        "release-grade) with the ± a release of them would state. It spends nothing; do not publish them."
    )
    release_md = (
        "**RELEASE.** Runs only with `RELEASE = True` (first code cell): draws new noise with the exact "
        "samplers, spends ε from `LEDGER` for this dataset, and shows the released values with their ±. It "
        "cannot be undone."
    )
    return reproduction_notebook(
        values, origin, imports=["Reproduction"],
        settings=["RELEASE = False  # True: the last cell releases with new noise and spends from LEDGER"],
        spend=f"released = REPRODUCTION.spend(table, LEDGER, session={NOTEBOOK_FILE!r})",
        intro=intro, facts=_facts_markdown(release.query, facts), method=_mechanism_markdown(release, facts),
        preview=preview, release=release_md,
    )  # fmt: skip


def reproduction_notebook(
    values: Mapping[str, object],
    origin: TableOrigin,
    *,
    imports: Sequence[str],
    settings: Sequence[str],
    spend: str,
    intro: str,
    facts: str,
    method: str,
    preview: str,
    release: str,
) -> str:
    """A reproduction notebook's JSON (``notebook_json``), cell by cell: the ``intro`` (section 1); the
    settings (``TABLE_FILE``, ``LEDGER``, then the lines ``settings``); the ``facts`` (section 2); the
    names ``imports`` from ``dpdash.reproduce``, the first the class built from ``values`` (as literals);
    how the table is loaded and checked (section 3) and the code that loads it; the ``method`` (section
    4); the ``preview`` and its code; the ``release`` and its code, which runs ``spend`` if ``RELEASE``."""
    fields = "\n".join(f"    {key.lower()}={literal(value, key.lower())}," for key, value in values.items())
    settings_code = "\n".join([
        "# Set these, then run the notebook from the top.",
        f"TABLE_FILE = {literal(origin.table_file, 'table_file')}  # the file the table was loaded from",
        f"LEDGER = {literal(values['LEDGER'], 'ledger')}  # the ledger it was spent from (a file or URL)",
        *settings,
    ])  # fmt: skip
    return notebook_json([
        ("markdown", intro),
        ("code", settings_code),
        ("markdown", facts),
        ("code", _REPRODUCTION_CODE.format(imports=", ".join(imports), cls=imports[0], fields=fields)),
        ("markdown", _load_markdown(origin)),
        ("code", _LOAD_CODE),
        ("markdown", method),
        ("markdown", preview),
        ("code", _PREVIEW_CODE),
        ("markdown", release),
        ("code", _RELEASE_CODE.format(spend=textwrap.indent(spend, "    "))),
    ])  # fmt: skip


def notebook_json(cells: Sequence[tuple[str, str]]) -> str:
    """An nbformat 4.5 notebook of ``cells`` (kind, source), as JSON text that holds no ``<``, ``>`` or
    ``&`` (so no ``</script>`` wherever the file is embedded)."""
    notebook = {
        "cells": [_cell(kind, source, i) for i, (kind, source) in enumerate(cells)],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(notebook, indent=1, ensure_ascii=True)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e") + "\n"
