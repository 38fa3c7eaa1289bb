"""The report's SQL, one named constant per question it asks.

The report reads the base tables (`turns`, `scores`, `ingest_errors`, `runs`), not the
views in `queries/`, so a view being reshaped never breaks the nightly report. Every
query is parameterised by a half-open period `[$start, $end)` over `turns.started_at`
(TIMESTAMPTZ, UTC); scorer names and thresholds are bound too, never spliced in.
"""

from __future__ import annotations

# The turns of the period; each query below starts from it. `agent` as the views name it
# (the warehouse's `turn_agent` macro: the agent name, else the service name).
_PERIOD = """pt AS (
    SELECT *, coalesce(turn_agent(agent_name, service_name), '(no agent name)') AS agent
    FROM turns WHERE started_at >= $start AND started_at < $end
)"""

DATA_RANGE = "SELECT min(started_at), max(started_at), count(*) FROM turns"

TURN_TOTALS = f"""
WITH {_PERIOD},
pc AS (SELECT unnest(calls) AS call FROM pt)
SELECT
    (SELECT count(*) FROM pt) AS turns,
    (SELECT count(DISTINCT conversation_id) FROM pt) AS conversations,
    (SELECT count(DISTINCT agent) FROM pt) AS agents,
    (SELECT count(*) FILTER (WHERE status = 'error') FROM pt) AS failed_turns,
    (SELECT count(*) FILTER (WHERE status = 'incomplete') FROM pt) AS incomplete_turns,
    (SELECT count(*) FROM pc) AS tool_calls,
    (SELECT count(*) FILTER (WHERE call.status = 'error') FROM pc) AS tool_errors
"""

# Per scorer (agent NULL, is_total) and per agent and scorer. `low_share` is only
# meaningful on the 0-10 judged scale; `zero_share` on the 0-1 scale is the fail rate.
SCORER_STATS = f"""
WITH {_PERIOD}
SELECT
    grouping(agent) = 1 AS is_total,
    agent,
    s.scorer,
    count(*) AS rows,
    count(*) FILTER (WHERE s.status = 'scored') AS scored,
    avg(s.value) FILTER (WHERE s.status = 'scored') AS mean_value,
    avg(CASE WHEN s.value = 0 THEN 1.0 ELSE 0.0 END) FILTER (WHERE s.status = 'scored')
        AS zero_share,
    avg(CASE WHEN s.value < $low THEN 1.0 ELSE 0.0 END) FILTER (WHERE s.status = 'scored')
        AS low_share,
    count(*) FILTER (WHERE s.status = 'inconclusive') AS inconclusive,
    count(*) FILTER (WHERE s.status = 'not_run') AS not_run,
    count(*) FILTER (WHERE s.status = 'error') AS errors
FROM scores AS s
JOIN (SELECT turn_id, agent FROM pt) AS t
    ON t.turn_id = s.turn_id
GROUP BY GROUPING SETS ((agent, s.scorer), (s.scorer))
ORDER BY s.scorer, is_total DESC, agent
"""

