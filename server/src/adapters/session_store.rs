//! The session store: tower-sessions' SQL stores, on whichever database the portal uses.

use std::sync::Arc;

use async_trait::async_trait;
use tower_sessions::{
    ExpiredDeletion, SessionStore,
    session::{Id, Record},
    session_store,
};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

use crate::adapters::db::{Breaker, Db, Pool};

/// Sessions in the portal's own database (table `tower_sessions` on SQLite, schema
/// `tower_sessions` on PostgreSQL, created by the store at start-up).
///
/// When the database cannot be reached, a session read waits for the pool's timeout. The
/// store notes such a failure on the database's [`Breaker`], which every database call shares:
/// for [`Breaker::HOLD`] the calls in between fail at once (the portal answers that it is
/// degraded without a wait), and the first one after tries the database again.
#[derive(Debug, Clone)]
pub struct DbSessionStore {
    inner: Inner,
    breaker: Arc<Breaker>,
}

#[derive(Debug, Clone)]
enum Inner {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

/// Notes a store call's outcome on the database's breaker: a backend failure opens it,
/// anything else closes it.
fn note<T>(breaker: &Breaker, result: &session_store::Result<T>) {
    match result {
        Err(session_store::Error::Backend(_)) => breaker.open(),
        _ => breaker.close(),
    }
}

fn refuse<T>() -> session_store::Result<T> {
    Err(session_store::Error::Backend(
        Breaker::refused().to_string(),
    ))
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
            breaker: db.breaker().clone(),
        })
    }
}

#[async_trait]
impl SessionStore for DbSessionStore {
    #[tracing::instrument(name = "db.session_create", skip_all)]
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        match &self.inner {
            Inner::Sqlite(s) => s.create(record).await,
            Inner::Postgres(s) => s.create(record).await,
        }
    }

    #[tracing::instrument(name = "db.session_save", skip_all)]
    async fn save(&self, record: &Record) -> session_store::Result<()> {
        if self.breaker.is_open() {
            return refuse();
        }
        let saved = match &self.inner {
            Inner::Sqlite(s) => s.save(record).await,
            Inner::Postgres(s) => s.save(record).await,
        };
        note(&self.breaker, &saved);
        saved
    }

    #[tracing::instrument(name = "db.session_load", skip_all)]
    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        if self.breaker.is_open() {
            return refuse();
        }
        let loaded = match &self.inner {
            Inner::Sqlite(s) => s.load(id).await,
            Inner::Postgres(s) => s.load(id).await,
        };
        note(&self.breaker, &loaded);
        loaded
    }

    #[tracing::instrument(name = "db.session_delete", skip_all)]
    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        match &self.inner {
            Inner::Sqlite(s) => s.delete(id).await,
            Inner::Postgres(s) => s.delete(id).await,
        }
    }
}

#[async_trait]
impl ExpiredDeletion for DbSessionStore {
    #[tracing::instrument(name = "db.session_delete_expired", skip_all)]
    async fn delete_expired(&self) -> session_store::Result<()> {
        match &self.inner {
            Inner::Sqlite(s) => s.delete_expired().await,
            Inner::Postgres(s) => s.delete_expired().await,
        }
    }
}
