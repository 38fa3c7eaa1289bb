"""The one base exception every turnscore error derives from.

The CLI catches `TurnscoreError` and prints its message with a clean exit code; anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations


class TurnscoreError(Exception):
    """An expected failure whose message names the thing involved and how to fix it."""


class ConfigError(TurnscoreError):
    """`turnscore.toml` or an option is wrong; the message names the key and the fix."""