# A tool counts for a turn when it was declared there or called there. `flagged_calls`
# are calls the Tool Usage verdict marked wrong (choice or arguments). Means are split by
# whether the turn called the tool: a tool left unused can be the agent's mistake too.
TOOL_USAGE_BY_TOOL = f"""
WITH {_PERIOD},
declared AS (SELECT pt.turn_id, tool.name AS tool FROM pt, unnest(pt.tools) AS u(tool)),
called AS (
    SELECT pt.turn_id, call.name AS tool, count(*) AS calls
    FROM pt, unnest(pt.calls) AS u(call) GROUP BY ALL
),
tool_turns AS (
    SELECT turn_id, tool FROM declared UNION SELECT turn_id, tool FROM called
),
usage AS (
    SELECT turn_id, value, details FROM scores WHERE scorer = $usage AND status = 'scored'
),
verdicts AS (
    SELECT usage.turn_id, v ->> 'tool' AS tool,
           (v ->> 'choice_ok') = 'false' OR (v ->> 'arguments_ok') = 'false' AS wrong
    FROM usage, unnest(CAST(coalesce(json_extract(usage.details, '$.calls'), '[]') AS JSON[]))
        AS u(v)
),
flagged AS (
    SELECT turn_id, tool, count(*) FILTER (WHERE wrong) AS n FROM verdicts GROUP BY ALL
)
SELECT
    tt.tool,
    count(*) AS turns_available,
    count(c.turn_id) AS turns_called,
    coalesce(sum(c.calls), 0) AS calls,
    count(usage.value) FILTER (WHERE c.turn_id IS NOT NULL) AS scored_called,
    avg(usage.value) FILTER (WHERE c.turn_id IS NOT NULL) AS mean_usage_called,
    avg(usage.value) FILTER (WHERE c.turn_id IS NULL) AS mean_usage_not_called,
    avg(CASE WHEN usage.value < $low THEN 1.0 ELSE 0.0 END) FILTER (WHERE c.turn_id IS NOT NULL)
        AS low_share_called,
    coalesce(sum(f.n), 0) AS flagged_calls
FROM tool_turns AS tt
LEFT JOIN called AS c ON c.turn_id = tt.turn_id AND c.tool = tt.tool
LEFT JOIN usage ON usage.turn_id = tt.turn_id
LEFT JOIN flagged AS f ON f.turn_id = tt.turn_id AND f.tool = tt.tool
GROUP BY tt.tool
ORDER BY turns_called DESC, tt.tool
"""

# One row per turn with both judged scores: the quadrant chart's points.
USAGE_VS_TRACTABILITY = f"""
WITH {_PERIOD}
SELECT pt.turn_id, pt.agent,
       u.value AS usage, r.value AS tractability
FROM pt
JOIN scores AS u ON u.turn_id = pt.turn_id AND u.scorer = $usage AND u.status = 'scored'
JOIN scores AS r ON r.turn_id = pt.turn_id AND r.scorer = $tractability
    AND r.status = 'scored'
ORDER BY agent, pt.turn_id
"""

SCORE_DISTRIBUTION = f"""
WITH {_PERIOD}
SELECT s.scorer, round(s.value, 1) AS value, count(*) AS n
FROM scores AS s JOIN pt ON pt.turn_id = s.turn_id
WHERE s.status = 'scored' AND s.value IS NOT NULL
GROUP BY ALL
ORDER BY s.scorer, value
"""

DAILY_SCORES = f"""
WITH {_PERIOD}
SELECT CAST(timezone('UTC', pt.started_at) AS DATE) AS day, s.scorer,
       count(*) AS scored, avg(s.value) AS mean_value,
       avg(CASE WHEN s.value = 0 THEN 1.0 ELSE 0.0 END) AS zero_share
FROM scores AS s JOIN pt ON pt.turn_id = s.turn_id
WHERE s.status = 'scored'
GROUP BY ALL
ORDER BY day, s.scorer
"""

DAILY_TURNS = f"""
WITH {_PERIOD}
SELECT CAST(timezone('UTC', started_at) AS DATE) AS day,
       count(*) AS turns,
       count(*) FILTER (WHERE status <> 'ok') AS failed_turns,
       sum(len(calls)) AS tool_calls,
       sum(len(list_filter(calls, lambda c: c.status = 'error'))) AS tool_errors
FROM pt
GROUP BY ALL
ORDER BY day
"""

TOOL_ERRORS = f"""
WITH {_PERIOD},
pc AS (SELECT unnest(calls) AS call FROM pt)
SELECT
    call.name AS tool,
    count(*) AS calls,
    count(*) FILTER (WHERE call.status = 'error') AS errors,
    count(*) FILTER (WHERE call.status = 'no_result') AS no_result,
    quantile_cont(call.duration_ms, 0.5) AS p50_ms,
    quantile_cont(call.duration_ms, 0.95) AS p95_ms,
    max(call.duration_ms) AS max_ms,
    mode(call.error) FILTER (WHERE call.error IS NOT NULL) AS common_error
FROM pc
GROUP BY ALL
ORDER BY errors DESC, calls DESC, tool
"""

