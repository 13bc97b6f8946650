-- What each person chose for the messages the portal sends them: the language of the UI they
-- last used (a BCP 47 tag; unset: the portal's default) and whether they want e-mail at all.
alter table app_user add column language text;
alter table app_user add column email_notifications integer not null default 1;

-- The notification outbox: one row per notice, recipient and channel, queued in the
-- transaction of the request step that causes it, then claimed with a lease and delivered.
create table notification (
    notification_id integer primary key,
    -- the notice: 'awaits_approval', 'approved', 'rejected', 'proposed', 'merged', 'live', …
    kind text not null,
    request_id integer references request (request_id),
    -- 'email' (one row per recipient) or 'webhook' (one row per notice).
    channel text not null check (channel in ('email', 'webhook')),
    recipient_user_id integer references app_user (app_user_id),
    -- the e-mail address, for 'email'.
    recipient text,
    -- the recipient's language when the notice was queued; unset: the portal's default.
    language text,
    -- what the message says: request, title, state, link, actor, comment, pull request …
    payload text not null check (json_valid(payload)),
    state text not null default 'pending' check (state in ('pending', 'sent', 'failed')),
    -- not before this time (backoff after an error), Unix ms.
    run_after_ms integer not null,
    -- the delivery loop holding the row and until when (Unix ms).
    lease_owner text,
    lease_until_ms integer,
    attempts integer not null default 0,
    last_error text,
    created_at text not null,
    sent_at text
);

create index notification_due on notification (state, run_after_ms);
