-- A merged request's deployment, followed in Argo CD: the Application that deploys its folder,
-- the revision Argo CD last reported, and where the deployment stands ('merged' until Argo CD
-- has answered about it). One row per merged template request, made by the follower; the
-- resource shows the row of its latest merged request.
create table resource_deployment (
    request_id bigint primary key references request (request_id),
    state text not null check (state in ('merged', 'syncing', 'live', 'degraded')),
    -- the commit on the base branch the deployment must contain.
    merge_commit text not null,
    application text,
    revision text,
    -- what Argo CD said (why degraded, why still syncing).
    message text,
    -- the last error asking Argo CD; cleared by the next good answer.
    last_error text,
    -- errors in a row, for the backoff.
    failures bigint not null default 0,
    checked_at timestamptz,
    -- not before this time (Unix ms).
    next_check_ms bigint not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
);

create index resource_deployment_due on resource_deployment (next_check_ms);

-- A step of the deployment on the merged request's timeline (syncing, live, degraded): the
-- request stays merged (from_state and to_state are 'merged'). Null for every state change.
alter table request_transition add column deployment text;
