-- The catalog's history as the portal saw it: one row per distinct catalog content (by hash)
-- ever loaded. Replicas and restarts that load the same content share the row, so the table
-- grows with changes to the catalog, not with reloads.
create table catalog_snapshot (
    catalog_snapshot_id integer primary key,
    -- sha-256 over the catalog files (relative names and contents), lowercase hex.
    hash text not null unique,
    -- revision of the source (a git commit) when the source knows it.
    revision text,
    -- where it was read from: 'embedded' or 'dir:<path>'.
    source text not null,
    -- number of items, for a quick look at how the catalog grows.
    item_count integer not null check (item_count >= 0),
    -- when this content was first loaded (utc).
    loaded_at text not null default (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
