-- Work that one replica does for all: the replica holding a lease (until `until_ms`, epoch
-- milliseconds) does it, e.g. the live checks each interval; another takes over once the
-- holder stops renewing it.
create table replica_lease (
    name text primary key,
    owner text not null,
    until_ms bigint not null
);

-- What that work found, for every replica to serve (the live checks' last results).
create table replica_shared (
    name text primary key,
    value jsonb not null,
    written_by text not null,
    written_at timestamptz not null
);
