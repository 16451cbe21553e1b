"""The exception tree of dpdash.

Every error a caller can cause is a ``DPDashError``, so the app can show it as a message. Each one also
subclasses the builtin a Python user would expect (``ValueError`` for a bad value, ``TypeError`` for a
wrong type), as diffprivlib's ``BudgetError(ValueError)`` does.
"""

from __future__ import annotations

__all__ = ["DPDashError", "ParameterError", "ParameterTypeError"]


class DPDashError(Exception):
    """Base class of every error dpdash raises on purpose."""


class ParameterError(DPDashError, ValueError):
    """A parameter has the right type but a value outside its rule (e.g. ``epsilon=-1``)."""


class ParameterTypeError(DPDashError, TypeError):
    """A parameter has the wrong type (e.g. ``epsilon="abc"``)."""
