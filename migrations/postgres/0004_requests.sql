-- Self-service requests: a template and the values a researcher gave, the files they rendered
-- to, and where the request stands on its way to a merged pull request on the monorepo.
create table request (
    request_id bigint generated always as identity primary key,
    -- the template's id and, for lists, its title when the request was made.
    template text not null,
    template_title text not null,
    -- the values of the form, as a json object.
    "values" jsonb not null,
    -- the rendered files, as a json array of {"path", "content"}; exactly what was previewed.
    files jsonb not null,
    -- the monorepo directory the files go to, and the short name in the branch.
    target text not null,
    slug text not null,
    -- who asked.
    author_user_id bigint not null references app_user (app_user_id),
    author_username text not null,
    author_name text not null,
    author_email text,
    -- see mirante_domain::request::RequestState.
    state text not null check (state in ('submitted', 'awaiting_approval', 'approved',
        'rejected', 'proposing', 'proposed', 'merged', 'closed', 'failed')),
    -- whether the template asked for an admin's approval.
    needs_approval boolean not null,
    -- the admin who approved or rejected, when and why.
    decided_by text,
    decided_at timestamptz,
    decision_comment text,
    -- the branch mirante/<id>-<slug>, set once the request is stored.
    branch text,
    -- the pull request once it is open.
    pr_number bigint,
    pr_url text,
    -- the last thing that went wrong while proposing or following it (shown to people).
    last_error text,
    -- how many times the worker tried to propose it.
    attempts bigint not null default 0,
    created_at timestamptz not null,
    updated_at timestamptz not null
);

create index request_author on request (author_user_id, request_id);
create index request_state on request (state);

-- Every change of a request's state: the timeline on its page.
create table request_transition (
    request_transition_id bigint generated always as identity primary key,
    request_id bigint not null references request (request_id),
    -- null for the creation of the request.
    from_state text,
    to_state text not null,
    at timestamptz not null,
    -- a username, or 'system' for the worker and the forge.
    actor text not null,
    -- the admin's comment on an approval or a rejection.
    comment text
);

create index request_transition_request on request_transition (request_id, request_transition_id);

-- The outbox: work the proposing worker must do, written in the same transaction as the state
-- change that calls for it. A worker claims a row by setting a lease; a crashed worker's lease
-- runs out and another takes the row over. Times are Unix milliseconds so that both databases
-- compare them as numbers.
create table request_job (
    request_job_id bigint generated always as identity primary key,
    request_id bigint not null references request (request_id),
    -- 'propose': branch, commit and pull request.
    kind text not null check (kind in ('propose')),
    -- not before this time (backoff after a retryable error).
    run_after_ms bigint not null,
    -- the worker holding the row and until when.
    lease_owner text,
    lease_until_ms bigint,
    attempts bigint not null default 0,
    last_error text,
    -- set when the job is finished (done or given up); finished rows are kept for the record.
    done_at timestamptz,
    created_at timestamptz not null,
    unique (request_id, kind)
);

create index request_job_due on request_job (done_at, run_after_ms);

-- Pull requests of the local forge: a branch of the local monorepo plus this record, merged by
-- an admin in the portal.
create table local_pull_request (
    local_pull_request_id bigint generated always as identity primary key,
    -- the source branch; one pull request per branch.
    branch text not null unique,
    base text not null,
    title text not null,
    body text not null,
    state text not null check (state in ('open', 'merged', 'closed')),
    -- the commit on the base branch that merged it.
    merge_commit text,
    created_at timestamptz not null,
    updated_at timestamptz not null
);
