-- The staleness rule as a scalar macro (issue 15): the score runner finds every scorer's
-- pending pairs in one pass over `turns` and `scores` (warehouse.score_run.INSERT_PENDING),
-- applying it to each (turn, score) pair it joins, where calling the `score_staleness`
-- table macro once per scorer joined the whole of `scores`, `turns` and `turn_cases()`
-- again for each. `score_staleness` (what `score_coverage` counts by) now reads the
-- rule from here, so it is still spelled once.
--
-- score_stale: whether a score that recorded `score_hash` is stale for a turn whose
-- content_hash is `content_hash` and whose case now has `label_hash` (NULL: no case).
CREATE MACRO score_stale(score_hash, content_hash, label_hash) AS
    score_hash <> scored_hash(content_hash, label_hash, contains(score_hash, ':'));

CREATE OR REPLACE MACRO score_staleness() AS TABLE
SELECT s.turn_id, s.scorer,
       score_stale(s.content_hash, t.content_hash, c.label_hash) AS stale
FROM scores AS s
JOIN turns AS t ON t.turn_id = s.turn_id
LEFT JOIN turn_cases() AS c ON c.turn_id = s.turn_id;
