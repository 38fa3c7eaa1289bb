-- grain: one row per turn, with its scores (the dashboards' base)
-- columns:
--   turn_id             stable turn id
--   trace_id            trace of the turn's first span
--   conversation_id     conversation (session) id
--   turn_index          order within the conversation, from 0
--   agent               agent name, else service name
--   agent_name          agent name as recorded
--   service_name        resource service.name
--   model               model of the turn's model calls
--   started_at          start of the turn (UTC)
--   day                 UTC date of started_at
--   duration_ms         turn duration
--   status              ok, error or incomplete
--   error               what failed, when status is not ok
--   request             the user message
--   final_answer        the final answer, when there is one
--   tools_source        declared, inferred or none
--   tools_available     number of tools available
--   calls               number of tool calls
--   call_errors         tool calls that failed
--   llm_calls           model calls
--   input_tokens        input tokens (leaf model calls)
--   output_tokens       output tokens (leaf model calls)
--   case_id             labelled case id carried by the spans
--   convention          decoder(s) that produced the turn
--   tool_usage          Tool Usage (0-10), NULL unless scored
--   tool_usage_explanation  Tool Usage assessment
--   tractability        Tractability (0-10), NULL unless scored
--   tractability_explanation  Tractability assessment
--   tool_grounding      1 every canary present, 0 one missing
--   answer_correctness  1 matches the reference, 0 not
--   tool_call_accuracy  1 called the expected tools, 0 not
--   groundedness        1 every specific traced to a source, 0 not
--   call_validity       share of valid calls
--   *                   one value column per other registered scorer (see turn_scores)
SELECT
    t.turn_id,
    t.trace_id,
    t.conversation_id,
    t.turn_index,
    turn_agent(t.agent_name, t.service_name) AS agent,
    t.agent_name,
    t.service_name,
    t.model,
    t.started_at,
    CAST(timezone('UTC', t.started_at) AS DATE) AS day,
    t.duration_ms,
    t.status,
    t.error,
    t.request,
    t.final_answer,
    t.tools_source,
    len(t.tools) AS tools_available,
    len(t.calls) AS calls,
    len(list_filter(t.calls, lambda c: c.status = 'error')) AS call_errors,
    t.llm_calls,
    t.input_tokens,
    t.output_tokens,
    t.case_id,
    t.convention,
    s.* EXCLUDE (turn_id)
FROM turns AS t
LEFT JOIN turn_scores AS s ON s.turn_id = t.turn_id
