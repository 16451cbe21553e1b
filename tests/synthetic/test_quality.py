"""The owner's quality figures: exact on tables whose answers are known."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from dpdash.synthetic import quality, synthesize, tvd
from dpdash.synthetic.quality import NOT_PRIVATE, association
from tests.synthetic.helpers import facts, table


def test_tvd_values() -> None:
    assert tvd(np.array([3, 1]), np.array([3, 1])) == 0.0
    assert tvd(np.array([1, 0]), np.array([0, 5])) == 1.0
    assert tvd(np.array([2, 2]), np.array([3, 1])) == pytest.approx(0.25)


def test_association_values() -> None:
    assert association(np.diag([5, 5, 5]), None, None) == pytest.approx(1.0)
    assert association(np.ones((3, 4)), None, None) == pytest.approx(0.0)
    mid = np.array([0.0, 1.0, np.nan])
    assert association(np.array([[5, 0, 1], [0, 5, 0], [0, 0, 9]]), mid, mid) == pytest.approx(1.0)
    assert association(np.array([[0, 5, 0], [5, 0, 0], [0, 0, 0]]), mid, mid) == pytest.approx(-1.0)


def test_the_true_table_against_itself_is_perfect() -> None:
    df = table(31, rows=2000)
    s = synthesize(df, facts(), epsilon=1.0, delta=1e-6, rng=0, columns=["colour", "shape", "size"])
    own = dataclasses.replace(s, table=df[["colour", "shape", "size"]].reset_index(drop=True))
    q = quality(df, own)
    assert q.mean_one_way == 0.0 and q.mean_two_way == 0.0 and q.label == NOT_PRIVATE
    assert np.allclose(q.association_difference.to_numpy(), 0.0)
    assert set(q.two_way) == {m.clique for m in s.measurements if len(m.clique) == 2}
    assert isinstance(q.association_true, pd.DataFrame) and q.association_true.shape == (3, 3)
