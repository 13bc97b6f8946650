//! The session layer and the secrets behind it: the key that signs the session cookie, the
//! names of what a session holds, random tokens, API tokens' hashes, and the audit of what
//! happens to a session.

use std::path::Path;

use anyhow::Context;
use chrono::Utc;
use rand::RngCore;
use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256, Sha512};
use tower_sessions::{
    Expiry, SessionManagerLayer,
    cookie::{Key, SameSite, time},
    service::SignedCookie,
};

use crate::{
    adapters::db::{Db, NewAuditEntry},
    adapters::session_store::DbSessionStore,
    config::Config,
};

/// The session cookie's name; not `_session`, which Authentik-like providers use on the same
/// host in tests.
pub const SESSION_COOKIE: &str = "mirante_session";

/// Session key of the signed-in user.
pub(super) const USER_KEY: &str = "user";
/// Session key of a sign-in in progress.
pub(super) const LOGIN_KEY: &str = "login";
/// Session key of the last time a request refreshed the session's idle expiry (Unix seconds).
pub(super) const SEEN_KEY: &str = "seen_at";

/// The UI language last recorded on the user for this session (their choice is written to
/// `app_user` once per change, not on every request).
pub(super) const LANG_KEY: &str = "lang";

/// The session layer: signed `mirante_session` cookie, `HttpOnly`, `SameSite=Lax`, `Secure`
/// on https, expiring after `session_idle_secs` without a request.
pub fn session_layer(
    store: DbSessionStore,
    config: &Config,
    key: &SecretString,
) -> SessionManagerLayer<DbSessionStore, SignedCookie> {
    let idle = i64::try_from(config.session_idle_secs).unwrap_or(i64::MAX);
    SessionManagerLayer::new(store)
        .with_name(SESSION_COOKIE)
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(config.public_url().starts_with("https://"))
        .with_path("/")
        .with_expiry(Expiry::OnInactivity(time::Duration::seconds(idle)))
        .with_signed(cookie_key(key))
}

/// A 64-byte cookie key derived from the configured secret.
fn cookie_key(secret: &SecretString) -> Key {
    let digest = Sha512::digest(secret.expose_secret().as_bytes());
    Key::from(digest.as_slice())
}

/// The session key: the configured one, or (SQLite, a single instance) one generated once
/// and kept in `<data_dir>/session.key`.
pub fn session_key(config: &Config) -> anyhow::Result<SecretString> {
    if let Some(key) = &config.session_key {
        return Ok(key.clone());
    }
    if config.backend()? != crate::adapters::db::Backend::Sqlite {
        anyhow::bail!("MIRANTE_SESSION_KEY is required with PostgreSQL");
    }
    let path = config.data_dir.join("session.key");
    read_or_create_key(&path)
}

fn read_or_create_key(path: &Path) -> anyhow::Result<SecretString> {
    if let Ok(existing) = std::fs::read_to_string(path) {
        let existing = existing.trim().to_owned();
        if existing.len() >= 32 {
            return Ok(SecretString::from(existing));
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let key = random_hex(48);
    write_private(path, &key).with_context(|| format!("cannot write {}", path.display()))?;
    tracing::info!(path = %path.display(), "generated a session key");
    Ok(SecretString::from(key))
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::{io::Write, os::unix::fs::OpenOptionsExt};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, contents)
}

/// `n` random bytes as hex.
pub(super) fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Hex SHA-256 of an API token, as stored.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Appends an audit entry; a failure is logged, never shown.
pub(super) async fn audit(db: &Db, actor: &str, action: &str, detail: serde_json::Value) {
    let entry = NewAuditEntry {
        at: Utc::now(),
        actor,
        action,
        target: "session",
        detail,
    };
    if let Err(e) = db.append_audit(&entry).await {
        tracing::error!(error = %e, action, "cannot write the audit log");
    }
}
