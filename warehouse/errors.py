"""Exceptions raised by the warehouse."""

from __future__ import annotations

from pathlib import Path

from turnscore.errors import TurnscoreError


class WarehouseError(TurnscoreError):
    """Base for warehouse failures."""


class WarehouseBusy(WarehouseError):
    """Another process holds the warehouse's writer lock."""

    def __init__(self, lock_path: Path, holder: str | None = None) -> None:
        who = f" (held by {holder})" if holder else ""
        super().__init__(
            f"the warehouse is busy: another turnscore run holds {lock_path}{who}. "
            "Wait for it to finish, or run again with waiting enabled."
        )
        self.lock_path = lock_path


class WarehouseMissing(WarehouseError):
    """No warehouse database where one was expected."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"no warehouse at {path}: run `turnscore ingest` first, or pass --warehouse DIR"
        )
        self.path = path


class MigrationError(WarehouseError):
    """A migration failed to apply; the database is left at the previous migration."""


class QueryRejected(WarehouseError):
    """`turnscore query` was given something other than one read-only query."""


class QueryLimitReached(WarehouseError):
    """`turnscore query` ran past its timeout or memory limit; the message names the knob."""


class UnknownScorer(WarehouseError):
    """A scorer name that is not in the registry."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(
            f"unknown scorer {name!r}; known scorers: {', '.join(sorted(known)) or '(none)'}"
        )
        self.name = name


class InvalidOption(WarehouseError):
    """A run option out of range; the message names the option and the valid range."""
