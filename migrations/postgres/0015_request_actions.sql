-- Day-two requests: a template request either makes its resource ('create', a folder that does
-- not exist yet) or acts on one that exists ('update' its values, 'extend' its expiry, 'remove'
-- it). resource_id names the request that made the resource; removed lists the files a
-- removal deletes (as a json array of paths), exactly what was previewed; base_files, the
-- SHA-256 of each file it changes or deletes as the base branch held it when it was asked, so
-- that a file changed by hand since fails the request instead of being overwritten.
alter table request add column action text not null default 'create'
    check (action in ('create', 'update', 'extend', 'remove'));
alter table request add column resource_id bigint references request (request_id);
alter table request add column removed jsonb not null default '[]';
alter table request add column base_files jsonb not null default '{}';

create index request_resource on request (resource_id) where resource_id is not null;
