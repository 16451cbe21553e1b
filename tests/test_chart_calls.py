"""Every chart goes through ``ui.chart_view.show_chart`` (no Plotly toolbar, a table of its numbers): no
page or other ui module calls ``st.plotly_chart`` itself (issue 14, accessibility)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
HELPER = REPO_ROOT / "ui" / "chart_view.py"
FILES = sorted(
    [*(REPO_ROOT / "pages").rglob("*.py"), *(REPO_ROOT / "ui").rglob("*.py"), REPO_ROOT / "app.py"]
)


def _calls(path: Path, name: str) -> list[ast.Call]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "attr", None) == name or getattr(node.func, "id", None) == name)
    ]  # fmt: skip


@pytest.mark.parametrize(
    "path", [p for p in FILES if p != HELPER], ids=lambda p: p.relative_to(REPO_ROOT).as_posix()
)
def test_no_chart_bypasses_show_chart(path: Path) -> None:
    direct = _calls(path, "plotly_chart")
    assert not direct, f"{path.name}:{direct[0].lineno} calls plotly_chart; use ui.chart_view.show_chart"
    for call in _calls(path, "show_chart"):
        assert any(k.arg == "key" for k in call.keywords), f"{path.name}:{call.lineno}: show_chart needs key="


def test_the_helper_hides_the_toolbar_and_is_used() -> None:
    from ui.chart_view import CHART_CONFIG

    assert CHART_CONFIG == {"displayModeBar": False}
    assert len(_calls(HELPER, "plotly_chart")) == 1
    users = [p for p in FILES if _calls(p, "show_chart")]
    assert len(users) >= 6, users  # budget, explorer, risk, audit, previews, possible releases
