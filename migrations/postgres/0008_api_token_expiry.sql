-- API tokens expire: the owner picks when at creation (at most MIRANTE_TOKEN_MAX_DAYS ahead).
-- Tokens made before expiry existed keep working until revoked (null: no expiry); the profile
-- page marks them so.
alter table api_token add column expires_at timestamptz;
