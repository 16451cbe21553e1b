"""What does ε mean? The attacker's view of a privacy budget, in pictures and plain words."""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py (docs/contributing.md, Layout)

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpdash import risk
from dpdash.errors import DPDashError
from dpdash.mechanisms import Laplace
from dpdash.wording import guarantee
from ui.access import guard_page
from ui.chart_view import show_chart
from ui.charts import LAYOUT, icon_array_figure, posterior_figure, reference_figure, tradeoff_figure
from ui.ledger_session import ledger, registered
from ui.numbers import delta_text
from ui.state import active_table
from ui.text import md, show_guarantee
from ui.widgets import delta_control, epsilon_control

st.title("What does ε mean?")
guard_page(__file__)
show_guarantee(guarantee(active_table().facts.unit), key="risk_guarantee", lead="Differential privacy "
               "limits what anyone can learn about one person from a release, whatever else they know. These "
               "pictures turn ε into the attacker's odds. For the active table: ")  # fmt: skip

left, right = st.columns([3, 2], gap="large")
with left:
    epsilon = epsilon_control("risk_epsilon", label="ε to explain")
with right:
    prior = st.slider(
        "Attacker's belief before the release that a given person is in the data",
        min_value=0.01, max_value=0.99, value=0.5, step=0.01, format="%.2f", key="risk_prior",
    )  # fmt: skip
    delta = delta_control("risk_delta")
if epsilon is None:
    st.stop()

posterior = float(risk.posterior_bound(prior, epsilon))
icons = risk.icon_array(prior, epsilon)

st.subheader("The attacker's odds")
st.markdown(
    f"Before the release an attacker thinks a person is in the data with probability **{prior:.0%}**. "
    f"After an ε = {epsilon:g} release, whatever they see, they can be at most **{posterior:.1%}** sure "
    f"(the odds grow by at most e^ε ≈ {np.exp(epsilon):.3g}×; pure ε-DP, Kasiviswanathan & Smith 2014)."
)
picture, words = st.columns([2, 3], gap="large")
with picture:
    show_chart(
        icon_array_figure(before=icons.before, after=icons.after), key="risk_icons",
        summary=f"100 people drawn as dots. {icons.sentence()}",
        table=pd.DataFrame({
            "dots": ["right without the release", "at most this many more with it", "others"],
            "people (of 100)": [icons.before, icons.after - icons.before, 100 - icons.after],
        }),
    )  # fmt: skip
with words:
    st.markdown(f"#### {icons.sentence()}")
    st.caption(
        "Each dot is a person who is in the data with the attacker's prior probability. Blue: the attacker "
        "is right about them without the release. Orange: the most the release can add (rounded up)."
    )
epsilons = np.geomspace(0.01, 10, 200)
curve = risk.posterior_table([prior], epsilons)[0]
marks = [("your ε", epsilon, posterior)]
try:  # the active table's releases, and their total under its accountant, from the ledger
    record = registered(active_table())
    if record is not None:
        for made in ledger().releases(record):  # as every page counts them: a mean is one release
            if made.epsilon:  # its own ε (a record's, or its entries' sum by basic composition)
                believed = float(risk.posterior_bound(prior, made.epsilon))
                marks.append((f"release {made.number}", made.epsilon, believed))
        total = ledger().status(record).spent
        if total.events and math.isfinite(total.epsilon):
            marks.append((f"total ({total.accountant})", total.epsilon,
                          float(risk.posterior_bound(prior, total.epsilon))))  # fmt: skip
except DPDashError as error:
    st.warning(f"The ledger's releases are not shown: {md(error)}", icon=":material/warning:")
show_chart(
    posterior_figure(prior=prior, epsilons=epsilons, posteriors=curve, marks=marks),
    key="risk_posterior_chart",
)
if len(marks) > 1:
    st.caption(
        "Dots: your ε, each release of the active table at its own ε (a mean's sum and count together), and "
        "their total at the budget's δ under the table's accountant (the bound uses the total's ε; its δ is "
        "the small chance it may not hold)."
    )

