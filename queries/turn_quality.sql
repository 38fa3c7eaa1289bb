-- grain: one row per agent and convention the turns were decoded from
-- order: with_issues DESC, agent, convention
-- columns:
--   agent                       agent name, else service name
--   convention                  decoder(s) that produced the turns (turns.convention)
--   turns                       turns
--   ok                          turns with status ok
--   errors                      turns with status error
--   incomplete                  turns with status incomplete (spans missing, or no answer captured)
--   no_answer                   turns with no final answer
--   no_tools                    turns whose agent had no tool, declared or called
--   with_issues                 turns with any issue below: what assembly could not trust
--   request_not_captured        turns whose request was not captured
--   answer_not_captured         turns whose answer was not captured, or only a placeholder
--   model_call_without_content  turns with a model call that reported usage but no messages
--   unreconciled_calls          turns with a requested call and a tool execution that could not be joined
--   call_content_not_captured   turns with a call whose arguments or result were not captured
--   first_started               start of the earliest turn
--   last_started                start of the latest turn
SELECT
    -- A row with many issues (content capture switched off, a form read only in part) is a
    -- stack whose turns, and so whose scores, are not to be trusted yet.
    turn_agent(agent_name, service_name) AS agent,
    convention,
    count(*) AS turns,
    count(*) FILTER (WHERE status = 'ok') AS ok,
    count(*) FILTER (WHERE status = 'error') AS errors,
    count(*) FILTER (WHERE status = 'incomplete') AS incomplete,
    count(*) FILTER (WHERE final_answer IS NULL) AS no_answer,
    count(*) FILTER (WHERE tools_source = 'none') AS no_tools,
    count(*) FILTER (WHERE len(issues) > 0) AS with_issues,
    count(*) FILTER (WHERE list_contains(issues, 'request_not_captured')) AS request_not_captured,
    count(*) FILTER (WHERE list_contains(issues, 'answer_not_captured')) AS answer_not_captured,
    count(*) FILTER (WHERE list_contains(issues, 'model_call_without_content'))
        AS model_call_without_content,
    count(*) FILTER (WHERE list_contains(issues, 'unreconciled_calls')) AS unreconciled_calls,
    count(*) FILTER (WHERE list_contains(issues, 'call_content_not_captured'))
        AS call_content_not_captured,
    min(started_at) AS first_started,
    max(started_at) AS last_started
FROM turns
GROUP BY ALL
