"""Private synthetic tables: MST (McKenna, Miklau & Sheldon 2021), or AIM (McKenna et al. 2022) for a
workload of column pairs, on marginals measured where the table lives, with dpdash's own exact mechanisms
and events, estimated and sampled with Private-PGM (``mbi``).

The API (what a page builds on):

- ``synthesize(data, facts, epsilon=, delta=, method="mst", workload=(), rows=None, rng=None,
  identity=None, columns=None, bins=16)`` → ``SyntheticRelease`` (module ``synthesize``; AIM in module
  ``aim``, with ``workload=[(a, b), ...]``). ``rng`` given: a seeded preview
  for the data owner, not release-grade, spends nothing; ``rng=None``: a release, to be recorded with
  ``Ledger.spend_release(dataset, synthetic)`` (all its events in one transaction with its record)
  before the table is handed out.
- ``SyntheticRelease``: ``table``, ``measurements`` (each marginal's columns, σ, Δ₂, noisy counts),
  ``selections``, ``events``, ``rho``, ``domain``, ``to_dict()``/``to_json()`` (no true value), ``to_csv()``,
  ``to_parquet()`` (module ``record``).
- ``build_domain(facts, columns, bins=)`` → ``SyntheticDomain`` (module ``domain``).
- ``quality(true_df, synthetic)`` → ``Quality``: TVD of every one-way and measured two-way marginal, the
  difference of the association matrices (module ``quality``). NOT PRIVATE: owner-only preview figures.
- ``rho_for(epsilon, delta)``: the ρ a target (ε, δ) allows (module ``measure``, which states the
  accounting of every step).
"""

from dpdash.synthetic.domain import DEFAULT_BINS, SyntheticColumn, SyntheticDomain, build_domain
from dpdash.synthetic.measure import Measurement, Selection, rho_for
from dpdash.synthetic.quality import Quality, quality, tvd
from dpdash.synthetic.record import SyntheticRelease, table_fingerprint
from dpdash.synthetic.synthesize import METHODS, PREVIEW_SEED, synthesize

__all__ = [
    "DEFAULT_BINS",
    "METHODS",
    "PREVIEW_SEED",
    "Measurement",
    "Quality",
    "Selection",
    "SyntheticColumn",
    "SyntheticDomain",
    "SyntheticRelease",
    "build_domain",
    "quality",
    "rho_for",
    "synthesize",
    "table_fingerprint",
    "tvd",
]
