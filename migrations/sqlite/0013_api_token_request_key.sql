-- The profile's "new token" form carries a key made when the page was drawn: sent twice (a
-- second click, a reload that posts again) it makes one token, and the second answer says the
-- token was already made instead of making another.
alter table api_token add column request_key text;
create unique index api_token_request_key on api_token (app_user_id, request_key)
    where request_key is not null;
