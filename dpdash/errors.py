"""The exception tree of dpdash.

Every error a caller can cause is a ``DPDashError``, so the app can show it as a message. Each one also
subclasses the builtin a Python user would expect (``ValueError`` for a bad value, ``TypeError`` for a
wrong type), as diffprivlib's ``BudgetError(ValueError)`` does.
"""

from __future__ import annotations

__all__ = [
    "AccessDenied",
    "BudgetExceededError",
    "DPDashError",
    "LedgerError",
    "ParameterError",
    "ParameterTypeError",
    "RenderError",
    "RolesFileError",
    "UnsupportedEventError",
]


class DPDashError(Exception):
    """Base class of every error dpdash raises on purpose."""


class ParameterError(DPDashError, ValueError):
    """A parameter has the right type but a value outside its rule (e.g. ``epsilon=-1``)."""


class ParameterTypeError(DPDashError, TypeError):
    """A parameter has the wrong type (e.g. ``epsilon="abc"``)."""


class BudgetExceededError(DPDashError, ValueError):
    """A release (or a plan) would spend more privacy budget than remains; nothing was recorded.

    The message says what remains. Attributes (``None`` where not known):
        remaining_epsilon: the ε still unspent at the budget's δ, under the dataset's accountant.
        requested_epsilon: the total ε the release would have brought the dataset to.
    """

    def __init__(
        self,
        message: str,
        *,
        remaining_epsilon: float | None = None,
        requested_epsilon: float | None = None,
    ) -> None:
        super().__init__(message)
        self.remaining_epsilon = remaining_epsilon
        self.requested_epsilon = requested_epsilon


class UnsupportedEventError(DPDashError, ValueError):
    """An accountant cannot account for an event; the message names the event and says why."""


class LedgerError(DPDashError):
    """A ledger file (or an exported ledger) is corrupted, foreign, newer than this dpdash, or inconsistent.

    The file is left exactly as it was.
    """


class AccessDenied(DPDashError, PermissionError):
    """The signed-in person's role on a table does not allow what was asked (``dpdash.access``); nothing
    was done. The message names who, what and why."""


class RolesFileError(DPDashError, ValueError):
    """The roles file (``DPDASH_ROLES``, ``dpdash.access``) cannot be read or says something unclear; the
    message names the file, the entry and the rule."""


class RenderError(DPDashError, RuntimeError):
    """A report could not be rendered to PDF (no Chromium, or Chromium failed); the message says which
    and what to do. Nothing was written."""
