"""The data card of a released synthetic table, as Markdown and JSON (Streamlit-free).

What it states is public: the columns and their domains (from the declared facts), ε, δ, ρ, the unit of
privacy, the method, the marginals measured, the rows and the SHA-256 of the CSV. The preview's quality
figures read the true table (NOT PRIVATE) and go in only when the owner includes them, labelled so.
"""

from __future__ import annotations

import json
from typing import Any

from dpdash.synthetic import Quality, SyntheticRelease
from dpdash.synthetic.quality import QUALITY_LABEL
from dpdash.synthetic.record import table_fingerprint

__all__ = ["CARD_FORMAT", "QUALITY_LABEL", "card_dict", "card_json", "card_markdown"]

CARD_FORMAT = "dpdash-synthetic-card-v1"


def card_dict(release: SyntheticRelease, preview_quality: Quality | None = None) -> dict[str, Any]:
    """The card's content; ``preview_quality`` adds the preview's figures, labelled NOT PRIVATE."""
    out: dict[str, Any] = {
        "format": CARD_FORMAT,
        "title": release.query_name,
        "method": release.method.upper(),
        "mechanism": release.mechanism,
        "epsilon": release.epsilon,
        "delta": release.delta,
        "rho": release.rho,
        "guarantee": release.guarantee,
        "unit_of_privacy": release.domain.unit.describe(),
        "columns": [c.to_dict() for c in release.domain.columns],
        "marginals_measured": [list(m) for m in release.marginals],
        "rows": len(release.table),
        "table_sha256": table_fingerprint(release.table),
        "dataset_identity": release.dataset_identity,
        "created_at": release.created_at,
        "release_grade": release.release_grade,
    }
    if preview_quality is not None:
        out["preview_quality"] = {
            "label": QUALITY_LABEL,
            "one_way_tvd": dict(preview_quality.one_way),
            "two_way_tvd": {f"{a} × {b}": v for (a, b), v in preview_quality.two_way.items()},
            "mean_one_way_tvd": preview_quality.mean_one_way,
            "mean_two_way_tvd": preview_quality.mean_two_way if preview_quality.two_way else None,
        }
    return out


def card_json(release: SyntheticRelease, preview_quality: Quality | None = None) -> str:
    return json.dumps(card_dict(release, preview_quality), ensure_ascii=False, indent=2, allow_nan=False)


def card_markdown(release: SyntheticRelease, preview_quality: Quality | None = None) -> str:
    """The card as a Markdown page a reader of the table can keep beside it."""
    card = card_dict(release, preview_quality)
    lines = [
        f"# Data card: {card['title']}",
        "",
        f"- **Method:** {card['method']}: {card['mechanism']}",
        f"- **Privacy:** ε = {release.epsilon:g}, δ = {release.delta:g} ({card['guarantee']})",
        f"- **Unit of privacy:** {card['unit_of_privacy']}",
        f"- **Rows:** {card['rows']:,} · SHA-256 of the CSV: `{card['table_sha256']}`",
        f"- **Released:** {card['created_at']} UTC · dataset `{card['dataset_identity']}`",
        "",
        "Every row is drawn from a model fitted to the noisy marginals below; no row is a real person's.",
        "",
        "## Columns and their domains (declared public facts)",
        "",
        "| Column | Kind | Cells |",
        "| --- | --- | --- |",
    ]
    for column in card["columns"]:
        cells = ", ".join(str(label) for label in column["labels"])
        lines.append(f"| {column['name']} | {column['kind']} | {cells} |")
    lines += ["", "## Marginals measured (discrete Gaussian noise)", ""]
    lines += [f"- {' × '.join(m)}" for m in card["marginals_measured"]]
    figures = card.get("preview_quality")
    if figures is not None:
        lines += ["", "## Quality of the preview", "", f"**{figures['label']}.**", "",
                  "| Marginal | Total-variation distance |", "| --- | --- |"]  # fmt: skip
        lines += [f"| {name} | {value:.4f} |" for name, value in figures["one_way_tvd"].items()]
        lines += [f"| {name} | {value:.4f} |" for name, value in figures["two_way_tvd"].items()]
    return "\n".join(lines) + "\n"
