//! The few server-rendered HTML pages outside the Leptos UI: the development sign-in, the
//! profile with API tokens, and short messages (sign-in failed, session expired, refused).
//! Askama templates in `templates/` (the workspace root; see `server/askama.toml`), escaped
//! by default.

use askama::Template;
use axum::{
    http::{HeaderValue, StatusCode, header},
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

/// A rendered template with a status; a template that fails to render is a 500, logged.
struct Page<T: Template>(StatusCode, T);

impl<T: Template> IntoResponse for Page<T> {
    fn into_response(self) -> Response {
        match self.1.render() {
            Ok(html) => (self.0, Html(html)).into_response(),
            Err(error) => {
                tracing::error!(%error, "cannot render a page");
                StatusCode::INTERNAL_SERVER_ERROR.into_response()
            }
        }
    }
}

#[derive(Template)]
#[template(path = "auth/message.html")]
struct MessagePage<'a> {
    title: &'a str,
    text: &'a str,
    link: &'a str,
    link_label: &'a str,
}

/// A short page: a heading, a sentence and one link onwards.
pub fn message(status: StatusCode, title: &str, text: &str, link: &str) -> Response {
    let link_label = if link.starts_with("/auth/login") {
        "Sign in"
    } else {
        "Continue"
    };
    Page(
        status,
        MessagePage {
            title,
            text,
            link,
            link_label,
        },
    )
    .into_response()
}

#[derive(Template)]
#[template(path = "auth/dev_login.html")]
struct DevLoginPage<'a> {
    title: &'a str,
    users: &'a [DemoUser],
    next: &'a str,
    admin_group: &'a str,
}

/// The development sign-in: pick a demo user.
pub fn dev_login(next: &str, admin_groups: &[String]) -> Response {
    Page(
        StatusCode::OK,
        DevLoginPage {
            title: "Sign in",
            users: DEMO_USERS,
            next,
            admin_group: admin_groups.first().map_or("portal-admins", String::as_str),
        },
    )
    .into_response()
}

/// A token as the profile lists it.
struct TokenRow {
    id: i64,
    name: String,
    created: String,
    status: String,
    active: bool,
}

#[derive(Template)]
#[template(path = "auth/profile.html")]
struct ProfilePage<'a> {
    title: &'a str,
    viewer: &'a Viewer,
    email: &'a str,
    role: &'a str,
    groups: String,
    tokens: Vec<TokenRow>,
    new_token: Option<(&'a str, &'a str)>,
}

/// The profile page; `new_token` is `(name, token)` right after one was made.
pub fn profile(
    viewer: &Viewer,
    tokens: &[ApiTokenRecord],
    new_token: Option<(&str, &str)>,
) -> Response {
    let tokens = tokens
        .iter()
        .map(|t| TokenRow {
            id: t.api_token_id,
            name: t.name.clone(),
            created: t.created_at.format("%Y-%m-%d %H:%M").to_string(),
            status: match (&t.revoked_at, &t.last_used_at) {
                (Some(at), _) => format!("revoked {}", at.format("%Y-%m-%d %H:%M")),
                (None, Some(at)) => format!("last used {}", at.format("%Y-%m-%d %H:%M")),
                (None, None) => "never used".to_owned(),
            },
            active: t.revoked_at.is_none(),
        })
        .collect();
    let page = Page(
        StatusCode::OK,
        ProfilePage {
            title: "Profile",
            viewer,
            email: viewer.email.as_deref().unwrap_or("—"),
            role: match viewer.role {
                Role::Admin => "admin",
                Role::Researcher => "researcher",
            },
            groups: viewer.groups.join(", "),
            tokens,
            new_token,
        },
    );
    // The page may show a new token: keep it out of every cache.
    (
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        page,
    )
        .into_response()
}
