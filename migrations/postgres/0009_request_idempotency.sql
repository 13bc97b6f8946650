-- A client that sends a POST again (a retry after a timeout, a second click) names it with the
-- same Idempotency-Key: the key and a fingerprint of what was asked are kept with the request,
-- so the second POST answers the first request instead of making another one. Keys are per
-- author; earlier requests have none.
alter table request add column idempotency_key text;
alter table request add column idempotency_fingerprint text;
create unique index request_idempotency on request (author_user_id, idempotency_key)
    where idempotency_key is not null;

-- A second open request for a target directory is refused (naming the first), found by target.
create index request_target on request (target, state);
