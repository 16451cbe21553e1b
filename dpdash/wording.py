"""The privacy guarantee in words: one plain sentence for anyone, and the exact technical form beside it.

Every page, the sidebar and the stakeholder report state the guarantee through :func:`guarantee`, so it is
written once. The plain form says who is protected (a row, or a person with up to c rows), from what (being
in the table or not, under add/remove; the values of their rows, under substitution), how much (e^ε, plus δ
when δ > 0), and, when the rows-per-person limit is only declared, that nothing checks it. δ is worded as
what it is in (ε, δ)-DP, an amount added to every probability (MATH.md), never as "ε holds except with
probability δ", which (ε, δ)-DP does not imply.

>>> from dpdash.facts import Facts
>>> print(guarantee(Facts(rows_per_person=3, id_column="patient"), 0.5).plain)
Protects each person (up to 3 rows each, identified by “patient”): the chance of any result of this \
release changes by at most a factor of e^0.5 ≈ 1.65 whether or not any one person's rows are in the table. \
Each person counts with at most 3 of their rows, picked by a fixed rule (not by row order); their other \
rows and rows without an id are left out of every answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpdash.facts import Facts, Neighbours

__all__ = [
    "Guarantee",
    "accuracy_words",
    "bounding_choice",
    "delta_words",
    "factor",
    "guarantee",
    "mechanism_name",
    "percent",
    "protected_unit",
    "relation_choice",
]


@dataclass(frozen=True, slots=True)
class Guarantee:
    """A guarantee in two forms: ``plain`` (a sentence or two for a non-specialist) and ``technical``
    (the neighbour relation, the (ε, δ)-DP definition with the numbers, and the accountant)."""

    plain: str
    technical: str


def factor(epsilon: float) -> str:
    """e^ε with its value: ``"e^0.5 ≈ 1.65"`` (ε to 4 significant digits, as the pages show it; e^ε to 3,
    whole numbers from 1 000 on).

    >>> factor(1.0), factor(10.0), factor(50.0)
    ('e^1 ≈ 2.72', 'e^10 ≈ 22,026', 'e^50 ≈ 5.2 × 10^21')
    """
    if not math.isfinite(epsilon):
        return "e^ε = ∞ (no protection can be stated)"
    if epsilon < math.log(1e6):
        value = math.exp(epsilon)
        shown = f"{value:.3g}" if value < 1000 else f"{value:,.0f}"
    else:  # in log space: e^ε overflows a float from ε ≈ 710
        exponent = math.floor(epsilon / math.log(10))
        mantissa = 10 ** (epsilon / math.log(10) - exponent)
        if round(mantissa, 1) >= 10:
            mantissa, exponent = mantissa / 10, exponent + 1
        shown = f"{mantissa:.1f} × 10^{exponent}"
    return f"e^{epsilon:.4g} ≈ {shown}"


def delta_words(delta: float) -> str:
    """δ as a number, and as "1 in N" when 1/δ is a whole number: ``"0.00001 (1 in 100,000)"``.

    >>> delta_words(1e-5), delta_words(3e-7), delta_words(1.25e-5)
    ('0.00001 (1 in 100,000)', '0.0000003', '0.0000125 (1 in 80,000)')
    """
    plain = f"{delta:.10f}".rstrip("0") if delta >= 1e-9 else f"{delta:g}"
    shown = plain if len(plain) <= 9 else f"{delta:g}"
    inverse = 1.0 / delta
    if abs(inverse - round(inverse)) <= 1e-9 * inverse:
        return f"{shown} (1 in {round(inverse):,})"
    return shown


def protected_unit(facts: Facts) -> str:
    """Who is protected, in a few words: ``"each row"`` or ``"each person (up to 3 rows each, …)"``."""
    c = facts.rows_per_person
    if c == 1 and facts.id_column is None:
        return "each row"
    rows = "one row each" if c == 1 else f"up to {c} rows each"
    who = f", identified by “{facts.id_column}”" if facts.id_column is not None else ""
    return f"each person ({rows}{who})"


def _one_row(facts: Facts) -> bool:
    return facts.rows_per_person == 1 and facts.id_column is None


def _hidden(facts: Facts) -> str:
    """What the guarantee hides about one unit, under the neighbour relation."""
    if facts.neighbours is Neighbours.ADD_REMOVE:
        unit = "any one row is" if _one_row(facts) else "any one person's rows are"
        return f"whether or not {unit} in the table"
    if _one_row(facts):
        return "whatever values any one row holds (how many rows there are is not protected)"
    return (
        "whatever values any one person's rows hold (how many rows there are, and how many each person "
        "has, are not protected)"
    )


def _caveat(facts: Facts) -> str:
    """What the unit rests on: truncation by the id column, or the owner's word."""
    c = facts.rows_per_person
    if facts.id_column is not None:
        kept = "one of their rows" if c == 1 else f"at most {c} of their rows"
        return (
            f"Each person counts with {kept}, picked by a fixed rule (not by row order); their other rows "
            "and rows without an id are left out of every answer."
        )
    if c == 1:
        return (
            "Each row is one person only if, as declared, no one has more than one row: nothing checks "
            "this (no person id column)."
        )
    return (
        f"This holds only if, as declared, no one has more than {c} rows: nothing checks this (no person "
        "id column)."
    )


