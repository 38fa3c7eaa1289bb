-- grain: one row per agent and UTC day
-- order: day, agent
-- columns:
--   agent                        agent name, else service name
--   day                          UTC date the turns started
--   turns                        turns that day
--   canary_scored                turns tool_grounding scored
--   canary_inconclusive          turns without a canary (not in the rate)
--   canary_pass_rate             share of scored turns whose answer held every canary
--   correctness_scored           turns answer_correctness scored
--   correctness_inconclusive     turns without a reference answer (not in the rate)
--   correctness_rate             share of scored turns matching the reference
--   call_accuracy_scored         turns tool_call_accuracy scored
--   call_accuracy_inconclusive   turns without expected tools (not in the rate)
--   call_accuracy_rate           share of scored turns that called the expected tools
--   groundedness_scored          turns groundedness scored
--   groundedness_inconclusive    turns whose tool output was not captured (not in the rate)
--   hallucination_rate           share of scored turns with an unsupported specific
WITH days AS (
    SELECT
        turn_agent(agent_name, service_name) AS agent,
        CAST(timezone('UTC', started_at) AS DATE) AS day,
        count(*) AS turns
    FROM turns
    GROUP BY ALL
),
-- Counted apart from the turns, so a turn's four score rows need no count(DISTINCT).
rates AS (
    SELECT
        turn_agent(t.agent_name, t.service_name) AS agent,
        CAST(timezone('UTC', t.started_at) AS DATE) AS day,
        count(*) FILTER (WHERE s.scorer = 'tool_grounding' AND s.status = 'scored')
            AS canary_scored,
        count(*) FILTER (WHERE s.scorer = 'tool_grounding' AND s.status = 'inconclusive')
            AS canary_inconclusive,
        avg(s.value) FILTER (WHERE s.scorer = 'tool_grounding' AND s.status = 'scored')
            AS canary_pass_rate,
        count(*) FILTER (WHERE s.scorer = 'answer_correctness' AND s.status = 'scored')
            AS correctness_scored,
        count(*) FILTER (WHERE s.scorer = 'answer_correctness' AND s.status = 'inconclusive')
            AS correctness_inconclusive,
        avg(s.value) FILTER (WHERE s.scorer = 'answer_correctness' AND s.status = 'scored')
            AS correctness_rate,
        count(*) FILTER (WHERE s.scorer = 'tool_call_accuracy' AND s.status = 'scored')
            AS call_accuracy_scored,
        count(*) FILTER (WHERE s.scorer = 'tool_call_accuracy' AND s.status = 'inconclusive')
            AS call_accuracy_inconclusive,
        avg(s.value) FILTER (WHERE s.scorer = 'tool_call_accuracy' AND s.status = 'scored')
            AS call_accuracy_rate,
        count(*) FILTER (WHERE s.scorer = 'groundedness' AND s.status = 'scored')
            AS groundedness_scored,
        count(*) FILTER (WHERE s.scorer = 'groundedness' AND s.status = 'inconclusive')
            AS groundedness_inconclusive,
        avg(CASE WHEN s.value = 0 THEN 1.0 ELSE 0.0 END)
            FILTER (WHERE s.scorer = 'groundedness' AND s.status = 'scored') AS hallucination_rate
    FROM scores AS s
    JOIN turns AS t ON t.turn_id = s.turn_id
    WHERE s.scorer IN ('tool_grounding', 'answer_correctness', 'tool_call_accuracy',
                       'groundedness')
    GROUP BY ALL
)
SELECT
    d.agent,
    d.day,
    d.turns,
    coalesce(r.canary_scored, 0) AS canary_scored,
    coalesce(r.canary_inconclusive, 0) AS canary_inconclusive,
    r.canary_pass_rate,
    coalesce(r.correctness_scored, 0) AS correctness_scored,
    coalesce(r.correctness_inconclusive, 0) AS correctness_inconclusive,
    r.correctness_rate,
    coalesce(r.call_accuracy_scored, 0) AS call_accuracy_scored,
    coalesce(r.call_accuracy_inconclusive, 0) AS call_accuracy_inconclusive,
    r.call_accuracy_rate,
    coalesce(r.groundedness_scored, 0) AS groundedness_scored,
    coalesce(r.groundedness_inconclusive, 0) AS groundedness_inconclusive,
    r.hallucination_rate
FROM days AS d
LEFT JOIN rates AS r ON r.agent IS NOT DISTINCT FROM d.agent AND r.day = d.day
