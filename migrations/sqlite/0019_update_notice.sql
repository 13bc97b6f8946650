-- Which template update each resource's owner was told of: one notice per resource (the id of
-- the request that made it) and template version, however often the sweep finds it.
create table update_notice (
    resource_id integer not null references request (request_id),
    version text not null,
    at text not null,
    primary key (resource_id, version)
);
