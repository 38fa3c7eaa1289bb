-- grain: one row per agent, judge pair and quadrant (all four quadrants per agent)
-- order: agent, judge, usage_high DESC, tractability_high DESC
-- columns:
--   agent              agent name, else service name
--   judge              the judge of both scores, or 'tool usage judge + tractability judge'
--   quadrant           usage high/low x tractability high/low (high: 5 or more)
--   usage_high         Tool Usage of 5 or more
--   tractability_high  Tractability of 5 or more
--   turns              turns in the quadrant (both scores present)
--   share              share of the agent's turns (with this judge) in the quadrant
--   mean_tool_usage    mean Tool Usage in the quadrant
--   mean_tractability  mean Tractability in the quadrant
--   suggests           what turns in this quadrant suggest doing
WITH pairs AS (
    SELECT
        turn_agent(t.agent_name, t.service_name) AS agent,
        CASE WHEN u.judge = r.judge THEN u.judge ELSE u.judge || ' + ' || r.judge END AS judge,
        u.value AS usage,
        r.value AS tractability
    FROM scores AS u
    JOIN scores AS r ON r.turn_id = u.turn_id
    JOIN turns AS t ON t.turn_id = u.turn_id
    WHERE u.scorer = 'tool_usage' AND u.status = 'scored'
      AND r.scorer = 'tractability' AND r.status = 'scored'
),
quadrants (usage_high, tractability_high, quadrant, suggests) AS (
    VALUES
        (true, true, 'high usage, high tractability',
         'fine: good tool use on tasks that suit the agent'),
        (false, true, 'low usage, high tractability',
         'fix the agent: the task suits it, but it misuses its tools (prompt, tool descriptions, model)'),
        (true, false, 'high usage, low tractability',
         'extend the tool set: the agent uses what it has, but no tool covers the hard part'),
        (false, false, 'low usage, low tractability',
         'the tooling more than the agents: cover the hard part with tools first, then revisit the agent')
),
groups AS (
    SELECT agent, judge, count(*) AS total FROM pairs GROUP BY agent, judge
)
SELECT
    g.agent,
    g.judge,
    q.quadrant,
    q.usage_high,
    q.tractability_high,
    count(b.usage) AS turns,
    count(b.usage) / g.total AS share,
    avg(b.usage) AS mean_tool_usage,
    avg(b.tractability) AS mean_tractability,
    q.suggests
FROM groups AS g
CROSS JOIN quadrants AS q
LEFT JOIN pairs AS b
    ON b.agent IS NOT DISTINCT FROM g.agent AND b.judge = g.judge
    AND (b.usage >= 5) = q.usage_high AND (b.tractability >= 5) = q.tractability_high
GROUP BY g.agent, g.judge, g.total, q.quadrant, q.usage_high, q.tractability_high, q.suggests
