"""The synthetic domain comes from the declared facts alone, and refuses what it cannot build."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpdash.datasets import PublicFacts
from dpdash.errors import ParameterError
from dpdash.facts import Bins, Facts, GroupBounds
from dpdash.queries import ContingencyTable, Histogram
from dpdash.synthetic import build_domain
from tests.synthetic.helpers import COLOURS, ID, facts


def test_columns_cells_and_other() -> None:
    domain = build_domain(facts(), ["colour", "size"], bins=5)
    assert domain.names == ("colour", "size")
    assert domain.column("colour").labels == (*COLOURS, "(other)")
    assert domain.column("size").bins == Bins((0.0, 20.0, 40.0, 60.0, 80.0, 100.0))
    assert domain.shape == (5, 6)


def test_bins_per_column_and_declared_bins() -> None:
    domain = build_domain(facts(), ["size"], bins={"size": [0, 50, 100]})
    assert domain.column("size").labels == ("[0, 50)", "[50, 100]", "(other)")
    assert build_domain(facts(), ["size"], bins={}).column("size").size == 17  # the default 16, + other


def test_marginal_queries_are_dpdash_count_queries_under_the_unit() -> None:
    unit = Facts(rows_per_person=2, id_column=ID)
    domain = build_domain(facts(unit), ["colour", "size"], bins=4)
    one = domain.marginal(("colour",))
    two = domain.marginal(("colour", "size"))
    assert isinstance(one, Histogram) and one.facts == unit and one.outside == "other"
    assert isinstance(two, ContingencyTable) and two.labels[0] == "red × [0, 25)"
    assert len(two.labels) == 5 * 5
    assert two.l2_sensitivity == 2 and one.l2_sensitivity == 2


def test_group_bounds_reach_the_one_way_histogram() -> None:
    declared = PublicFacts(categories={"colour": list(COLOURS)}, unit=Facts(rows_per_person=4, id_column=ID),
                           group_bounds={"colour": (1, 2)})  # fmt: skip
    domain = build_domain(declared, ["colour"])
    assert domain.marginal(("colour",)).l2_sensitivity == 2


def test_codes_and_values_round_trip() -> None:
    domain = build_domain(facts(), ["colour", "size"], bins=4)
    df = pd.DataFrame({"colour": ["red", "purple", None], "size": [10.0, 250.0, 99.0]})
    codes = domain.codes(df)
    assert codes["colour"].tolist() == [0, 4, -1]
    assert codes["size"].tolist() == [0, 4, 3]
    rng = np.random.default_rng(0)
    sizes = domain.column("size").values(np.array([0, 3, 4]), rng)
    assert 0 <= sizes[0] < 25 and 75 <= sizes[1] <= 100 and np.isnan(sizes[2])
    assert domain.column("colour").values(np.array([1, 4]), rng).tolist() == ["green", "(other)"]


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (["colour", "weight"], "no declared bounds or categories"),
        (["colour", ID], "id column"),
        ([], "at least one column"),
        (["colour", "colour"], "distinct"),
    ],
)
def test_refusals(columns: list[str], message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        build_domain(facts(Facts(id_column=ID)), columns)


def test_too_many_cells_in_a_pair() -> None:
    many = PublicFacts(categories={"a": [str(i) for i in range(200)], "b": [str(i) for i in range(60)]})
    with pytest.raises(ParameterError, match="at most 10000"):
        build_domain(many, ["a", "b"])


def test_the_declared_facts_of_a_domain_give_it_back() -> None:
    """What a reproduction script rebuilds: the facts (bounds = outer edges) and edges give the same domain,
    its unit and per-group bounds included, for declared and equal-width bins alike."""
    declared = PublicFacts(
        bounds={"size": (0, 100)}, categories={"colour": list(COLOURS)},
        unit=Facts(rows_per_person=4, id_column=ID), group_bounds={"colour": (1, 2)},
    )  # fmt: skip
    for bins in (7, {"size": [0, 10, 55, 100]}):
        domain = build_domain(declared, ["size", "colour"], bins=bins)
        again = build_domain(domain.facts(), list(domain.names), bins=domain.edges())
        assert again == domain and again.group_bounds == {"colour": GroupBounds(1, 2)}
    assert domain.edges() == {"size": [0.0, 10.0, 55.0, 100.0]}
