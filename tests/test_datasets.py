"""The built-in examples: deterministic, the documented shape, declared facts that fit the data, and
nothing downloaded."""

from __future__ import annotations

import hashlib
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdash import DPDashError, ParameterError, ParameterTypeError
from dpdash.datasets import (
    DEFAULT_SEED,
    DIAGNOSES,
    EXAMPLES,
    ExampleDataset,
    PublicFacts,
    load_example,
    synthetic_patients,
    tips,
)
from dpdash.facts import Bounds, Facts

REPO_ROOT = Path(__file__).resolve().parents[1]

# sha256 of the default table written as CSV: changes only if the generator (or numpy's streams) does.
PATIENTS_FINGERPRINT = "332b8d4db2c7bdcc77c187f9a86e4031ac67bf2fff644f06e3c8036d4b28110b"
PATIENT_COLUMNS = ["person_id", "age", "sex", "region", "diagnosis", "diabetes", "income", "visits"]
PER_PERSON = ["age", "sex", "region", "diabetes", "income"]


def fingerprint(df: pd.DataFrame) -> str:
    return hashlib.sha256(df.to_csv(index=False).encode()).hexdigest()


@pytest.fixture(scope="module")
def patients() -> ExampleDataset:
    return synthetic_patients()


@pytest.fixture(scope="module")
def tips_example() -> ExampleDataset:
    return tips()


# --- the synthetic patient table ---------------------------------------------------------------------


def test_patients_are_the_same_table_on_every_run(patients: ExampleDataset) -> None:
    assert fingerprint(patients.data) == PATIENTS_FINGERPRINT
    assert fingerprint(synthetic_patients(n_rows=1_000).data) == fingerprint(
        synthetic_patients(n_rows=1_000, seed=DEFAULT_SEED).data
    )


def test_another_seed_gives_another_table() -> None:
    assert fingerprint(synthetic_patients(n_rows=1_000, seed=1).data) != fingerprint(
        synthetic_patients(n_rows=1_000, seed=2).data
    )


def test_patients_are_generated_fast() -> None:
    synthetic_patients(n_rows=100)  # warm-up
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        synthetic_patients()
        best = min(best, time.perf_counter() - start)
    assert best < 0.5, f"100 000 rows took {best:.3f} s (target < 0.5 s)"


def test_patients_shape_and_types(patients: ExampleDataset) -> None:
    data = patients.data
    assert data.shape == (100_000, 8)
    assert list(data.columns) == PATIENT_COLUMNS
    assert data.notna().all().all()
    for column in ("age", "visits"):
        assert pd.api.types.is_integer_dtype(data[column])
    assert pd.api.types.is_float_dtype(data["income"])
    for column in ("person_id", "sex", "region", "diagnosis", "diabetes"):
        assert pd.api.types.is_string_dtype(data[column])
    assert data["person_id"].str.fullmatch(r"P\d{6}").all()
    assert patients.name == "patients" and "100 000" in patients.title


@pytest.mark.parametrize("n_rows", [1, 2, 7, 1_000])
def test_patients_have_exactly_the_rows_asked_for(n_rows: int) -> None:
    example = synthetic_patients(n_rows=n_rows)
    assert len(example.data) == n_rows
    assert example.data["person_id"].value_counts().max() <= example.facts.max_rows_per_person


def test_some_people_have_several_rows_up_to_the_declared_maximum(patients: ExampleDataset) -> None:
    rows = patients.data.groupby("person_id").size()
    assert rows.max() == patients.facts.max_rows_per_person == 5
    assert 75_000 <= len(rows) <= 81_000  # about 80 000 people
    assert 0.78 <= (rows == 1).mean() <= 0.86  # most have one row: a realistic skew
    assert (rows >= 3).sum() > 1_000


def test_person_level_columns_are_constant_within_a_person(patients: ExampleDataset) -> None:
    distinct = patients.data.groupby("person_id")[PER_PERSON].nunique()
    assert (distinct == 1).all().all()


def test_patients_are_plausible(patients: ExampleDataset) -> None:
    data = patients.data
    diabetic = data["diabetes"] == "yes"
    old, young = data["age"] >= 70, data["age"] < 40
    assert diabetic[old].mean() > 3 * diabetic[young].mean()  # correlated with age
    assert set(data.loc[data["diagnosis"] == "E11", "diabetes"]) == {"yes"}  # E11 only with diabetes
    shares = data["diagnosis"].value_counts(normalize=True)
    assert shares.iloc[0] > 5 * shares.iloc[-1]  # a skewed distribution
    income = data["income"]
    assert (income > 0).all() and income.mean() > 1.2 * income.median()  # right-skewed
    assert (data["visits"] >= 0).all()
    assert data.groupby(data["age"] >= 60)["visits"].mean().diff().iloc[-1] > 0  # more visits with age


