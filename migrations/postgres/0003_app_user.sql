-- Everyone who has signed in, keyed by their identity provider and subject (Authentik's `sub`
-- is a hashed id per provider; e-mail addresses change and are never the key). Updated at each
-- sign-in from the ID token and userinfo.
create table app_user (
    app_user_id bigint generated always as identity primary key,
    -- the OpenID issuer URL, or 'dev' for the development sign-in.
    issuer text not null,
    -- the subject at that issuer.
    subject text not null,
    -- `preferred_username`.
    username text not null,
    name text not null,
    email text,
    -- the provider groups at the last sign-in, as a json array of strings.
    groups jsonb not null default '[]'::jsonb,
    first_login_at timestamptz not null,
    last_login_at timestamptz not null,
    unique (issuer, subject)
);

-- Personal API tokens for scripts and CI: only a SHA-256 of the token is kept, the token itself
-- is shown once when it is made.
create table api_token (
    api_token_id bigint generated always as identity primary key,
    app_user_id bigint not null references app_user (app_user_id),
    -- what the owner called it.
    name text not null,
    -- hex SHA-256 of the token.
    token_hash text not null unique,
    created_at timestamptz not null,
    last_used_at timestamptz,
    -- set when the owner revokes it; a revoked token is refused.
    revoked_at timestamptz
);

create index api_token_owner on api_token (app_user_id);
