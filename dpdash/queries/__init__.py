"""Queries over a pandas DataFrame: true answers for the data owner, exact sensitivities from public facts.

Every query is a frozen, validated spec with ``true_answer(df)`` / ``evaluate(df)`` (the exact answer
and a report on truncation, missing values and clipping, both NOT PRIVATE) and its sensitivities,
derived from the spec and its :class:`~dpdash.facts.Facts` (see ``dpdash.queries.base``):

- numeric queries (released with a noise mechanism): ``Count``, ``CountPeople``, ``Sum``, ``Histogram``,
  ``ContingencyTable``, ``GroupByCount``, ``GroupBySum``, ``SecondMoment``, each with
  ``l1_sensitivity``, ``l2_sensitivity``, ``coordinate_sensitivity`` and ``changed_coordinates``;
- composite queries (noisy pieces and a stated split of ε; the ± of their answer is
  ``dpdash.published``'s, simulated from the pieces' noise laws): ``Mean``,
  ``Variance``, ``GroupByMean``;
- key counts (``KeyCounts``): counts per key of a column whose keys are not public, released with a
  threshold that keeps only keys many people share (``dpdash.mechanisms.key_threshold``);
- selection queries (released with a selection mechanism): ``Quantile`` (and its median), ``Mode``,
  with exact integer ``utilities`` and ``utility_sensitivities``.

>>> import pandas as pd
>>> from dpdash.facts import Facts
>>> df = pd.DataFrame({"region": ["N", "S", "N"], "income": [30.0, 80.0, 200.0]})
>>> Histogram(column="region", categories=["N", "S"], facts=Facts(neighbours="substitute")).l1_sensitivity
2
>>> Sum(column="income", bounds=(0, 100)).true_answer(df).tolist()
[210.0]
>>> mean = Mean(column="income", bounds=(0, 100))
>>> query_from_dict(mean.to_dict()) == mean
True
"""

from dpdash.queries.base import (
    NOT_PRIVATE,
    CompositeQuery,
    DataReport,
    Evaluation,
    NumericQuery,
    Piece,
    Query,
    SelectionQuery,
    Sensitivities,
    query_from_dict,
)
from dpdash.queries.count import Count, CountPeople, Where
from dpdash.queries.groupby import GroupByCount, GroupByMean, GroupBySum
from dpdash.queries.histogram import OTHER, ContingencyTable, Histogram
from dpdash.queries.keys import KeyCounts
from dpdash.queries.means import Mean, Variance
from dpdash.queries.moment import SecondMoment
from dpdash.queries.selection import Mode, Quantile
from dpdash.queries.sums import Sum

__all__ = [
    "NOT_PRIVATE",
    "OTHER",
    "CompositeQuery",
    "ContingencyTable",
    "Count",
    "CountPeople",
    "DataReport",
    "Evaluation",
    "GroupByCount",
    "GroupByMean",
    "GroupBySum",
    "Histogram",
    "KeyCounts",
    "Mean",
    "Mode",
    "NumericQuery",
    "Piece",
    "Quantile",
    "Query",
    "SecondMoment",
    "SelectionQuery",
    "Sensitivities",
    "Sum",
    "Variance",
    "Where",
    "query_from_dict",
]
