//! The session store: tower-sessions' SQL stores, on whichever database the portal uses.

use std::{
    sync::atomic::{AtomicI64, Ordering},
    time::Duration,
};

use async_trait::async_trait;
use tower_sessions::{
    ExpiredDeletion, SessionStore,
    session::{Id, Record},
    session_store,
};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

use crate::adapters::db::{Db, Pool};

/// Sessions in the portal's own database (table `tower_sessions` on SQLite, schema
/// `tower_sessions` on PostgreSQL, created by the store at start-up).
///
/// When the database cannot be reached, a session read waits for the pool's timeout. The
/// store remembers such a failure for [`Breaker::HOLD`]: the reads in between fail at once
/// (the portal answers that it is degraded without a wait), and the first one after tries the
/// database again.
#[derive(Debug, Clone)]
pub struct DbSessionStore {
    inner: Inner,
    breaker: std::sync::Arc<Breaker>,
}

#[derive(Debug, Clone)]
enum Inner {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

/// Remembers for a moment that the database could not be reached.
#[derive(Debug, Default)]
pub(crate) struct Breaker {
    open_until_ms: AtomicI64,
}

impl Breaker {
    /// How long a failure to reach the database is believed without asking again.
    pub(crate) const HOLD: Duration = Duration::from_secs(2);

    fn now_ms() -> i64 {
        chrono::Utc::now().timestamp_millis()
    }

    /// Whether the database failed less than [`Breaker::HOLD`] ago.
    pub(crate) fn is_open(&self) -> bool {
        Self::now_ms() < self.open_until_ms.load(Ordering::Relaxed)
    }

    /// Notes an outcome: a backend failure opens the breaker, anything else closes it.
    fn note<T>(&self, result: &session_store::Result<T>) {
        let until = match result {
            Err(session_store::Error::Backend(_)) => {
                Self::now_ms() + i64::try_from(Self::HOLD.as_millis()).unwrap_or(2000)
            }
            _ => 0,
        };
        self.open_until_ms.store(until, Ordering::Relaxed);
    }

    fn refuse<T>(&self) -> session_store::Result<T> {
        Err(session_store::Error::Backend(
            "the database could not be reached a moment ago; not asking again yet".to_owned(),
        ))
    }
}

impl DbSessionStore {
    /// A store on `db`, its table created when missing.
    pub async fn new(db: &Db) -> Result<Self, sqlx::Error> {
        let inner = match db.pool() {
            Pool::Sqlite(pool) => Inner::Sqlite(SqliteStore::new(pool.clone())),
            Pool::Postgres(pool) => Inner::Postgres(PostgresStore::new(pool.clone())),
        };
        match &inner {
            Inner::Sqlite(s) => s.migrate().await?,
            Inner::Postgres(s) => s.migrate().await?,
        }
        Ok(DbSessionStore {
            inner,
            breaker: std::sync::Arc::default(),
        })
    }
}

#[async_trait]
impl SessionStore for DbSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        match &self.inner {
            Inner::Sqlite(s) => s.create(record).await,
            Inner::Postgres(s) => s.create(record).await,
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        if self.breaker.is_open() {
            return self.breaker.refuse();
        }
        let saved = match &self.inner {
            Inner::Sqlite(s) => s.save(record).await,
            Inner::Postgres(s) => s.save(record).await,
        };
        self.breaker.note(&saved);
        saved
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        if self.breaker.is_open() {
            return self.breaker.refuse();
        }
        let loaded = match &self.inner {
            Inner::Sqlite(s) => s.load(id).await,
            Inner::Postgres(s) => s.load(id).await,
        };
        self.breaker.note(&loaded);
        loaded
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        match &self.inner {
            Inner::Sqlite(s) => s.delete(id).await,
            Inner::Postgres(s) => s.delete(id).await,
        }
    }
}

#[async_trait]
impl ExpiredDeletion for DbSessionStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        match &self.inner {
            Inner::Sqlite(s) => s.delete_expired().await,
            Inner::Postgres(s) => s.delete_expired().await,
        }
    }
}