JUDGE_COST = f"""
WITH {_PERIOD}
SELECT s.scorer, s.judge,
       count(*) AS rows,
       sum(s.input_tokens) AS input_tokens,
       sum(s.output_tokens) AS output_tokens,
       sum(s.cost_usd) AS cost_usd,
       avg(s.latency_ms) AS mean_latency_ms,
       sum(s.attempts) AS attempts
FROM scores AS s JOIN pt ON pt.turn_id = s.turn_id
WHERE s.judge IS NOT NULL
GROUP BY ALL
ORDER BY cost_usd DESC NULLS LAST, s.scorer, s.judge
"""

# The turns with the lowest judged score (the lower of Tool Usage and Tractability),
# with everything needed to read them: request, calls, answer, and every "why".
LOWEST_TURNS = f"""
WITH {_PERIOD},
judged AS (
    SELECT pt.turn_id,
           any_value(s.value) FILTER (WHERE s.scorer = $usage) AS usage,
           any_value(s.value) FILTER (WHERE s.scorer = $tractability) AS tractability
    FROM pt JOIN scores AS s ON s.turn_id = pt.turn_id
    WHERE s.status = 'scored' AND s.scorer IN ($usage, $tractability)
    GROUP BY pt.turn_id
),
ranked AS (
    SELECT turn_id, usage, tractability,
           row_number() OVER (ORDER BY least(coalesce(usage, 10), coalesce(tractability, 10)),
                              coalesce(usage, 10) + coalesce(tractability, 10), turn_id) AS rank
    FROM judged
    QUALIFY rank <= $limit
)
SELECT r.rank, r.turn_id, pt.agent, pt.started_at,
       pt.request, pt.calls, pt.final_answer, pt.status, r.usage, r.tractability,
       list(struct_pack(scorer := s.scorer, status := s.status, value := s.value,
                        explanation := s.explanation, details := CAST(s.details AS VARCHAR))
            ORDER BY s.scorer NOT IN ($usage, $tractability), s.scorer)
           FILTER (WHERE s.scorer IS NOT NULL) AS scores
FROM ranked AS r
JOIN pt ON pt.turn_id = r.turn_id
LEFT JOIN scores AS s ON s.turn_id = r.turn_id
    AND (s.scorer IN ($usage, $tractability) OR (s.status = 'scored' AND s.value = 0))
GROUP BY ALL
ORDER BY r.rank
"""

# Ingest errors carry no turn time; those recorded from the period's start to a day
# after its end are the ones a run reading the period's files would have written.
INGEST_ERRORS = """
SELECT source, position, trace_id, span_id, message, recorded_at
FROM ingest_errors
WHERE recorded_at >= $start AND recorded_at < $end + INTERVAL 1 DAY
ORDER BY recorded_at, source, position
"""

ERRORED_SCORES = f"""
WITH {_PERIOD}
SELECT s.turn_id, s.scorer, s.attempts, coalesce(s.error, s.explanation) AS error
FROM scores AS s JOIN pt ON pt.turn_id = s.turn_id
WHERE s.status = 'error'
ORDER BY s.scorer, s.turn_id
"""

FAILED_TURNS = f"""
WITH {_PERIOD}
SELECT turn_id, agent, status, error
FROM pt WHERE status <> 'ok'
ORDER BY started_at, turn_id
"""

# What assembly could not trust (`turns.issues`), per agent and convention: the stacks whose
# content was not captured, or is read only in part.
TURN_ISSUES = f"""
WITH {_PERIOD}
SELECT agent, convention, issue, count(*) AS turns
FROM (SELECT agent, convention, unnest(issues) AS issue FROM pt)
GROUP BY ALL
ORDER BY turns DESC, agent, convention, issue
"""

RUN_PROBLEMS = """
SELECT run_id, kind, started_at, outcome, error
FROM runs
WHERE started_at >= $start AND started_at < $end + INTERVAL 1 DAY
  AND (outcome IS NULL OR outcome <> 'ok')
ORDER BY started_at
"""


def first_rows(query: str) -> str:
    """`query` (which ends with its ORDER BY) cut to its first `$listed` rows."""
    return f"{query.rstrip().rstrip(';')}\nLIMIT $listed"


def count_of(query: str) -> str:
    """How many rows `query` returns, without fetching them."""
    return f"SELECT count(*) FROM (\n{query.rstrip().rstrip(';')}\n)"
