-- What each replica of the portal serves, written by each every few seconds, so that an
-- admin (and /readyz) can tell which catalog each one has in force.
create table replica (
    replica_id text primary key,
    catalog_hash text not null,
    catalog_revision text,
    catalog_loaded_at text not null,
    started_at text not null,
    seen_at text not null
);

-- Signals every replica follows: `catalog-reload` counts the reloads someone asked one
-- replica for (the API, SIGHUP, a merge), so the others reload too.
create table replica_signal (
    name text primary key,
    generation integer not null
);
