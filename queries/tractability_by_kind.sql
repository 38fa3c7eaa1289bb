-- grain: one row per judge, request kind and missing capability of scored Tractability
-- order: judge, low_turns DESC, request_kind, missing_capability
-- columns:
--   judge               judge: a model id, or rules-v1
--   request_kind        the judge's short label for the request (arithmetic, lookup, ...)
--   missing_capability  what the tool set lacked, as the judge named it (NULL: nothing)
--   turns               scored turns
--   mean_tractability   mean Tractability (0-10)
--   low_turns           turns below 5
--   low_share           share of turns below 5
--   agents              agents whose turns fall here
--   strain_signs        distinct signs of strain the judge saw in low turns' answers
--   example_request     one request from a low turn (else any turn), to read
WITH s AS (
    SELECT
        s.judge,
        s.value,
        coalesce(json_extract_string(s.details, '$.request_kind'), '(unknown)') AS request_kind,
        json_extract_string(s.details, '$.missing_capability') AS missing_capability,
        coalesce(from_json(json_extract(s.details, '$.strain_signs'), '["VARCHAR"]'), [])
            AS strain_signs,
        turn_agent(t.agent_name, t.service_name) AS agent,
        t.request
    FROM scores AS s
    JOIN turns AS t ON t.turn_id = s.turn_id
    WHERE s.scorer = 'tractability' AND s.status = 'scored'
)
SELECT
    judge,
    request_kind,
    missing_capability,
    count(*) AS turns,
    avg(value) AS mean_tractability,
    count(*) FILTER (WHERE value < 5) AS low_turns,
    avg(CASE WHEN value < 5 THEN 1.0 ELSE 0.0 END) AS low_share,
    list(DISTINCT agent ORDER BY agent) FILTER (WHERE agent IS NOT NULL) AS agents,
    coalesce(list_sort(list_distinct(flatten(list(strain_signs) FILTER (WHERE value < 5)))),
             []) AS strain_signs,
    coalesce(arg_min(request, value) FILTER (WHERE value < 5), any_value(request))
        AS example_request
FROM s
GROUP BY judge, request_kind, missing_capability
