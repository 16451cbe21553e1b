"""Built-in example tables, each with the public facts a data owner would declare for it.

Nothing is downloaded: ``synthetic_patients`` is generated here, deterministically, and ``tips`` is the
small real table bundled inside the installed ``plotly`` package.

**Public facts are declared, never computed.** A bound such as "age is between 0 and 100" is domain
knowledge written down before looking at the data; reading the minimum and maximum off the private table
would itself leak information about the people in it (a release calibrated to an observed maximum
reveals that maximum). The facts of each example below are therefore constants of this module, chosen
from what is known about the kind of data, and some values of the data may fall outside a bound (they
are clipped by the queries, which is the point of showing clipping bias next to noise).

>>> example = synthetic_patients(n_rows=1_000)
>>> example.data.shape
(1000, 8)
>>> example.facts.bounds["age"], example.facts.max_rows_per_person
(Bounds(lower=0.0, upper=100.0), 5)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.facts import Bounds, Facts, GroupBounds, categories_tuple

__all__ = [
    "BOUNDED_KINDS",
    "CATEGORY_KINDS",
    "DEFAULT_SEED",
    "DIAGNOSES",
    "EXAMPLES",
    "ExampleDataset",
    "PublicFacts",
    "carried_facts",
    "load_example",
    "synthetic_patients",
    "tips",
]

#: The column kinds (``dpdash.loading.column_types``) that take declared bounds, and those that take a
#: declared list of categories.
BOUNDED_KINDS = ("numeric", "integer")
CATEGORY_KINDS = ("categorical", "boolean", "text")

#: The seed ``synthetic_patients`` uses unless told otherwise: the same table on every run and machine.
DEFAULT_SEED = 20_240_601


@dataclass(frozen=True, slots=True)
class PublicFacts:
    """Everything declared public about a table, before anyone looks at it.

    Args:
        bounds: column → ``Bounds`` (or a ``(lower, upper)`` pair): the declared domain of each numeric
            column; bounded queries (sum, mean, quantile) clamp values outside it.
        categories: column → the declared list of categories, in display order; a histogram reports
            every one of them (also those with no rows), so its shape does not reveal which are empty.
        unit: the neighbour relation and unit of privacy (``dpdash.facts.Facts``): the id column and
            the most rows one person can have (``rows_per_person``).
        notes: column → where its declared fact comes from, for the people reading a release.
        group_bounds: categorical column → ``GroupBounds`` (or a pair (k, m)): a person has rows in at
            most k of its categories and at most m rows in each; a histogram or group-by of that column
            then has sensitivity k·m instead of c (enforced on the id column: without one they are kept
            but not used, ``bounds_for_groups``).

    Dictionaries rather than read-only mappings, so the value pickles (``st.cache_data`` needs that);
    treat them as read-only.
    """

    bounds: dict[str, Bounds] = field(default_factory=dict)
    categories: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    unit: Facts = field(default_factory=Facts)
    notes: dict[str, str] = field(default_factory=dict)
    group_bounds: dict[str, GroupBounds] = field(default_factory=dict)

    def __post_init__(self) -> None:
        bounds = {column: Bounds.of(value, column) for column, value in dict(self.bounds).items()}
        categories = {
            column: categories_tuple(values, f"categories[{column!r}]")
            for column, values in dict(self.categories).items()
        }
        both = sorted(set(bounds) & set(categories))
        if both:
            raise ParameterError(f"a column has either bounds or categories, got both for columns {both}")
        if not isinstance(self.unit, Facts):
            raise ParameterTypeError(f"unit must be a dpdash.facts.Facts, got unit={self.unit!r}")
        id_column = self.unit.id_column
        if id_column is not None and (id_column in bounds or id_column in categories):
            raise ParameterError(
                f"the id column must not also have bounds or categories, got id_column={id_column!r}"
            )
        group_bounds = {str(c): GroupBounds.of(value) for c, value in dict(self.group_bounds).items()}
        stray = sorted(set(group_bounds) - set(categories))
        if stray:
            raise ParameterError(
                f"per-group bounds (k, m) are declared for categorical columns with categories, got them for "
                f"{stray}: declare their categories first"
            )
        # Frozen: the normalised values go in through object.__setattr__.
        object.__setattr__(self, "group_bounds", group_bounds)
        object.__setattr__(self, "bounds", bounds)
        object.__setattr__(self, "categories", categories)
        object.__setattr__(self, "notes", dict(self.notes))

    @property
    def id_column(self) -> str | None:
        """The column that identifies a person, or ``None`` (then each row counts as a person)."""
        return self.unit.id_column

    def bounds_for_groups(self, column: str) -> GroupBounds | None:
        """The per-group bounds a histogram or group-by of ``column`` uses: declared, with an id column."""
        return self.group_bounds.get(column) if self.unit.id_column is not None else None

    @property
    def max_rows_per_person(self) -> int:
        """The most rows one person can have: the c of "a person with up to c rows"."""
        return self.unit.rows_per_person


def carried_facts(previous: PublicFacts, kinds: dict[str, str], *, unit: Facts) -> PublicFacts:
    """The public facts of a table's previous version, carried to a new version whose columns have these
    ``kinds``, under the new version's ``unit`` of privacy.

    A column's bounds are kept where it still exists and still takes bounds (``BOUNDED_KINDS``), its
    category list (with its per-group bounds, which need an id column) where it still takes categories
    (``CATEGORY_KINDS``), and its note with either; the id column takes neither. Public facts are
    declared, not read off the data: nothing here looks at the new version's values.

    >>> old = PublicFacts(bounds={"age": (0, 120), "gone": (0, 1)}, categories={"city": ("Oslo", "Bergen")})
    >>> new = carried_facts(old, {"age": "integer", "city": "text"}, unit=Facts())
    >>> sorted(new.bounds), new.categories["city"]
    (['age'], ('Oslo', 'Bergen'))
    """
    fits = {c for c, kind in kinds.items() if c != unit.id_column}
    bounds = {c: b for c, b in previous.bounds.items() if c in fits and kinds[c] in BOUNDED_KINDS}
    categories = {c: v for c, v in previous.categories.items() if c in fits and kinds[c] in CATEGORY_KINDS}
    groups = {c: g for c, g in previous.group_bounds.items() if c in categories} if unit.id_column else {}
    notes = {c: n for c, n in previous.notes.items() if c in bounds or c in categories}
    return PublicFacts(bounds=bounds, categories=categories, unit=unit, notes=notes, group_bounds=groups)


@dataclass(frozen=True, slots=True, eq=False)  # eq=False: a DataFrame has no single truth value for ==
class ExampleDataset:
    """A built-in table with its declared public facts.

    ``data`` is a fresh DataFrame on every call of the loader, so a caller may modify it.
    """

    name: str
    title: str
    description: str
    data: pd.DataFrame
    facts: PublicFacts
    source: str


# --- the synthetic patient table ---------------------------------------------------------------------

#: ICD-10 codes of the ``diagnosis`` column, with what they mean.
DIAGNOSES = {
    "J06": "acute upper respiratory infection",
    "I10": "essential (primary) hypertension",
    "M54": "back pain (dorsalgia)",
    "E78": "disorders of lipoprotein metabolism",
    "F32": "depressive episode",
    "J45": "asthma",
    "K21": "gastro-oesophageal reflux disease",
    "N39": "other disorders of the urinary system",
    "I25": "chronic ischaemic heart disease",
    "G43": "migraine",
    "C50": "malignant neoplasm of breast",
    "E11": "type 2 diabetes mellitus",
}
# Relative frequency of each code except E11, which only people with diabetes get (half their rows).
_DIAGNOSIS_WEIGHTS = np.array([20, 16, 12, 10, 8, 7, 6, 6, 5, 4, 3], dtype=float)
_OTHER_DIAGNOSES = np.array(list(DIAGNOSES)[:-1], dtype=object)
_E11_SHARE_OF_DIABETIC_ROWS = 0.5

_SEXES = np.array(["female", "male"], dtype=object)
_SEX_P = [0.52, 0.48]
_REGIONS = np.array(["North", "South", "East", "West", "Central"], dtype=object)
_REGION_P = [0.22, 0.26, 0.18, 0.20, 0.14]
_REGION_INCOME = np.array([1.00, 0.90, 0.95, 1.05, 1.20])  # multiplies the median income
_YES_NO = np.array(["no", "yes"], dtype=object)

# Rows per person: most people have one row, a few have up to MAX_ROWS (mean ≈ 1.28).
_MAX_ROWS = 5
_ROWS_P = np.array([0.82, 0.11, 0.045, 0.018, 0.007])
_ROWS_P = _ROWS_P / _ROWS_P.sum()

_MEDIAN_INCOME = 35_000.0
_INCOME_SIGMA = 0.75
_INCOME_BOUND = 150_000.0
_VISITS_BOUND = 20

_PATIENT_FACTS = PublicFacts(
    bounds={"age": (0, 100), "income": (0, _INCOME_BOUND), "visits": (0, _VISITS_BOUND)},
    categories={
        "sex": tuple(_SEXES),
        "region": tuple(_REGIONS),
        "diagnosis": tuple(DIAGNOSES),
        "diabetes": tuple(_YES_NO),
    },
    unit=Facts(rows_per_person=_MAX_ROWS, id_column="person_id"),
    notes={
        "age": "years; the registry records ages 0 to 100 (older ages are recorded as 100)",
        "income": (
            "annual household income in euros; 150 000 is the top of the registry's income bands, "
            "so a few percent of the values lie above it and are clipped"
        ),
        "visits": "outpatient visits on the episode; the registry caps the field at 20",
        "diagnosis": "the twelve ICD-10 codes the registry uses (see dpdash.datasets.DIAGNOSES)",
        "person_id": "the registry keeps at most 5 episodes per person and year",
    },
)


def _thousands(n: int) -> str:
    return f"{n:,}".replace(",", " ")


def synthetic_patients(n_rows: int = 100_000, *, seed: int = DEFAULT_SEED) -> ExampleDataset:
    """A synthetic patient table: one row per episode of care, some people on several rows.

    Generated, not sampled from real people, by numpy's ``Generator`` seeded with ``seed``: the same
    ``(n_rows, seed)`` gives the same table on every run (100 000 rows take about 0.1 s).

    Columns: ``person_id`` (text such as ``"P004211"``; about 78 000 people in 100 000 rows, 1 to 5 rows
    each, most with one), ``age`` (integer 0–100, per person), ``sex`` (female/male), ``region`` (five),
    ``diagnosis`` (twelve ICD-10 codes, skewed: J06 most common, C50 least), ``diabetes`` (yes/no; its
    chance rises with age, and only people with diabetes have E11 rows), ``income`` (euros, log-normal,
    right-skewed, per person; about 3% above the declared bound of 150 000) and ``visits`` (integer count
    per row, more with age).

    The facts (bounds, categories, id column, at most 5 rows per person) are declared constants of this
    module, as a data owner would declare them from the registry's documentation; they are not read off
    the generated data.

    >>> synthetic_patients(n_rows=10).data.columns.tolist()
    ['person_id', 'age', 'sex', 'region', 'diagnosis', 'diabetes', 'income', 'visits']
    """
    n_rows = check.positive_int(n_rows, "n_rows")
    seed = check.non_negative_int(seed, "seed")
    rng = np.random.default_rng(seed)

    # Rows per person, drawn until they cover n_rows; the last person is cut to fit exactly.
    counts = np.empty(0, dtype=np.int64)
    while counts.sum() < n_rows:
        more = math.ceil((n_rows - counts.sum()) / 1.2) + 16
        counts = np.concatenate([counts, rng.choice(_MAX_ROWS, size=more, p=_ROWS_P) + 1])
    ends = np.cumsum(counts)
    n_people = int(np.searchsorted(ends, n_rows)) + 1
    counts = counts[:n_people]
    counts[-1] -= int(ends[n_people - 1]) - n_rows

    # One value per person.
    age = np.minimum(np.floor(rng.beta(1.7, 1.9, n_people) * 101), 100).astype(np.int64)
    sex = rng.choice(2, size=n_people, p=_SEX_P)
    region = rng.choice(len(_REGIONS), size=n_people, p=_REGION_P)
    diabetes = rng.random(n_people) < 1.0 / (1.0 + np.exp(6.2 - 0.065 * age))
    log_income = rng.normal(math.log(_MEDIAN_INCOME), _INCOME_SIGMA, n_people)
    income = np.round(np.exp(log_income) * _REGION_INCOME[region], -1)
    ids = rng.permutation(n_people) + 1

    # One value per row.
    person = np.repeat(np.arange(n_people), counts)
    age_r = age[person]
    diagnosis = _OTHER_DIAGNOSES[
        rng.choice(len(_OTHER_DIAGNOSES), size=n_rows, p=_DIAGNOSIS_WEIGHTS / _DIAGNOSIS_WEIGHTS.sum())
    ]
    diagnosis[diabetes[person] & (rng.random(n_rows) < _E11_SHARE_OF_DIABETIC_ROWS)] = "E11"
    mean_visits = 1.0 + age_r / 25.0
    visits = rng.negative_binomial(1.5, 1.5 / (1.5 + mean_visits)).astype(np.int64)

    order = rng.permutation(n_rows)  # a person's rows are scattered, as in a real extract
    person, age_r, diagnosis, visits = person[order], age_r[order], diagnosis[order], visits[order]
    data = pd.DataFrame(
        {
            "person_id": pd.array(np.char.add("P", np.char.zfill(ids[person].astype(str), 6)), dtype="str"),
            "age": age_r,
            "sex": pd.array(_SEXES[sex[person]], dtype="str"),
            "region": pd.array(_REGIONS[region[person]], dtype="str"),
            "diagnosis": pd.array(diagnosis, dtype="str"),
            "diabetes": pd.array(_YES_NO[diabetes[person].astype(np.int64)], dtype="str"),
            "income": income[person],
            "visits": visits,
        }
    )
    return ExampleDataset(
        name="patients",
        title=f"Synthetic patients ({_thousands(n_rows)} rows)",
        description=(
            f"A synthetic patient register (generated by dpdash, seed {seed}): one row per episode of "
            f"care, {_thousands(n_people)} people on {_thousands(n_rows)} rows, at most {_MAX_ROWS} rows "
            "per person. No real person is in it."
        ),
        data=data,
        facts=_PATIENT_FACTS,
        source="generated by dpdash.datasets.synthetic_patients",
    )


# --- tips, bundled with plotly -----------------------------------------------------------------------

_TIPS_FACTS = PublicFacts(
    bounds={"total_bill": (0, 60), "tip": (0, 15), "size": (1, 10)},
    categories={
        "sex": ("Female", "Male"),
        "smoker": ("No", "Yes"),
        "day": ("Thur", "Fri", "Sat", "Sun"),
        "time": ("Lunch", "Dinner"),
    },
    notes={
        "total_bill": "US dollars (early 1990s); declared as a plausible range for one table's bill",
        "tip": "US dollars; declared as a plausible range for one tip",
        "size": "people at the table",
        "day": "the levels listed in the dataset's published codebook (the days the waiter worked)",
    },
    unit=Facts(rows_per_person=1),  # a row is one party's bill; returning customers are not identified
)


def tips() -> ExampleDataset:
    """The ``tips`` table bundled with plotly: 244 restaurant bills recorded by one waiter.

    Read from the file inside the installed plotly package (``plotly.data.tips()``), never downloaded.
    Each row is one bill of one party, so the unit of privacy is a row. The bounds (bill 0–60 $, tip
    0–15 $, party size 1–10) are declared as plausible ranges and the categories are the codebook's
    levels; none of them is computed from the data.

    >>> tips().data.shape
    (244, 7)
    """
    import plotly.data  # deferred: importing plotly takes a while and only this example needs it

    data = pd.DataFrame(plotly.data.tips())
    return ExampleDataset(
        name="tips",
        title="Restaurant tips (244 rows)",
        description=(
            "244 restaurant bills and tips recorded by one waiter over a few months: bill, tip, the "
            "payer's sex, smoker at the table, day, lunch or dinner, and party size. A small real table."
        ),
        data=data,
        facts=_TIPS_FACTS,
        source=(
            "Bryant, P. G. and Smith, M. A. (1995), Practical Data Analysis: Case Studies in Business "
            "Statistics, Irwin; as bundled with plotly (plotly.data.tips)"
        ),
    )


#: Every built-in example: name → loader, in the order a picker should offer them.
EXAMPLES: dict[str, Callable[[], ExampleDataset]] = {
    "patients": synthetic_patients,
    "tips": tips,
}


def load_example(name: str) -> ExampleDataset:
    """The example called ``name`` (a key of ``EXAMPLES``), freshly loaded."""
    return EXAMPLES[check.one_of(name, "name", tuple(EXAMPLES))]()
