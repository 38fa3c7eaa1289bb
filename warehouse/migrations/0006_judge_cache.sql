-- Judge replies keyed by model, parameters, prompt version and rendered prompt.
CREATE TABLE judge_cache (
    cache_key VARCHAR NOT NULL PRIMARY KEY,
    scorer VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    prompt_version VARCHAR NOT NULL,
    reply JSON NOT NULL,
    input_tokens BIGINT,
    output_tokens BIGINT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
