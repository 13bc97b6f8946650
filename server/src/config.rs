//! Configuration: defaults in code, then an optional `mirante.toml`, then the environment.
//!
//! | key                     | environment                    | default                              |
//! |-------------------------|--------------------------------|--------------------------------------|
//! | `bind`                  | `MIRANTE_BIND`                 | `127.0.0.1:3000`                     |
//! | `public_url`            | `MIRANTE_PUBLIC_URL`           | `http://<bind>`                      |
//! | `data_dir`              | `MIRANTE_DATA_DIR`             | `./data`                             |
//! | `database_url`          | `DATABASE_URL`                 | `sqlite://<data_dir>/mirante.db`     |
//! | `database_max_connections` | `MIRANTE_DATABASE_MAX_CONNECTIONS` | `10`                      |
//! | `catalog`               | `MIRANTE_CATALOG`              | the demo catalog built into the binary |
//! | `catalog_refresh_secs`  | `MIRANTE_CATALOG_REFRESH_SECS` | `300` (`0` turns the timer off)      |
//! | `request_timeout_secs`  | `MIRANTE_REQUEST_TIMEOUT_SECS` | `30`                                 |
//! | `log_format`            | `MIRANTE_LOG_FORMAT`           | `text` (or `json`)                   |
//!
//! The file is read from `MIRANTE_CONFIG` when set (and must then exist), otherwise from
//! `./mirante.toml` when present. Relative paths are relative to the working directory.

use std::{
    fmt,
    net::SocketAddr,
    path::{Path, PathBuf},
};

use figment::{
    Figment,
    providers::{Env, Format, Toml},
};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// Environment variable naming the configuration file.
pub const CONFIG_FILE_ENV: &str = "MIRANTE_CONFIG";

/// The configuration file read when [`CONFIG_FILE_ENV`] is unset and the file exists.
pub const DEFAULT_CONFIG_FILE: &str = "mirante.toml";

/// Keys that may come from `MIRANTE_*` variables. Listed so that unrelated variables sharing
/// the prefix (`MIRANTE_CONFIG`, `MIRANTE_TEST_PG_URL`, ...) are not mistaken for settings,
/// while a typo in `mirante.toml` is still an error.
const ENV_KEYS: &[&str] = &[
    "bind",
    "public_url",
    "data_dir",
    "database_max_connections",
    "catalog",
    "catalog_refresh_secs",
    "request_timeout_secs",
    "log_format",
];

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// The effective configuration of a Mirante process.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Address the HTTP server listens on.
    #[serde(default = "default_bind")]
    pub bind: SocketAddr,
    /// Address people reach the portal at; `http://<bind>` when unset.
    #[serde(default)]
    pub public_url: Option<String>,
    /// Directory for local state (the default SQLite database).
    #[serde(default = "default_data_dir")]
    pub data_dir: PathBuf,
    /// `sqlite://…` or `postgres://…`; a SQLite file in `data_dir` when unset.
    /// A secret: it may carry a password.
    #[serde(default)]
    pub database_url: Option<SecretString>,
    /// Upper bound of the database connection pool.
    #[serde(default = "default_database_max_connections")]
    pub database_max_connections: u32,
    /// Directory holding the catalog YAML; the built-in demo catalog when unset.
    #[serde(default)]
    pub catalog: Option<PathBuf>,
    /// Seconds between timed catalog reloads; 0 turns the timer off.
    #[serde(default = "default_catalog_refresh_secs")]
    pub catalog_refresh_secs: u64,
    /// Seconds a request may take before it is answered with 408.
    #[serde(default = "default_request_timeout_secs")]
    pub request_timeout_secs: u64,
    /// How log lines are written.
    #[serde(default)]
    pub log_format: LogFormat,
}

fn default_bind() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 3000))
}

fn default_data_dir() -> PathBuf {
    PathBuf::from("./data")
}

fn default_database_max_connections() -> u32 {
    10
}

fn default_catalog_refresh_secs() -> u64 {
    300
}

