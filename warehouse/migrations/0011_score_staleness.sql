-- The label-aware staleness rule, once (issue 15): the score runner's pending query and
-- the `score_coverage` view both read `score_staleness()`; nothing else spells the rule.
--
-- scored_hash: what a score records as computed from. A scorer that reads labels
-- records `<turn content_hash>:<label_hash of its case>` ('' for none), any other the
-- content_hash alone (hex: it never holds ':').
CREATE MACRO scored_hash(content_hash, label_hash, reads_labels) AS
    CASE WHEN reads_labels THEN content_hash || ':' || coalesce(label_hash, '')
         ELSE content_hash END;

-- score_staleness: per current score of a turn still in the warehouse, whether it was
-- computed on other content than the turn's now, or (a row that recorded a case) on
-- another case than the turn's now (new, changed or removed).
CREATE MACRO score_staleness() AS TABLE
SELECT s.turn_id, s.scorer,
       s.content_hash <> scored_hash(t.content_hash, c.label_hash,
                                     contains(s.content_hash, ':')) AS stale
FROM scores AS s
JOIN turns AS t ON t.turn_id = s.turn_id
LEFT JOIN turn_cases() AS c ON c.turn_id = s.turn_id;
