//! The session store: tower-sessions' SQL stores, on whichever database the portal uses.

use async_trait::async_trait;
use tower_sessions::{
    ExpiredDeletion, SessionStore,
    session::{Id, Record},
    session_store,
};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

use crate::adapters::db::Db;

/// Sessions in the portal's own database (table `tower_sessions` on SQLite, schema
/// `tower_sessions` on PostgreSQL, created by the store at start-up).
#[derive(Debug, Clone)]
pub enum DbSessionStore {
    /// SQLite.
    Sqlite(SqliteStore),
    /// PostgreSQL.
    Postgres(PostgresStore),
}

impl DbSessionStore {
    /// A store on `db`, its table created when missing.
    pub async fn new(db: &Db) -> Result<Self, sqlx::Error> {
        let store = match db {
            Db::Sqlite(pool) => DbSessionStore::Sqlite(SqliteStore::new(pool.clone())),
            Db::Postgres(pool) => DbSessionStore::Postgres(PostgresStore::new(pool.clone())),
        };
        match &store {
            DbSessionStore::Sqlite(s) => s.migrate().await?,
            DbSessionStore::Postgres(s) => s.migrate().await?,
        }
        Ok(store)
    }
}

#[async_trait]
impl SessionStore for DbSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        match self {
            DbSessionStore::Sqlite(s) => s.create(record).await,
            DbSessionStore::Postgres(s) => s.create(record).await,
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        match self {
            DbSessionStore::Sqlite(s) => s.save(record).await,
            DbSessionStore::Postgres(s) => s.save(record).await,
        }
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match self {
            DbSessionStore::Sqlite(s) => s.load(id).await,
            DbSessionStore::Postgres(s) => s.load(id).await,
        }
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        match self {
            DbSessionStore::Sqlite(s) => s.delete(id).await,
            DbSessionStore::Postgres(s) => s.delete(id).await,
        }
    }
}

#[async_trait]
impl ExpiredDeletion for DbSessionStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        match self {
            DbSessionStore::Sqlite(s) => s.delete_expired().await,
            DbSessionStore::Postgres(s) => s.delete_expired().await,
        }
    }
}