def _technical_unit(facts: Facts) -> str:
    c = facts.rows_per_person
    rows = "1 row" if c == 1 else f"{c} rows"
    unit = "one row" if _one_row(facts) else f"one person's rows (at most {rows})"
    relation = (
        f"x′ is x with {unit} added or removed"
        if facts.neighbours is Neighbours.ADD_REMOVE
        else f"x′ is x with {unit} replaced by as many rows with other values (the number of rows, and "
        "each person's, are public)"
    )
    if facts.id_column is not None:
        how = (
            f"enforced by truncation on column {facts.id_column!r}: each id keeps {rows}, picked by a hash "
            "of the id and each row, a uniform choice of its rows (not table order, no value preferred), "
            "rows without an id are dropped"
        )
    else:
        how = "trusted as declared: there is no person id column, so it is not checked"
    return f"Neighbouring tables x, x′: {relation}. At most {rows} per person, {how}."


def guarantee(
    facts: Facts,
    epsilon: float | None = None,
    delta: float = 0.0,
    *,
    scope: str = "this release",
    accountant: str | None = None,
    caveat: bool = True,
) -> Guarantee:
    """The guarantee of ``scope`` (e.g. ``"all releases from this table together"``) under ``facts`` at
    (ε, δ), in plain words and in its technical form.

    Args:
        facts: the neighbour relation and the unit of privacy.
        epsilon: ε of the guarantee; ``None`` when not chosen yet (only who is protected is said).
        delta: δ ≥ 0 of the guarantee.
        scope: what the guarantee covers, as a noun phrase.
        accountant: the accountant that adds releases up, named in the technical form.
        caveat: whether the plain form says what the unit rests on (truncation, or the owner's word).
    """
    who, hidden, rests = protected_unit(facts), _hidden(facts), _caveat(facts) if caveat else ""
    unit = _technical_unit(facts)
    if epsilon is None:
        about = (
            "whether any one " + ("row is" if _one_row(facts) else "person's rows are") + " in the table"
            if facts.neighbours is Neighbours.ADD_REMOVE
            else "the values of any one " + ("row" if _one_row(facts) else "person's rows")
        )
        plain = f"Protects {who}: each release's ε limits what it can reveal about {about}. {rests}"
        return Guarantee(plain.rstrip(), unit)
    extra = f", plus at most an extra {delta_words(delta)}," if delta > 0 else ""
    plain = (
        f"Protects {who}: the chance of any result of {scope} changes by at most a factor of "
        f"{factor(epsilon)}{extra} {hidden}. {rests}"
    )
    plain = plain.rstrip()
    kind = "pure ε-DP, δ = 0" if delta == 0 else "approximate DP"
    technical = (
        f"{unit} Guarantee ({kind}): ({epsilon:g}, {delta:g})-differential privacy for {scope}: for every "
        "pair of neighbouring tables x, x′ and every set S of results, "
        f"Pr[M(x) ∈ S] ≤ e^ε · Pr[M(x′) ∈ S] + δ with ε = {epsilon:g}, δ = {delta:g}. "
        + (
            "Sensitivities are computed for one row; k rows of one person are protected only at group "
            "privacy's (kε, k·e^((k−1)ε)·δ)."
            if _one_row(facts)
            else "Sensitivities are computed for all of one person's rows together, so ε covers a whole "
            "person with no group-privacy factor."
        )
    )
    if delta > 0:
        technical += (
            " δ is added to every probability; it is not a chance that the e^ε bound fails "
            "((ε, δ)-DP does not imply that reading)."
        )
    if accountant is not None:
        technical += f" Several releases are added up by the {accountant!r} accountant at this δ."
    return Guarantee(plain, technical)


