-- grain: one row per UTC day and scorer
-- order: day, scorer
-- columns:
--   day            UTC date the turns started
--   scorer         scorer name
--   turns          turns with a row for this scorer that day
--   mean_value     mean value over scored turns (0-1 code scorers, 0-10 judged)
--   scored         turns scored
--   inconclusive   turns the scorer could not judge (missing labels, uncaptured content)
--   not_run        turns the scorer does not apply to
--   errors         turns where scoring failed
SELECT
    CAST(timezone('UTC', t.started_at) AS DATE) AS day,
    s.scorer,
    count(*) AS turns,
    avg(s.value) FILTER (WHERE s.status = 'scored') AS mean_value,
    count(*) FILTER (WHERE s.status = 'scored') AS scored,
    count(*) FILTER (WHERE s.status = 'inconclusive') AS inconclusive,
    count(*) FILTER (WHERE s.status = 'not_run') AS not_run,
    count(*) FILTER (WHERE s.status = 'error') AS errors
FROM scores AS s
JOIN turns AS t ON t.turn_id = s.turn_id
GROUP BY ALL
