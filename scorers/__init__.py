"""Scorers: the protocol, the registry and the scorers themselves (DESIGN §5).

Importing this package registers every built-in scorer in `REGISTRY`.
"""

# Importing a scorer module registers it. Judged scorers register the same way: their
# import line (`judged`) sits in this sorted block.
from turnscore.scorers import call_accuracy as _call_accuracy
from turnscore.scorers import call_validity as _call_validity
from turnscore.scorers import correctness as _correctness
from turnscore.scorers import groundedness as _groundedness
from turnscore.scorers import grounding as _grounding
from turnscore.scorers import judged as _judged  # noqa: F401 (registers on import)
from turnscore.scorers.base import (
    REGISTRY,
    Case,
    Judge,
    Score,
    Scorer,
    Status,
    Turns,
    Usage,
    scorer,
)
from turnscore.scorers.labels import LabelError, read_labels
from turnscore.scorers.text import normalize_expr, normalize_series, normalize_text

__all__ = [
    "REGISTRY",
    "Case",
    "Judge",
    "LabelError",
    "Score",
    "Scorer",
    "Status",
    "Turns",
    "Usage",
    "normalize_expr",
    "normalize_series",
    "normalize_text",
    "read_labels",
    "scorer",
]

_BUILT_IN = (_call_accuracy, _call_validity, _correctness, _grounding, _groundedness)
