-- Who did what, to what, and when: catalog reloads now; approvals, edits and sign-ins as the
-- features that cause them arrive. Rows are only ever appended.
create table audit_log (
    audit_log_id integer primary key,
    -- when it happened (utc).
    at text not null default (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    -- who: a user once sign-in exists; 'system' for timers and signals, 'local:<ip>' for an
    -- unauthenticated call from the machine itself.
    actor text not null,
    -- what, as a dotted verb: 'catalog.reload'.
    action text not null,
    -- what it was done to: 'catalog', an item id, a request id.
    target text not null,
    -- anything else worth keeping, as a json object.
    detail text not null default '{}' check (json_valid(detail))
);

-- The audit view lists the newest entries first and filters by time.
create index audit_log_at on audit_log (at);
