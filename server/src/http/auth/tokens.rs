//! API tokens, once checked against the database, are remembered for a short while.
//!
//! Checking a token is two database reads (the token, then its owner), which cost several
//! times what answering an item from the in-memory catalog does. A client with a token
//! usually sends many requests in a row, so the principal a token resolved to is kept in
//! memory, keyed by the token's SHA-256 (the token itself is never kept), for [`TTL`].
//!
//! What may change a cached answer, and when the change applies (ADR 0015):
//! - **Revoking a token** through this process clears the cache at once.
//! - **Signing in** through this process clears it too, because sign-in updates the person's
//!   groups, and so their role.
//! - The same changes made through **another instance** sharing the database apply within
//!   [`TTL`].
//!
//! A check that started before a clear and finishes after it does not put its (possibly
//! revoked) answer back: every clear starts a new generation, and only answers read within the
//! current generation are kept.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

use chrono::{DateTime, Utc};
use quick_cache::sync::Cache;

use super::Principal;

/// How long a checked token is trusted without asking the database again.
pub(crate) const TTL: Duration = Duration::from_secs(30);

/// Tokens remembered at most; beyond that the least useful are forgotten.
pub(crate) const CAPACITY: usize = 10_000;

/// A token the database accepted.
#[derive(Debug, Clone)]
pub struct Verified {
    /// Who the token acts for.
    pub principal: Principal,
    /// Its row in `api_token`.
    pub api_token_id: i64,
    /// When its use was last written to the database.
    pub last_used_at: Option<DateTime<Utc>>,
    /// When it stops working (`None`: made before tokens expired).
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Clone)]
struct Entry {
    verified: Verified,
    checked_at: Instant,
}

/// Checked tokens by their hash; see the module documentation.
pub struct TokenCache {
    entries: Cache<String, Entry>,
    generation: AtomicU64,
    ttl: Duration,
}

impl TokenCache {
    /// An empty cache whose entries are trusted for `ttl`.
    pub fn new(ttl: Duration) -> Self {
        TokenCache {
            entries: Cache::new(CAPACITY),
            generation: AtomicU64::new(0),
            ttl,
        }
    }

    /// The current generation: take it before reading the database, give it to
    /// [`TokenCache::insert`] after.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The token with this hash, if it was checked less than the TTL ago.
    pub fn get(&self, hash: &str) -> Option<Verified> {
        let entry = self.entries.get(hash)?;
        if entry.checked_at.elapsed() < self.ttl {
            Some(entry.verified)
        } else {
            self.entries.remove(hash);
            None
        }
    }

    /// Remembers a token read from the database in `generation`, unless the cache was cleared
    /// since (the answer may predate a revocation).
    pub fn insert(&self, generation: u64, hash: String, verified: Verified) {
        self.put(generation, hash, verified, Instant::now());
    }

    /// Records that a remembered token's use was written at `at`, keeping when it was checked.
    pub fn touched(&self, generation: u64, hash: &str, at: DateTime<Utc>) {
        if let Some(mut entry) = self.entries.get(hash) {
            entry.verified.last_used_at = Some(at);
            self.put(
                generation,
                hash.to_owned(),
                entry.verified,
                entry.checked_at,
            );
        }
    }

    fn put(&self, generation: u64, hash: String, verified: Verified, checked_at: Instant) {
        if self.generation() != generation {
            return;
        }
        self.entries.insert(
            hash,
            Entry {
                verified,
                checked_at,
            },
        );
        // A clear between the check above and the insert must still win.
        if self.generation() != generation {
            self.entries.clear();
        }
    }

    /// Forgets every token: after a revocation or a change of someone's groups.
    pub fn clear(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use mirante_domain::{Role, Viewer};

    use super::*;

    fn verified(user_id: i64) -> Verified {
        Verified {
            principal: Principal {
                user_id,
                viewer: Viewer {
                    username: format!("user{user_id}"),
                    name: format!("User {user_id}"),
                    email: None,
                    groups: vec![],
                    role: Role::Researcher,
                    csrf_token: String::new(),
                    dev_login: false,
                },
                via_token: true,
            },
            api_token_id: user_id * 10,
            last_used_at: None,
            expires_at: None,
        }
    }

    #[test]
    fn a_checked_token_is_answered_from_memory_until_its_time_is_up() {
        let cache = TokenCache::new(Duration::from_millis(200));
        cache.insert(cache.generation(), "h1".to_owned(), verified(1));

        assert_eq!(cache.get("h1").map(|v| v.principal.user_id), Some(1));
        assert!(cache.get("h2").is_none());
        std::thread::sleep(Duration::from_millis(250));
        assert!(cache.get("h1").is_none());
    }

    #[test]
    fn clearing_forgets_every_token() {
        let cache = TokenCache::new(TTL);
        cache.insert(cache.generation(), "h1".to_owned(), verified(1));
        cache.insert(cache.generation(), "h2".to_owned(), verified(2));

        cache.clear();

        assert!(cache.get("h1").is_none());
        assert!(cache.get("h2").is_none());
    }

    #[test]
    fn an_answer_read_before_a_clear_is_not_kept_after_it() {
        let cache = TokenCache::new(TTL);
        let before = cache.generation();

        cache.clear();
        cache.insert(before, "h1".to_owned(), verified(1));
        cache.touched(before, "h1", Utc::now());

        assert!(cache.get("h1").is_none());
        cache.insert(cache.generation(), "h1".to_owned(), verified(1));
        assert!(cache.get("h1").is_some());
    }

    #[test]
    fn a_touch_updates_the_last_use_and_keeps_the_check_time() {
        let cache = TokenCache::new(Duration::from_millis(200));
        cache.insert(cache.generation(), "h1".to_owned(), verified(1));
        let at = Utc::now();

        std::thread::sleep(Duration::from_millis(120));
        cache.touched(cache.generation(), "h1", at);

        assert_eq!(cache.get("h1").and_then(|v| v.last_used_at), Some(at));
        std::thread::sleep(Duration::from_millis(120));
        assert!(
            cache.get("h1").is_none(),
            "the touch did not extend the trust"
        );
    }
}
