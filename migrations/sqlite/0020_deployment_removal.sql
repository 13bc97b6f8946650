-- A merged removal is followed too: its row is 'removing' while Argo CD still has the
-- Application that ran the folder, then 'removed' once Argo CD no longer has it. SQLite
-- cannot change a check constraint, so the table is made again with the rows kept.
create table resource_deployment_next (
    request_id integer primary key references request (request_id),
    state text not null
        check (state in ('merged', 'syncing', 'live', 'degraded', 'removing', 'removed')),
    merge_commit text not null,
    application text,
    revision text,
    message text,
    last_error text,
    failures integer not null default 0,
    checked_at text,
    next_check_ms integer not null,
    created_at text not null,
    updated_at text not null
);

insert into resource_deployment_next
    (request_id, state, merge_commit, application, revision, message, last_error, failures,
     checked_at, next_check_ms, created_at, updated_at)
select request_id, state, merge_commit, application, revision, message, last_error, failures,
       checked_at, next_check_ms, created_at, updated_at
from resource_deployment;

drop table resource_deployment;
alter table resource_deployment_next rename to resource_deployment;
create index resource_deployment_due on resource_deployment (next_check_ms);
