"""The one error hierarchy for problems a user should read: what went wrong and how to fix it.

Library code raises these and never prints or exits; the CLI and the UI turn them into a message.
"""
from __future__ import annotations


class EcoLensError(Exception):
    """Base class: `message` says what was wrong, `hint` says how to fix it."""

    title = "EcoLens error"

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class InputError(EcoLensError):
    """The user's input (query, path, filter, image, file) is not usable."""

    title = "Invalid input"


class NotReady(EcoLensError):
    """The request is fine but comes too early: the photo collection is still being prepared."""

    title = "Please wait"


class NotFoundError(EcoLensError):
    """Something the user named (a photo, taxon, session, file) does not exist."""

    title = "Not found"


class ConfigError(EcoLensError):
    """A setting has a bad value or an unknown name; raised at start-up."""

    title = "Configuration error"


class BusyError(EcoLensError):
    """Too many costly searches are running and waiting already: try again shortly (plain searches still run)."""

    title = "Busy"


class BackendError(EcoLensError):
    """A model backend is missing, misconfigured, failed or timed out."""

    title = "Backend unavailable"


class DeadlinePassed(BackendError):
    """A backend call was cut short, or not sent, because the search's own time limit passed: the search's
    limit, not a fault of the backend (it counts against no circuit breaker)."""

    title = "Time limit reached"


class BackendUnavailable(BackendError):
    """A backend was not called at all: it failed its check or its last calls, and is left alone for a
    cool-down (its stage marks the affected items as not checked)."""

    title = "Backend paused"


class BudgetExceeded(EcoLensError):
    """A per-query budget (generated pictures, judge calls) was used up."""

    title = "Budget reached"


class StorageError(EcoLensError):
    """The database or the disk could not be written or read (locked too long, full, damaged)."""

    title = "Not saved"
