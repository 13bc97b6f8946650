//! The few server-rendered HTML pages outside the Leptos UI: the development sign-in, the
//! profile with API tokens, and short messages (sign-in failed, session expired, refused).

use axum::{
    http::StatusCode,
    response::{Html, IntoResponse, Response},
};
use mirante_domain::{Role, Viewer};

use crate::db::ApiTokenRecord;

/// A user of the development sign-in.
pub struct DemoUser {
    /// Login name (and subject).
    pub username: &'static str,
    /// Display name.
    pub name: &'static str,
    /// E-mail.
    pub email: &'static str,
    /// Whether they are in the first admin group.
    pub admin: bool,
}

/// The demo users: an admin and a researcher.
pub const DEMO_USERS: &[DemoUser] = &[
    DemoUser {
        username: "ada",
        name: "Ada Admin",
        email: "ada@example.org",
        admin: true,
    },
    DemoUser {
        username: "rui",
        name: "Rui Researcher",
        email: "rui@example.org",
        admin: false,
    },
];

/// HTML-escapes text for an element or a quoted attribute.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn page(title: &str, body: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Mirante</title>
<link rel="stylesheet" href="/pkg/mirante.css">
</head>
<body>
<header class="topbar"><a class="brand" href="/"><span class="brand-mark" aria-hidden="true">◭</span>Mirante</a></header>
<main id="main" class="auth-page">
{body}
</main>
</body>
</html>
"#,
        title = esc(title),
    )
}

/// A short page: a heading, a sentence and one link onwards.
pub fn message(status: StatusCode, title: &str, text: &str, link: &str) -> Response {
    let label = if link.starts_with("/auth/login") {
        "Sign in"
    } else {
        "Continue"
    };
    let body = format!(
        r#"<h1>{}</h1>
<p class="auth-message">{}</p>
<p><a class="button" href="{}">{label}</a></p>"#,
        esc(title),
        esc(text),
        esc(link)
    );
    (status, Html(page(title, &body))).into_response()
}

/// The development sign-in: pick a demo user.
pub fn dev_login(next: &str, admin_groups: &[String]) -> Response {
    let admin_group = admin_groups.first().map_or("portal-admins", String::as_str);
    let users: String = DEMO_USERS
        .iter()
        .map(|u| {
            let role = if u.admin {
                format!("admin (group {})", esc(admin_group))
            } else {
                "researcher".to_owned()
            };
            format!(
                r#"<li><form method="post" action="/auth/dev">
<input type="hidden" name="user" value="{user}">
<input type="hidden" name="next" value="{next}">
<button type="submit" class="demo-user" data-user="{user}">Sign in as {name}</button> <span class="demo-role">{role}</span>
</form></li>
"#,
                user = esc(u.username),
                name = esc(u.name),
                next = esc(next),
            )
        })
        .collect();
    let body = format!(
        r#"<p class="dev-banner">Development sign-in: no identity provider is configured (MIRANTE_OIDC_ISSUER is unset). Anyone who can reach this page can sign in as any demo user.</p>
<h1>Sign in</h1>
<ul class="demo-users">
{users}</ul>"#
    );
    (StatusCode::OK, Html(page("Sign in", &body))).into_response()
}

/// The profile page; `new_token` is `(name, token)` right after one was made.
pub fn profile(
    viewer: &Viewer,
    tokens: &[ApiTokenRecord],
    new_token: Option<(&str, &str)>,
) -> Response {
    let role = match viewer.role {
        Role::Admin => "admin",
        Role::Researcher => "researcher",
    };
    let csrf = esc(&viewer.csrf_token);
    let created = new_token.map_or_else(String::new, |(name, token)| {
        format!(
            r#"<section class="new-token"><h2>New token “{}”</h2>
<p>Copy it now: it is not shown again.</p>
<pre><code id="new-token">{}</code></pre></section>
"#,
            esc(name),
            esc(token)
        )
    });
    let rows: String = tokens
        .iter()
        .map(|t| {
            let status = match (&t.revoked_at, &t.last_used_at) {
                (Some(at), _) => format!("revoked {}", at.format("%Y-%m-%d %H:%M")),
                (None, Some(at)) => format!("last used {}", at.format("%Y-%m-%d %H:%M")),
                (None, None) => "never used".to_owned(),
            };
            let revoke = if t.revoked_at.is_none() {
                format!(
                    r#"<form method="post" action="/profile/tokens/{}/revoke"><input type="hidden" name="csrf_token" value="{csrf}"><button type="submit">Revoke</button></form>"#,
                    t.api_token_id
                )
            } else {
                String::new()
            };
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{revoke}</td></tr>\n",
                esc(&t.name),
                t.created_at.format("%Y-%m-%d %H:%M"),
                esc(&status)
            )
        })
        .collect();
    let body = format!(
        r#"<h1>{name}</h1>
<dl class="profile">
<dt>Username</dt><dd>{username}</dd>
<dt>E-mail</dt><dd>{email}</dd>
<dt>Role</dt><dd class="role-{role}">{role}</dd>
<dt>Groups</dt><dd>{groups}</dd>
</dl>
{created}<h2>API tokens</h2>
<p>For scripts and CI: send <code>Authorization: Bearer &lt;token&gt;</code> to the JSON API.</p>
<table class="tokens"><thead><tr><th>Name</th><th>Created</th><th>Status</th><th></th></tr></thead>
<tbody>
{rows}</tbody></table>
<form method="post" action="/profile/tokens" class="new-token-form">
<input type="hidden" name="csrf_token" value="{csrf}">
<label>Name <input type="text" name="name" maxlength="100" required></label>
<button type="submit">Create token</button>
</form>
<p><a href="/">Back to the portal</a></p>"#,
        name = esc(&viewer.name),
        username = esc(&viewer.username),
        email = esc(viewer.email.as_deref().unwrap_or("—")),
        groups = esc(&viewer.groups.join(", ")),
    );
    (
        StatusCode::OK,
        [super::no_store()],
        Html(page("Profile", &body)),
    )
        .into_response()
}