fn default_request_timeout_secs() -> u64 {
    30
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: default_bind(),
            public_url: None,
            data_dir: default_data_dir(),
            database_url: None,
            database_max_connections: default_database_max_connections(),
            catalog: None,
            catalog_refresh_secs: default_catalog_refresh_secs(),
            request_timeout_secs: default_request_timeout_secs(),
            log_format: LogFormat::default(),
        }
    }
}

/// Why the configuration could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `MIRANTE_CONFIG` names a file that does not exist.
    #[error("configuration file {0} does not exist")]
    MissingFile(PathBuf),
    /// A value is malformed or a key unknown.
    #[error("invalid configuration: {0}")]
    Invalid(#[from] Box<figment::Error>),
    /// The database URL cannot be parsed.
    #[error("invalid database_url: {0}")]
    DatabaseUrl(String),
}

impl Config {
    /// Reads the configuration from the process environment and the optional file.
    pub fn load() -> Result<Self, ConfigError> {
        let file = match std::env::var_os(CONFIG_FILE_ENV) {
            Some(path) => {
                let path = PathBuf::from(path);
                if !path.is_file() {
                    return Err(ConfigError::MissingFile(path));
                }
                Some(path)
            }
            None => Some(PathBuf::from(DEFAULT_CONFIG_FILE)).filter(|p| p.is_file()),
        };
        Self::from_figment(Self::figment(file.as_deref()))
    }

    /// The layered sources: the file (if any), then `MIRANTE_*` and `DATABASE_URL`.
    /// Defaults are the serde defaults on [`Config`].
    pub fn figment(file: Option<&Path>) -> Figment {
        let mut figment = Figment::new();
        if let Some(file) = file {
            figment = figment.merge(Toml::file_exact(file));
        }
        figment
            .merge(Env::prefixed("MIRANTE_").only(ENV_KEYS))
            .merge(Env::raw().only(&["DATABASE_URL"]))
    }

    /// Extracts and checks a configuration from any figment (tests build their own).
    pub fn from_figment(figment: Figment) -> Result<Self, ConfigError> {
        let config: Config = figment.extract().map_err(Box::new)?;
        // Fail at start, not at first connection, on a URL we cannot even parse.
        config.backend()?;
        Ok(config)
    }

    /// The address people reach the portal at.
    pub fn public_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://{}", self.bind),
        }
    }

    /// The database URL in force: the configured one or a SQLite file in `data_dir`.
    pub fn database_url(&self) -> SecretString {
        match &self.database_url {
            Some(url) => url.clone(),
            None => SecretString::from(format!(
                "sqlite://{}",
                self.data_dir.join("mirante.db").display()
            )),
        }
    }

    /// Which database the URL points at.
    pub fn backend(&self) -> Result<crate::db::Backend, ConfigError> {
        crate::db::Backend::from_url(self.database_url().expose_secret()).ok_or_else(|| {
            ConfigError::DatabaseUrl(redact_url(self.database_url().expose_secret()))
        })
    }

    /// The configuration as TOML, secrets redacted, in the form `mirante.toml` takes.
    pub fn to_redacted_toml(&self) -> String {
        let printable = Printable {
            bind: self.bind,
            public_url: self.public_url(),
            data_dir: &self.data_dir,
            database_url: redact_url(self.database_url().expose_secret()),
            database_max_connections: self.database_max_connections,
            catalog: self.catalog.as_deref(),
            catalog_refresh_secs: self.catalog_refresh_secs,
            request_timeout_secs: self.request_timeout_secs,
            log_format: self.log_format,
        };
        let mut out =
            toml::to_string(&printable).unwrap_or_else(|e| format!("# unprintable: {e}\n"));
        if self.catalog.is_none() {
            out.push_str("# catalog: the demo catalog built into the binary (set MIRANTE_CATALOG to a directory)\n");
        }
        out
    }
}

