-- Who did what, to what, and when: catalog reloads now; approvals, edits and sign-ins as the
-- features that cause them arrive. Rows are only ever appended.
create table audit_log (
    audit_log_id bigint generated always as identity primary key,
    -- when it happened.
    at timestamptz not null default now(),
    -- who: a user once sign-in exists; 'system' for timers and signals, 'local:<ip>' for an
    -- unauthenticated call from the machine itself.
    actor text not null,
    -- what, as a dotted verb: 'catalog.reload'.
    action text not null,
    -- what it was done to: 'catalog', an item id, a request id.
    target text not null,
    -- anything else worth keeping, as a json object (jsonb so it can be queried).
    detail jsonb not null default '{}'::jsonb
);

-- The audit view lists the newest entries first and filters by time.
create index audit_log_at on audit_log (at);