def test_patient_facts_are_declared_and_fit_the_data(patients: ExampleDataset) -> None:
    facts, data = patients.facts, patients.data
    assert facts.bounds == {
        "age": Bounds(0, 100),
        "income": Bounds(0, 150_000),
        "visits": Bounds(0, 20),
    }
    assert facts.unit == Facts(rows_per_person=5, id_column="person_id")
    assert facts.id_column == "person_id"
    assert set(facts.categories["diagnosis"]) == set(DIAGNOSES) and len(DIAGNOSES) == 12
    for column, categories in facts.categories.items():
        assert set(data[column]) <= set(categories), column
    assert set(facts.categories) | set(facts.bounds) | {facts.id_column} == set(data.columns)
    assert data["age"].between(0, 100).all()
    clipped = (data["income"] > facts.bounds["income"].upper).mean()
    assert 0.01 <= clipped <= 0.05  # "a few percent" lie above the declared income bound
    assert (data["visits"] > facts.bounds["visits"].upper).mean() < 0.01
    for column in facts.bounds:
        assert column in facts.notes


def test_facts_do_not_depend_on_the_data() -> None:
    """Declared, not computed: another size or seed, hence other data, has the very same facts."""
    assert synthetic_patients(n_rows=50, seed=7).facts == synthetic_patients().facts


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"n_rows": 0}, ParameterError, "n_rows must be an integer >= 1, got n_rows=0"),
        ({"n_rows": 2.5}, ParameterError, "n_rows must be an integer >= 1, got n_rows=2.5"),
        ({"n_rows": "many"}, ParameterTypeError, "n_rows must be a real number, got n_rows='many' (str)"),
        ({"seed": -1}, ParameterError, "seed must be an integer >= 0, got seed=-1"),
    ],
)
def test_patients_refuse_bad_arguments(kwargs: dict, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        synthetic_patients(**kwargs)
    assert str(caught.value) == message
    assert isinstance(caught.value, DPDashError)


# --- tips --------------------------------------------------------------------------------------------


def test_tips_is_the_real_table(tips_example: ExampleDataset) -> None:
    data = tips_example.data
    assert data.shape == (244, 7)
    assert list(data.columns) == ["total_bill", "tip", "sex", "smoker", "day", "time", "size"]
    assert data["total_bill"].sum() == pytest.approx(4827.77)
    assert tips_example.name == "tips" and "Bryant" in tips_example.source


def test_tips_facts_fit_the_data(tips_example: ExampleDataset) -> None:
    facts, data = tips_example.facts, tips_example.data
    assert facts.bounds == {"total_bill": Bounds(0, 60), "tip": Bounds(0, 15), "size": Bounds(1, 10)}
    for column, bounds in facts.bounds.items():
        assert data[column].between(bounds.lower, bounds.upper).all(), column
    for column, categories in facts.categories.items():
        assert set(data[column]) == set(categories), column
    assert facts.id_column is None and facts.max_rows_per_person == 1


# --- the registry, values, and no network ------------------------------------------------------------


def test_examples_registry() -> None:
    assert list(EXAMPLES) == ["patients", "tips"]
    for name in EXAMPLES:
        example = load_example(name)
        assert isinstance(example, ExampleDataset) and example.name == name
        assert example.title and example.description and example.source
    with pytest.raises(ParameterError, match=r"name must be one of \('patients', 'tips'\), got name='iris'"):
        load_example("iris")


def test_each_load_gives_a_fresh_frame() -> None:
    first = load_example("tips")
    first.data.loc[0, "tip"] = -1.0
    assert load_example("tips").data.loc[0, "tip"] != -1.0


def test_examples_pickle_for_the_app_cache(tips_example: ExampleDataset) -> None:
    copy = pickle.loads(pickle.dumps(tips_example))
    pd.testing.assert_frame_equal(copy.data, tips_example.data)
    assert copy.facts == tips_example.facts


def test_loading_the_examples_opens_no_network_connection() -> None:
    """In a fresh interpreter (so plotly is imported under the guard), every socket call fails."""
    code = """
import socket

def refuse(*args, **kwargs):
    raise AssertionError("network access while loading an example")

socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse

from dpdash.datasets import EXAMPLES
for name, load in EXAMPLES.items():
    print(name, load().data.shape)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["patients", "(100000,", "8)", "tips", "(244,", "7)"]


# --- PublicFacts -------------------------------------------------------------------------------------


def test_public_facts_accept_pairs_and_normalise() -> None:
    facts = PublicFacts(bounds={"age": (0, 100)}, categories={"sex": ["f", "m"]})
    assert facts.bounds == {"age": Bounds(0.0, 100.0)} and facts.categories == {"sex": ("f", "m")}
    assert facts.id_column is None and facts.max_rows_per_person == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"bounds": {"age": (100, 0)}}, ParameterError, "lower < upper"),
        ({"bounds": {"age": (0, np.inf)}}, ParameterError, "finite"),
        ({"bounds": {"age": 100}}, ParameterTypeError, "pair (lower, upper)"),
        ({"categories": {"sex": []}}, ParameterError, "at least one category"),
        ({"categories": {"sex": ["f", "f"]}}, ParameterError, "distinct"),
        ({"bounds": {"x": (0, 1)}, "categories": {"x": ["a"]}}, ParameterError, "both"),
        ({"categories": {"id": ["a"]}, "unit": Facts(id_column="id")}, ParameterError, "id column"),
        ({"unit": "person"}, ParameterTypeError, "unit must be a dpdash.facts.Facts"),
    ],
)
def test_public_facts_refuse_bad_declarations(kwargs: dict, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as caught:
        PublicFacts(**kwargs)
    assert fragment in str(caught.value)
