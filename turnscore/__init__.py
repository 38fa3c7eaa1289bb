"""turnscore: how well do your LLM agents use their tools?

The stages live in top-level folders mapped into this namespace:
`turnscore.ingest`, `turnscore.scorers`, `turnscore.warehouse`, `turnscore.queries`,
`turnscore.cli` (see DESIGN §2). Imports flow one way, in that order.
"""

__version__ = "0.1.0"
