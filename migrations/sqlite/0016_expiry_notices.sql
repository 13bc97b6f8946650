-- What the expiry sweep did for a resource (the id of the request that made it) and one expiry
-- date: each notice before the date (threshold_days 7, 1, …) and the removal it opened after it
-- (threshold_days 0), each at most once. A new expiry date (an extension) starts afresh.
create table expiry_notice (
    resource_id integer not null references request (request_id),
    expires text not null,
    threshold_days integer not null,
    at text not null,
    primary key (resource_id, expires, threshold_days)
);
