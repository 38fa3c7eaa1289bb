-- The label-aware staleness rule, once (issue 15). The score runner and the
-- `score_coverage` view both read these; nothing else spells the rule. Table macros,
-- not views: they are the rule, not data a reader browses (a published snapshot
-- materialises every view as a table).
--
-- label_hashes: a case's fingerprint, its id and the label fields scorers read
-- (warehouse.labels.LABEL_FIELDS; a test checks they agree). Changing it makes every
-- label-reading score of a turn with a case stale once.
CREATE MACRO label_hashes() AS TABLE
SELECT case_id,
       md5(to_json(struct_pack(case_id := case_id, canary := canary,
                               ideal_response := ideal_response, match_mode := match_mode,
                               expected_tools := expected_tools,
                               expected_tools_mode := expected_tools_mode,
                               should_decline := should_decline))) AS label_hash
FROM labels;

-- turn_cases: each turn that joins a case, once: the case whose case_id equals the
-- turn's, else the one whose normalised input equals the turn's normalised request
-- (request_norms, kept by warehouse.labels.refresh_request_norms), the smallest case_id
-- first.
CREATE MACRO turn_cases() AS TABLE
SELECT t.turn_id, l.case_id, l.label_hash
FROM turns AS t JOIN label_hashes() AS l ON l.case_id = t.case_id
UNION ALL
SELECT m.turn_id, l.case_id, l.label_hash
FROM (SELECT t.turn_id, min(x.case_id) AS case_id
      FROM turns AS t
      JOIN request_norms AS n ON n.turn_id = t.turn_id AND n.content_hash = t.content_hash
      JOIN (SELECT md5_number(input_norm) AS norm_md5, case_id FROM labels) AS x
        ON x.norm_md5 = n.norm_md5
      WHERE NOT EXISTS (SELECT 1 FROM labels AS l WHERE l.case_id = t.case_id)
      GROUP BY t.turn_id) AS m
JOIN label_hashes() AS l ON l.case_id = m.case_id;

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
