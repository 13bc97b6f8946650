//! The few server-rendered HTML pages outside the Leptos UI: the development sign-in, the
//! profile with API tokens, and short messages (sign-in failed, session expired, refused).
//! Askama templates in `templates/` (the workspace root; see `server/askama.toml`), escaped
//! by default, in the reader's language through the same Fluent files as the Leptos UI
//! (keys `auth-*`).

use askama::Template;
use axum::{
    extract::FromRequestParts,
    http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts},
    response::{Html, IntoResponse, Response},
};
use mirante_domain::{Role, Viewer};
use mirante_frontend::i18n::{self, Lang};

use crate::adapters::db::ApiTokenRecord;

/// A user of the development sign-in.
pub(crate) struct DemoUser {
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
pub(crate) const DEMO_USERS: &[DemoUser] = &[
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

/// The reader's language for a page: the language cookie, then `Accept-Language`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageLang(pub Lang);

impl PageLang {
    /// The language of the request with these headers.
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        PageLang(i18n::from_headers(headers))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for PageLang {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(PageLang::of(&parts.headers))
    }
}

/// Translations for a template: `{{ tr.t("auth-…") }}`.
pub(crate) struct Tr(Lang);

impl Tr {
    /// The translation of `key`.
    pub(crate) fn t(&self, key: &str) -> String {
        i18n::t(self.0, key)
    }

    /// The translation of `key` with one named argument.
    pub(crate) fn t1(&self, key: &str, name: &'static str, value: &str) -> String {
        i18n::t_args(self.0, key, &[(name, value.to_owned().into())])
    }

    /// The BCP 47 tag for `<html lang>`.
    pub(crate) fn tag(&self) -> &'static str {
        self.0.tag()
    }
}

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
    tr: Tr,
    title: String,
    text: String,
    detail: Option<&'a str>,
    link: &'a str,
    link_label: String,
}

/// A short page: a heading, a sentence and one link onwards. `key` names the Fluent pair
/// `<key>-title` / `<key>-text`; `detail` is a technical reason shown as written.
pub(crate) fn message(
    status: StatusCode,
    lang: PageLang,
    key: &str,
    detail: Option<&str>,
    link: &str,
) -> Response {
    let tr = Tr(lang.0);
    let link_label = if link.starts_with("/auth/login") {
        tr.t("auth-sign-in")
    } else {
        tr.t("auth-continue")
    };
    let title = tr.t(&format!("{key}-title"));
    let text = tr.t(&format!("{key}-text"));
    Page(
        status,
        MessagePage {
            tr,
            title,
            text,
            detail,
            link,
            link_label,
        },
    )
    .into_response()
}

/// Every message `key` the portal uses with [`message`] (a test checks both languages).
#[cfg(test)]
pub(crate) const MESSAGE_KEYS: &[&str] = &[
    "auth-msg-session-expired",
    "auth-msg-sign-in-required",
    "auth-msg-degraded",
    "auth-msg-admins-only",
    "auth-msg-cross-origin",
    "auth-msg-too-many",
    "auth-msg-no-provider",
    "auth-msg-provider-unreachable",
    "auth-msg-dev-login-off",
    "auth-msg-unknown-demo-user",
    "auth-msg-bad-csrf",
    "auth-msg-no-such-token",
    "auth-msg-not-found",
    "auth-msg-wrong-method",
    "auth-fail-no-attempt",
    "auth-fail-provider-error",
    "auth-fail-no-code",
    "auth-fail-state-mismatch",
    "auth-fail-rejected",
];

#[derive(Template)]
#[template(path = "auth/dev_login.html")]
struct DevLoginPage<'a> {
    tr: Tr,
    title: String,
    users: &'a [DemoUser],
    next: &'a str,
    admin_group: &'a str,
}

/// The development sign-in: pick a demo user.
pub(crate) fn dev_login(lang: PageLang, next: &str, admin_groups: &[String]) -> Response {
    let tr = Tr(lang.0);
    Page(
        StatusCode::OK,
        DevLoginPage {
            title: tr.t("auth-sign-in"),
            tr,
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
    expires: String,
    status: String,
    active: bool,
}

#[derive(Template)]
#[template(path = "auth/profile.html")]
struct ProfilePage<'a> {
    tr: Tr,
    title: String,
    viewer: &'a Viewer,
    email: &'a str,
    /// Whether they receive e-mail.
    email_notifications: bool,
    role: &'a str,
    role_label: String,
    groups: String,
    tokens: Vec<TokenRow>,
    new_token: Option<(&'a str, &'a str)>,
    /// Whether the form was sent again for a token made already.
    already_made: bool,
    /// The key the new-token form is drawn with (see `create_token`).
    request_key: String,
    /// The expiry offered for a new token, in days.
    default_days: u32,
    /// The longest expiry one may pick.
    max_days: u32,
}

/// What the profile page says about a token just asked for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TokenShown<'a> {
    /// Nothing was asked for.
    Nothing,
    /// A token was made: its name and the token, shown this once.
    New(&'a str, &'a str),
    /// The form was sent again for a token made already: nothing new was made.
    AlreadyMade,
}

