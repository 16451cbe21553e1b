"""Per-group truncation: each person keeps at most k of the cells they touch and at most m rows in each
(:class:`dpdash.facts.GroupBounds`), both a uniform choice (the pandas side; ``dpdash.engines.truncation``
writes the same in SQL).

A row's cell is named by its text g: ``e(v)`` of its category value (``dpdash.truncation_keys``), ``I``
and the index of its bin, or ``O`` for the extra "(other)" cell; a row in no cell (a missing value, or a
value outside under ``outside="drop"``) is in no group, is never dropped by this truncation and counts in
no cell. Each of a person's cells gets the key G = the first 12 hex digits of
MD5("dpdash-groups-1|e(id)|g"), and the person keeps the k cells with the smallest (G, g); in each kept
cell, the m rows with the smallest row keys of ``dpdash.truncation_keys`` (ties by the values, then j).
So a person with n_g rows in each of their d cells keeps each cell with probability min(1, k/d) and, in
a kept cell, each row with probability min(1, m/n_g), whatever the values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpdash.errors import ParameterError
from dpdash.facts import Bins, Facts, GroupBounds, Truncation
from dpdash.truncation_keys import column_text, key_numbers, row_keys

__all__ = ["GROUP_KEY", "cell_text", "truncate_groups"]

#: The first field of every cell's text.
GROUP_KEY = "dpdash-groups-1"


def cell_text(series: pd.Series, codes: np.ndarray, declared: int, bins: Bins | None) -> np.ndarray:
    """g of each row (None where the row is in no cell): ``codes`` are ``cell_codes``' (−1 for none,
    ``declared`` for the "(other)" cell)."""
    if bins is not None:
        inside = np.char.add("I", codes.astype(str)).astype(object)
    else:
        inside, _, _ = column_text(series)
    text = np.where(codes == declared, "O", inside).astype(object)
    return np.where(codes >= 0, text, None)


def truncate_groups(
    df: pd.DataFrame, facts: Facts, cells: np.ndarray, columns: Sequence[str], bounds: GroupBounds
) -> tuple[pd.DataFrame, Truncation]:
    """Enforce ``bounds`` on the id column of ``facts``: rows without an id are dropped; rows in no
    cell are kept; each person keeps k of their cells and m rows in each. ``cells``: g of each row
    (``cell_text``), None where the row is in no cell. The kept rows stay in table order."""
    if facts.id_column is None:
        raise ParameterError(
            "per-group bounds are enforced by truncation on a person id column: declare the id column"
        )
    n = len(df)
    ids = df[facts.id_column]
    person, _ = pd.factorize(ids, use_na_sentinel=True)
    missing_id = person < 0
    in_cell = ~missing_id & pd.notna(cells)
    keep = ~missing_id.copy()
    rows = np.flatnonzero(in_cell)
    if rows.size:
        some = df.iloc[rows]
        id_text, _, _ = column_text(some[facts.id_column])
        groups = cells[rows]
        pairs = pd.DataFrame({"person": person[rows], "g": groups})
        first = ~pairs.duplicated()
        unique = pairs[first].copy()
        texts = [f"{GROUP_KEY}|{i}|{g}" for i, g in zip(id_text[first.to_numpy()], unique["g"], strict=True)]
        unique["G"] = key_numbers(texts)
        unique = unique.sort_values(["person", "G", "g"], kind="stable")
        unique["rank"] = unique.groupby("person", sort=False).cumcount()
        ranked = pairs.merge(unique, on=["person", "g"], how="left")
        chosen = ranked["rank"].to_numpy() < bounds.max_groups
        keys, ties = row_keys(some[facts.id_column], [some[c] for c in columns])
        cell_code, _ = pd.factorize(groups)
        order = pd.DataFrame(
            {
                "person": person[rows],
                "cell": cell_code,
                "key": keys,
                **{str(i): t for i, t in enumerate(ties)},
            }
        ).sort_values(["person", "cell", "key", *map(str, range(len(ties)))], kind="stable")
        within = np.empty(rows.size, dtype=np.int64)
        within[order.index.to_numpy()] = order.groupby(["person", "cell"], sort=False).cumcount().to_numpy()
        keep[rows] = chosen & (within < bounds.max_rows_per_group)
    people = int(person.max() + 1) if (~missing_id).any() else 0
    dropped = ~missing_id & ~keep
    report = Truncation(
        rows_in=n,
        rows_kept=int(keep.sum()),
        rows_truncated=int(dropped.sum()),
        rows_missing_id=int(missing_id.sum()),
        people=people,
        people_truncated=int(np.unique(person[dropped]).size),
    )
    return df[keep], report