def mechanism_name(recorded: str) -> str:
    """A mechanism as people name it (its ``name``, as the menus show it), from the class name a release
    records: ``"ExponentialMechanism"`` reads ``"Exponential mechanism"``. Any other text is returned as
    it is.

    >>> mechanism_name("ExponentialMechanism"), mechanism_name("PermuteAndFlip"), mechanism_name("Laplace")
    ('Exponential mechanism', 'Permute-and-flip', 'Laplace')
    """
    import dpdash.mechanisms as mechanisms  # here: the mechanisms need none of this module

    found = getattr(mechanisms, recorded, None) if recorded in mechanisms.__all__ else None
    return str(getattr(found, "name", recorded)) if isinstance(found, type) else recorded


def relation_choice(neighbours: Neighbours) -> str:
    """The neighbour relation as a choice on the Data page."""
    if neighbours is Neighbours.ADD_REMOVE:
        return "Add or remove: hide whether a person is in the table at all"
    return "Replace: hide the values of a person's rows (the number of rows is public)"


def bounding_choice(bounding: str) -> str:
    """How the id column enforces c, as a choice on the Data page."""
    if bounding == "weight":
        return (
            "Weight each of a person's n rows by min(1, c/n): the expected answer of that choice, with no "
            "sampling error (counts, sums, means and histograms; continuous noise)"
        )
    return "Keep c of each person's rows, a uniform choice (every query; any noise)"


def percent(probability: float) -> str:
    """A probability as a percentage with up to 4 significant digits: ``percent(0.999) == "99.9%"``."""
    return f"{probability * 100:.4g}%"


def accuracy_words(
    confidence: float,
    method: str,
    count: int,
    scope: str = "all",
    joint_half_width: float | None = None,
) -> str:
    """What a release's ± means, in one sentence (``method``, ``scope`` and ``joint_half_width`` as in
    ``dpdash.published.Accuracy``; ``scope="all"``: the ± holds for all values at once, as in records
    made before dpdash stated both).

    >>> accuracy_words(0.95, "exact", 3)
    'With probability at least 95%, all 3 released values are within their ± of the true values at once.'
    >>> accuracy_words(0.95, "exact", 3, "each", 7)[31:]
    'each released value is within its ± of its true value; all 3 at once are within ± 7.'
    """
    chance = (
        f"With probability {'about' if method.startswith('simulated') else 'at least'} {percent(confidence)}"
    )
    if method == "utility bound":
        return f"{chance}, each chosen candidate's score is within ± of the best candidate's score."
    if method == "count gap bound":
        return f"{chance}, the chosen category's count is within ± rows of the largest count."
    if method.endswith("selection chances"):
        truth = "the best public candidate (the candidate closest in rank to the true quantile)"
        if count == 1:
            return f"{chance}, the released quantile is within ± of {truth}, in the column's units."
        return f"{chance}, each released quantile is within its ± of {truth}, in the column's units" + (
            f"; all {count} at once within ± {joint_half_width:.4g}." if joint_half_width is not None else "."
        )
    where = " (simulated at the released values)" if method == "simulated" else ""
    if count == 1:
        return f"{chance}, the released value is within ± of the true value{where}."
    if scope == "each":
        return f"{chance}, each released value is within its ± of its true value{where}" + (
            f"; all {count} at once are within ± {joint_half_width:.4g}."
            if joint_half_width is not None
            else "."
        )
    return f"{chance}, all {count} released values are within their ± of the true values at once."
