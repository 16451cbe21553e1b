"""The Data page's second step: the form where an owner names the table and declares its public facts
(bounds, categories, per-group bounds) and its unit of privacy (id column, c, neighbours, how c is
enforced; locked once a budget is set), checked before anything is saved."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpdash.datasets import BOUNDED_KINDS, CATEGORY_KINDS, PublicFacts
from dpdash.errors import DPDashError
from dpdash.facts import BOUNDING, Facts, Neighbours
from dpdash.ledger.versions import RecordedUnit
from dpdash.wording import bounding_choice, protected_unit, relation_choice
from ui.facts_editor import CATEGORY_COLUMNS, category_grid, read_bounds, read_categories, read_group_bounds
from ui.ledger_session import locked_with_bounding, with_unit
from ui.roles import acting_user
from ui.state import ActiveTable, update_table
from ui.text import md

__all__ = ["facts_form"]

PUBLIC = "(public knowledge)"


def _bullets(problems: list[str]) -> str:
    return "\n".join(f"- {md(problem)}" for problem in problems)


def facts_form(
    table: ActiveTable, kinds: dict[str, str], *, key: str, locked: RecordedUnit | None, no_id: str
) -> None:
    """The form for ``table`` (its columns' ``kinds``; ``key``: its widgets' suffix); the unit of privacy
    ``locked`` with its budget, if any, cannot change; ``no_id``: the "no id column" choice. Saving
    updates the table (the owner's check where it acts) and reruns the page."""
    facts = table.facts
    numeric = [c for c, k in kinds.items() if k in BOUNDED_KINDS]
    categorical = [c for c, k in kinds.items() if k in CATEGORY_KINDS]
    with st.form(f"data_facts_{key}"):
        owner_name = st.text_input("Name of this table (yours: the ledger and the Datasets view use it)",
                                   value=table.name, max_chars=200, key=f"data_name_{key}")  # fmt: skip
        rows = [c for c in numeric if c != facts.id_column]
        # Typed as numbers (NaN when not declared), so the grid edits numbers: text cells were the bug.
        lower = pd.Series([facts.bounds[c].lower if c in facts.bounds else None for c in rows], dtype=float)
        upper = pd.Series([facts.bounds[c].upper if c in facts.bounds else None for c in rows], dtype=float)
        bounds_table = st.data_editor(
            pd.DataFrame({"column": pd.Series(rows, dtype=object), "lower": lower, "upper": upper}),
            hide_index=True, disabled=["column"], key=f"data_bounds_editor_{key}", width="stretch",
            column_config={
                "lower": st.column_config.NumberColumn("lower", help=f"Declared lowest value {PUBLIC}"),
                "upper": st.column_config.NumberColumn("upper", help=f"Declared highest value {PUBLIC}"),
            },
        )  # fmt: skip
        categories_table = st.data_editor(
            category_grid(facts, [c for c in categorical if c != facts.id_column]), hide_index=True,
            disabled=["column"], key=f"data_categories_editor_{key}", width="stretch",
            column_config=CATEGORY_COLUMNS,
        )  # fmt: skip
        unit = locked_with_bounding(locked.unit, facts.unit.bounding) if locked is not None else facts.unit
        left, middle, right = st.columns(3)
        id_options = [no_id, *map(str, table.data.columns)]
        if unit.id_column is not None and unit.id_column not in id_options:
            id_options.append(unit.id_column)
        id_column = left.selectbox(
            "Person id column", id_options, index=id_options.index(unit.id_column) if unit.id_column else 0,
            key=f"data_id_column_{key}", disabled=locked is not None,
        )  # fmt: skip
        rows_per_person = middle.number_input(
            "Most rows per person (c)", min_value=1, max_value=10_000, value=unit.rows_per_person,
            step=1, key=f"data_rows_per_person_{key}", disabled=locked is not None,
        )  # fmt: skip
        relation = right.radio(
            "Neighbouring tables", [n.value for n in Neighbours],
            index=[n.value for n in Neighbours].index(unit.neighbours.value),
            format_func=lambda v: relation_choice(Neighbours(v)), key=f"data_neighbours_{key}",
            disabled=locked is not None,
        )  # fmt: skip
        bounding = st.radio(
            "With a person id column, how c is enforced (the guarantee is the same either way)", BOUNDING,
            index=BOUNDING.index(unit.bounding), format_func=bounding_choice, key=f"data_bounding_{key}",
        )  # fmt: skip
        if locked is not None:
            st.caption(
                f":material/lock: The unit of privacy is locked: this table's budget was set for "
                f"**{md(protected_unit(locked.unit))}** (recorded in the ledger "
                f"{locked.recorded_at[:19].replace('T', ' ')} UTC). A release under another unit would "
                "weaken or change what the budget guarantees, so it is refused. Bounds and categories can "
                "still be changed."
            )
        if st.form_submit_button("Save the public facts"):
            bounds, problems = read_bounds(bounds_table)
            categories, more = read_categories(categories_table)
            group_bounds, wrong = read_group_bounds(categories_table)
            problems += more + wrong
            if not owner_name.strip():
                problems.append("the table needs a name")
            chosen = None if id_column == no_id else id_column
            try:
                bounding = bounding if chosen is not None else "sample"  # weights need the id column
                new_unit = locked_with_bounding(locked.unit, bounding) if locked is not None else Facts(
                    neighbours=relation, rows_per_person=int(rows_per_person), id_column=chosen,
                    bounding=bounding,
                )  # fmt: skip
                declared = PublicFacts(bounds=bounds, categories=categories, notes=facts.notes,
                                       group_bounds=group_bounds if chosen is not None else {})  # fmt: skip
                if group_bounds and chosen is None:
                    problems.append(
                        "per-group bounds (k, m) need the person id column: choose it, or clear them"
                    )
                new_facts = with_unit(declared, new_unit)
            except DPDashError as error:
                problems.append(str(error))
            if problems:
                st.error("The facts were not saved (your entries are kept; fix these and save again):\n"
                         + _bullets(problems), icon=":material/error:")  # fmt: skip
            else:
                update_table(table, name=owner_name.strip(), facts=new_facts, user=acting_user())
                st.session_state["data_facts_saved"] = True
                st.rerun()
