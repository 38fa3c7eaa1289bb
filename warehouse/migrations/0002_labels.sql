-- Labelled cases. Join to turns by case_id, else by input_norm = normalize_text(request).
CREATE TABLE labels (
    case_id VARCHAR NOT NULL PRIMARY KEY,
    input VARCHAR NOT NULL,
    input_norm VARCHAR NOT NULL,
    canary VARCHAR[],
    ideal_response VARCHAR,
    match_mode VARCHAR,
    expected_tools VARCHAR[],
    expected_tools_mode VARCHAR,
    should_decline BOOLEAN,
    tags VARCHAR[] NOT NULL DEFAULT [],
    source VARCHAR NOT NULL,
    run_id VARCHAR NOT NULL,
    loaded_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
