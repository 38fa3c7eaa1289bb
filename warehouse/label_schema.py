"""The `labels` contract (DESIGN §4), defined once: one row per labelled case.

`LABEL_COLUMNS` is the source: the loader's column lists (`warehouse.labels`), the README
table (`python -m turnscore.docs`) and the check of the migrated `labels` table
(`tests/warehouse/test_db.py`) are derived from it. The label fields scorers may read are
`warehouse.labels.LABEL_FIELDS`, a subset.
"""

from __future__ import annotations

import pyarrow as pa

from turnscore.ingest.schema import Field

_TEXTS = pa.list_(pa.string())

LABEL_COLUMNS: tuple[Field, ...] = (
    Field("case_id", pa.string(), False, "Case id; a turn whose `case_id` equals it joins it."),
    Field("input", pa.string(), False, "The request the case is about."),
    Field("input_norm", pa.string(), False, "`input` normalised (lowercase, no punctuation, collapsed spaces): turns without a case id join by their normalised request."),
    Field("canary", _TEXTS, True, "Values only a tool call can produce (`tool_grounding`)."),
    Field("ideal_response", pa.string(), True, "Reference answer (`answer_correctness`)."),
    Field("match_mode", pa.string(), True, "`exact`, `normalized` (default) or `contains`."),
    Field("expected_tools", _TEXTS, True, "Tools the case requires (`tool_call_accuracy`)."),
    Field("expected_tools_mode", pa.string(), True, "`any`, `all` (default), `exact` or `ordered`."),
    Field("should_decline", pa.bool_(), True, "The agent should decline: with no expected tools, no call is right."),
    Field("tags", _TEXTS, False, "Free tags, for people."),
    Field("source", pa.string(), False, "File the case was loaded from."),
    Field("run_id", pa.string(), False, "Labels run that last wrote the row."),
    Field("loaded_at", pa.timestamp("us", tz="UTC"), False, "When the row was last written, UTC."),
)