st.subheader("Prior → posterior")
priors = np.array([0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9])
columns = sorted({0.1, 0.5, 1.0, 2.0, 5.0, round(epsilon, 6)})
table = pd.DataFrame(
    risk.posterior_table(priors, columns),
    index=[f"{p:.0%}" for p in priors],
    columns=[f"ε = {e:g}" for e in columns],
)
current = f"ε = {round(epsilon, 6):g}"
st.dataframe(
    table.style.format("{:.1%}").set_properties(subset=[current], **{"background-color": "#fde2cf"}),
    key="risk_table",
)
st.caption(f"Rows: the attacker's prior; columns: ε. Your ε ({epsilon:g}) is highlighted.")

st.subheader("The best possible membership test")
fpr = np.linspace(0, 1, 401)
max_tpr = risk.max_detection_rate(fpr, epsilon, delta)
at_one_percent = float(risk.max_detection_rate(0.01, epsilon, delta))
show_chart(tradeoff_figure(fpr=fpr, max_tpr=max_tpr, epsilon=epsilon, delta=delta), key="risk_tradeoff")
st.markdown(
    f"At **1% false positives** the best attacker detects at most **{at_one_percent:.1%}** of the people "
    f"who are in the data (ε = {epsilon:g}, δ = {delta:g}; Kairouz, Oh & Viswanath 2015). Random guessing "
    "detects 1%."
)

st.subheader("Reference points")
points = [(p.label, p.epsilon) for p in risk.REFERENCE_POINTS]
show_chart(
    reference_figure(points, epsilon), key="risk_reference_chart",
    summary=f"Reference ε values on a log scale; your ε = {epsilon:g}. The table after the chart lists them.",
    table=pd.DataFrame({"reference": [label for label, _ in points], "ε": [f"{e:.3g}" for _, e in points]}),
)  # fmt: skip
st.dataframe(
    pd.DataFrame(
        [
            {"reference": p.label, "ε": p.epsilon, "δ": delta_text(p.delta), "unit of privacy": p.unit,
             "time window": p.window, "source": p.source}
            for p in risk.REFERENCE_POINTS
        ]
    ),
    hide_index=True,
    column_config={"ε": st.column_config.NumberColumn(format="%.3g")},
    key="risk_reference_table",
)  # fmt: skip

st.subheader("Worked examples from the textbook")
with st.expander("Is Alice, who has diabetes, in the data? (neighbouring datasets)", expanded=True):
    st.markdown(
        "Two datasets differ only in Alice's record: the count of people with diabetes is 100 without her "
        f"and 101 with her. A Laplace release (ε = {epsilon:g}, sensitivity 1) has these two densities; at "
        f"every output their ratio is at most e^ε ≈ {np.exp(epsilon):.3g}, so no output tells the two "
        "datasets apart with confidence."
    )
    noise = Laplace(epsilon=epsilon, sensitivity=1.0).noise
    span = max(5.0, float(noise.isf(0.002)))
    x = np.linspace(100 - span, 101 + span, 600)
    figure = go.Figure()
    figure.add_scatter(x=x, y=noise.pdf(x - 100), name="without Alice (count 100)", line={"color": "#0072B2"})
    figure.add_scatter(x=x, y=noise.pdf(x - 101), name="with Alice (count 101)", line={"color": "#D55E00"})
    figure.update_layout(**LAYOUT, xaxis_title="released count", yaxis_title="density",
                         title="The two densities: without and with Alice")  # fmt: skip
    show_chart(figure, key="risk_alice_chart", nested=True)
with st.expander("10 000 name counts at once"):
    names = Laplace(epsilon=epsilon, sensitivity=1.0)
    st.markdown(
        f"Release 10 000 counts (each person in one count) with Laplace noise at ε = {epsilon:g}. With 95% "
        f"probability **all** of them are within **±{names.accuracy(0.95, 10_000):.2f}** of the truth "
        f"(exact), or ±{names.accuracy_union_bound(0.95, 10_000):.2f} by the textbook union bound "
        "ln(10 000/0.05)/ε (Dwork & Roth, Thm 3.8). At ε = 1 these are 12.18 and 12.21."
    )