/// The profile page, with what became of a token just asked for.
pub(crate) fn profile(
    lang: PageLang,
    viewer: &Viewer,
    email_notifications: bool,
    tokens: &[ApiTokenRecord],
    shown: TokenShown<'_>,
    max_days: u32,
) -> Response {
    let tr = Tr(lang.0);
    let now = chrono::Utc::now();
    let when = |at: &chrono::DateTime<chrono::Utc>| at.format("%Y-%m-%d %H:%M").to_string();
    let tokens = tokens
        .iter()
        .map(|t| TokenRow {
            id: t.api_token_id,
            name: t.name.clone(),
            created: t.created_at.format("%Y-%m-%d %H:%M").to_string(),
            expires: t
                .expires_at
                .map_or_else(|| tr.t("auth-token-no-expiry"), |at| when(&at)),
            status: match (&t.revoked_at, &t.last_used_at) {
                (Some(at), _) => tr.t1("auth-token-revoked-at", "when", &when(at)),
                (None, _) if t.expires_at.is_some_and(|at| at <= now) => tr.t("auth-token-expired"),
                (None, Some(at)) => tr.t1("auth-token-last-used-at", "when", &when(at)),
                (None, None) => tr.t("auth-token-never-used"),
            },
            active: t.revoked_at.is_none() && t.expires_at.is_none_or(|at| at > now),
        })
        .collect();
    let page = Page(
        StatusCode::OK,
        ProfilePage {
            title: tr.t("auth-profile"),
            viewer,
            email: viewer.email.as_deref().unwrap_or("—"),
            email_notifications,
            role: match viewer.role {
                Role::Admin => "admin",
                Role::Researcher => "researcher",
            },
            role_label: match viewer.role {
                Role::Admin => tr.t("role-admin"),
                Role::Researcher => tr.t("role-researcher"),
            },
            tr,
            groups: viewer.groups.join(", "),
            tokens,
            new_token: match shown {
                TokenShown::New(name, token) => Some((name, token)),
                TokenShown::Nothing | TokenShown::AlreadyMade => None,
            },
            already_made: matches!(shown, TokenShown::AlreadyMade),
            request_key: super::session::random_hex(16),
            default_days: super::profile::TOKEN_DEFAULT_DAYS.min(max_days.max(1)),
            max_days: max_days.max(1),
        },
    );
    // The page may show a new token: keep it out of every cache.
    (
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        page,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use std::{collections::BTreeSet, path::Path};

    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// Message ids defined in a Fluent file (`id = …` at the start of a line).
    fn defined(lang: &str) -> BTreeSet<String> {
        let path = root().join(format!("../frontend/locales/{lang}/main.ftl"));
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once(" ="))
            .map(|(id, _)| id)
            .filter(|id| id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
            .map(str::to_owned)
            .collect()
    }

    /// Literal keys of `tr.t("…")` / `tr.t1("…"` in the templates and of `t("…")` here.
    fn used_keys() -> BTreeSet<String> {
        let mut texts = vec![
            std::fs::read_to_string(root().join("src/http/auth/pages.rs")).unwrap(),
            std::fs::read_to_string(root().join("../templates/base.html")).unwrap(),
        ];
        for entry in std::fs::read_dir(root().join("../templates/auth")).unwrap() {
            texts.push(std::fs::read_to_string(entry.unwrap().path()).unwrap());
        }
        let mut keys = BTreeSet::new();
        for text in &texts {
            let text = text.split("#[cfg(test)]").next().unwrap_or_default();
            for call in [".t(\"", ".t1(\""] {
                for (pos, _) in text.match_indices(call) {
                    let rest = &text[pos + call.len()..];
                    let key = &rest[..rest.find('"').unwrap()];
                    if !key.contains('…') {
                        keys.insert(key.to_owned());
                    }
                }
            }
        }
        keys
    }

    #[test]
    fn every_sign_in_page_string_is_translated_in_both_languages() {
        let mut keys = used_keys();
        for key in MESSAGE_KEYS {
            keys.insert(format!("{key}-title"));
            keys.insert(format!("{key}-text"));
        }
        assert!(keys.len() > 40, "the key scan found too little: {keys:?}");
        for lang in ["en", "pt-BR"] {
            let defined = defined(lang);
            let missing: Vec<_> = keys.difference(&defined).collect();
            assert!(missing.is_empty(), "missing in {lang}: {missing:?}");
        }
    }

    #[test]
    fn every_message_the_sign_in_code_shows_is_listed() {
        for file in ["middleware.rs", "sign_in.rs", "profile.rs"] {
            let code = std::fs::read_to_string(root().join("src/http/auth").join(file)).unwrap();
            for prefix in ["\"auth-msg-", "\"auth-fail-"] {
                for (pos, _) in code.match_indices(prefix) {
                    let rest = &code[pos + 1..];
                    let key = &rest[..rest.find('"').unwrap()];
                    assert!(MESSAGE_KEYS.contains(&key), "{key} is not in MESSAGE_KEYS");
                }
            }
        }
    }

    #[test]
    fn a_message_page_speaks_the_readers_language() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_LANGUAGE,
            HeaderValue::from_static("pt-BR,pt;q=0.9"),
        );
        let tr = Tr(PageLang::of(&headers).0);

        let page = MessagePage {
            title: tr.t("auth-msg-session-expired-title"),
            text: tr.t("auth-msg-session-expired-text"),
            detail: Some("<script>"),
            link: "/auth/login",
            link_label: tr.t("auth-sign-in"),
            tr,
        }
        .render()
        .unwrap();

        assert!(page.contains(r#"<html lang="pt-BR">"#), "{page}");
        assert!(page.contains("Sessão expirada"), "{page}");
        assert!(!page.contains("<script>"), "{page}");
    }
}
