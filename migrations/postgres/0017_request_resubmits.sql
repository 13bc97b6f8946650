-- A request made again after it ended without a merge (rejected, withdrawn, failed) names the
-- one it resubmits, so each page links to the other.
alter table request add column resubmits bigint references request (request_id);

create index request_resubmits on request (resubmits) where resubmits is not null;
