-- Each turn's labelled case, once (issue 15): the score runner and the staleness rule
-- (0011_score_staleness.sql) read these; nothing else spells the join. Table macros, not
-- views: they are rules, not data a reader browses (a published snapshot materialises
-- every view as a table).
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