/// What `mirante config` prints: effective values, with the database password replaced.
#[derive(Serialize)]
struct Printable<'a> {
    bind: SocketAddr,
    public_url: String,
    data_dir: &'a Path,
    database_url: String,
    database_max_connections: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    catalog: Option<&'a Path>,
    catalog_refresh_secs: u64,
    request_timeout_secs: u64,
    log_format: LogFormat,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("bind", &self.bind)
            .field("public_url", &self.public_url())
            .field("data_dir", &self.data_dir)
            .field(
                "database_url",
                &redact_url(self.database_url().expose_secret()),
            )
            .field("database_max_connections", &self.database_max_connections)
            .field("catalog", &self.catalog)
            .field("catalog_refresh_secs", &self.catalog_refresh_secs)
            .field("request_timeout_secs", &self.request_timeout_secs)
            .field("log_format", &self.log_format)
            .finish()
    }
}

/// Placeholder that replaces a secret in printed URLs.
pub const REDACTED: &str = "REDACTED";

/// A URL with its password (user-info or `password=` query parameter) replaced by
/// [`REDACTED`]; a string that does not parse as a URL is replaced whole, since we cannot
/// tell which part of it is secret.
pub fn redact_url(raw: &str) -> String {
    let Ok(mut url) = url::Url::parse(raw) else {
        return REDACTED.to_owned();
    };
    if url.password().is_some() {
        // Only fails for URLs that cannot carry credentials, which this one just did.
        let _ = url.set_password(Some(REDACTED));
    }
    if url.query_pairs().any(|(k, _)| is_secret_param(&k)) {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let v = if is_secret_param(&k) {
                    REDACTED.to_owned()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    url.to_string()
}

fn is_secret_param(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.contains("password") || key.contains("secret") || key == "sslkey"
}

#[cfg(test)]
mod tests {
    use figment::providers::Serialized;

    use super::*;

    #[test]
    fn defaults_are_loopback_port_3000_and_sqlite_in_data() {
        let config = Config::from_figment(Figment::new()).unwrap();
        assert_eq!(config.bind.to_string(), "127.0.0.1:3000");
        assert_eq!(config.public_url(), "http://127.0.0.1:3000");
        assert_eq!(
            config.database_url().expose_secret(),
            "sqlite://./data/mirante.db"
        );
        assert_eq!(config.catalog_refresh_secs, 300);
        assert!(config.catalog.is_none());
    }

    #[test]
    fn a_password_never_appears_in_debug_or_printed_configuration() {
        let figment = Figment::new().merge(Serialized::default(
            "database_url",
            "postgres://mirante:hunter2@db.internal:5432/mirante?password=hunter3",
        ));
        let config = Config::from_figment(figment).unwrap();
        let printed = config.to_redacted_toml();
        let debugged = format!("{config:?}");
        for text in [&printed, &debugged] {
            assert!(!text.contains("hunter2"), "{text}");
            assert!(!text.contains("hunter3"), "{text}");
            assert!(text.contains("mirante:REDACTED@db.internal"), "{text}");
        }
    }

    #[test]
    fn printed_configuration_reads_back_as_the_same_configuration() {
        let figment = Figment::new()
            .merge(Serialized::default("bind", "0.0.0.0:8080"))
            .merge(Serialized::default("catalog", "/srv/catalog"));
        let config = Config::from_figment(figment).unwrap();
        let again =
            Config::from_figment(Figment::new().merge(Toml::string(&config.to_redacted_toml())))
                .unwrap();
        assert_eq!(again.bind, config.bind);
        assert_eq!(again.catalog, config.catalog);
        assert_eq!(again.public_url(), "http://0.0.0.0:8080");
    }

    #[test]
    fn an_unknown_key_in_the_file_is_an_error() {
        let figment = Figment::new().merge(Toml::string("bnid = \"127.0.0.1:1\""));
        let err = Config::from_figment(figment).unwrap_err().to_string();
        assert!(err.contains("bnid"), "{err}");
    }

    #[test]
    fn an_unsupported_database_scheme_is_an_error() {
        let figment = Figment::new().merge(Serialized::default("database_url", "mysql://x/y"));
        assert!(Config::from_figment(figment).is_err());
    }
}
