-- A merged removal is followed too: its row is 'removing' while Argo CD still has the
-- Application that ran the folder, then 'removed' once Argo CD no longer has it.
alter table resource_deployment drop constraint resource_deployment_state_check;
alter table resource_deployment add constraint resource_deployment_state_check
    check (state in ('merged', 'syncing', 'live', 'degraded', 'removing', 'removed'));
