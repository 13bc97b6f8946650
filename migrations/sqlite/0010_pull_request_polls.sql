-- When a proposed request's pull request is next read back by the poller (epoch
-- milliseconds). A replica claims a due one by moving it one poll interval ahead, so the
-- replicas share the open pull requests and each is read once per interval in all; unset:
-- due now (never read yet).
alter table request add column pr_poll_due_ms bigint;
create index request_pr_poll on request (state, pr_poll_due_ms);
