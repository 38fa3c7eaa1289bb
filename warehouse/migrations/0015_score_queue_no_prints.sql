-- The score queue without fingerprints (issue 15). Every writer of what the pending rule
-- reads now keeps the queue itself (ingest, labels, `scores.write_score_table`; tests and
-- benches through them or `score_queue.queue_turns` / `forget_scope`), so the xor
-- fingerprints of 0014, and the scan of turns, scores and labels each run paid for
-- them, go.
--
-- A warehouse whose fingerprints did not match (a write the queue did not see) keeps
-- no scope: its next run takes the full pass, as it would have under 0014. A warehouse
-- from before 0014 has no scope either (0014 made the tables empty): "an upgraded
-- warehouse starts untrusted" is now "no scorer has a scope".
DELETE FROM score_queue_scope WHERE NOT EXISTS (
    SELECT 1 FROM score_queue_state AS s
    WHERE s.turns_print = coalesce((SELECT bit_xor(turn_print(turn_id, content_hash))
                                    FROM turns), 0)
      AND s.scores_print = coalesce((SELECT bit_xor(score_print(turn_id, scorer,
                                         scorer_version, status, content_hash))
                                     FROM scores), 0)
      AND s.labels_print = coalesce((SELECT bit_xor(label_print(case_id, input_norm, canary,
                                         ideal_response, match_mode, expected_tools,
                                         expected_tools_mode, should_decline))
                                     FROM labels), 0));
DELETE FROM score_queue_off WHERE scorer NOT IN (SELECT scorer FROM score_queue_scope);
DROP TABLE score_queue_state;
DROP MACRO turn_print;
DROP MACRO score_print;
DROP MACRO label_print;
