-- grain: one row per tool call
-- columns:
--   turn_id       the turn that made the call
--   agent         agent name, else service name
--   day           UTC date the turn started
--   call_index    position of the call in the turn, from 0
--   call_id       the call id, when recorded
--   tool          tool name
--   step          which model call asked for it, from 0
--   status        ok, error or no_result (no execution or result found)
--   error         the tool's error, when it failed
--   started_at    when the tool ran (UTC), when known
--   duration_ms   how long it ran, when known
--   arguments     arguments as JSON text
--   result        the tool's result text
SELECT
    t.turn_id,
    turn_agent(t.agent_name, t.service_name) AS agent,
    CAST(timezone('UTC', t.started_at) AS DATE) AS day,
    u.call_index,
    u.call.call_id AS call_id,
    u.call.name AS tool,
    u.call.step AS step,
    u.call.status AS status,
    u.call.error AS error,
    u.call.started_at AS started_at,
    u.call.duration_ms AS duration_ms,
    u.call.arguments AS arguments,
    u.call.result AS result
FROM turns AS t
CROSS JOIN LATERAL (
    SELECT unnest(t.calls) AS call, unnest(range(len(t.calls))) AS call_index
) AS u
