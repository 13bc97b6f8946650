//! Argo CD's REST API: one client for the catalog's live checks (`app::probes`) and for
//! following resources after their merge (`app::selfservice::deployments`).
//!
//! Two operations of Argo CD's API description (`assets/swagger.json` in Argo CD's
//! repository) are used, both with the operator's Bearer token: `GET /api/v1/applications/{name}`
//! (`ApplicationService_Get`) and `GET /api/v1/applications` (`ApplicationService_List`). Only
//! the fields the portal reads are parsed; every one of them is optional, as in the API
//! description. Errors never carry the token.

use std::time::Duration;

use reqwest::{StatusCode, redirect};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use url::Url;

/// The most bytes an answer of Argo CD may have; a list of every application of a large
/// installation stays far below it.
pub(crate) const MAX_ANSWER_BYTES: usize = 64 << 20;

/// Where Argo CD is and how to sign in to it.
#[derive(Clone)]
pub struct ArgoCd {
    /// Base address; the API is under `api/v1/`.
    pub url: Url,
    /// Bearer token.
    pub token: SecretString,
}

impl std::fmt::Debug for ArgoCd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgoCd")
            .field("url", &self.url.as_str())
            .field("token", &"REDACTED")
            .finish()
    }
}

/// Why the Argo CD settings cannot work.
#[derive(Debug, thiserror::Error)]
pub enum ArgoSettingsError {
    /// `MIRANTE_ARGOCD_URL` is not an http(s) URL.
    #[error("MIRANTE_ARGOCD_URL is not an http(s) URL: {0}")]
    Url(String),
    /// `MIRANTE_ARGOCD_URL` without a token.
    #[error("MIRANTE_ARGOCD_URL is set but MIRANTE_ARGOCD_TOKEN is not")]
    Token,
}

impl ArgoCd {
    /// The settings `MIRANTE_ARGOCD_URL` and `MIRANTE_ARGOCD_TOKEN` describe; `None` when the
    /// URL is unset.
    pub fn from_settings(
        url: Option<&str>,
        token: Option<&SecretString>,
    ) -> Result<Option<ArgoCd>, ArgoSettingsError> {
        let Some(url) = url else { return Ok(None) };
        let token = token
            .filter(|t| !t.expose_secret().is_empty())
            .ok_or(ArgoSettingsError::Token)?;
        let parsed = Url::parse(url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
            .ok_or_else(|| ArgoSettingsError::Url(url.to_owned()))?;
        Ok(Some(ArgoCd {
            url: parsed,
            token: token.clone(),
        }))
    }
}

/// What went wrong asking Argo CD. The texts are shown to admins and on resources.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgoError {
    /// No answer: connection refused, timeout.
    #[error("cannot reach Argo CD: {0}")]
    Unreachable(String),
    /// An answer whose body could not be read.
    #[error("cannot read Argo CD's answer: {0}")]
    Unreadable(String),
    /// 401 or 403.
    #[error("Argo CD refused the token (HTTP {status}){}", said_suffix(.said))]
    Refused {
        /// The HTTP status.
        status: u16,
        /// Argo CD's message.
        said: Option<String>,
    },
    /// 404 for one application.
    #[error("application not found in Argo CD{}", said_suffix(.said))]
    NotFound {
        /// Argo CD's message.
        said: Option<String>,
    },
    /// Any other status that is not a success.
    #[error("Argo CD answered HTTP {status}{}", said_suffix(.said))]
    Status {
        /// The HTTP status.
        status: u16,
        /// Argo CD's message.
        said: Option<String>,
    },
    /// A success whose body is not what the API description says.
    #[error("Argo CD's answer is not {what}: {error}")]
    Malformed {
        /// What was expected.
        what: &'static str,
        /// The parser's complaint.
        error: String,
    },
    /// The configured address has no path to add `api/v1` to.
    #[error("the Argo CD address cannot take a path")]
    BadAddress,
}

fn said_suffix(said: &Option<String>) -> String {
    said.as_deref()
        .map(|m| format!(": {m}"))
        .unwrap_or_default()
}

impl ArgoError {
    /// The HTTP status Argo CD answered with, when it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            ArgoError::Refused { status, .. } | ArgoError::Status { status, .. } => Some(*status),
            ArgoError::NotFound { .. } => Some(404),
            _ => None,
        }
    }
}

/// An answer of Argo CD: the HTTP status of a success and the parsed body.
#[derive(Debug)]
pub struct Answer<T> {
    /// The HTTP status (2xx).
    pub status: u16,
    /// The body.
    pub body: T,
}

/// The client: Argo CD's address and token, and an HTTP client that follows no redirect (the
/// token must not travel elsewhere).
#[derive(Debug, Clone)]
pub struct ArgoClient {
    argocd: ArgoCd,
    http: reqwest::Client,
    timeout: Duration,
}

impl ArgoClient {
    /// A client for `argocd` whose every call has `timeout`.
    pub fn new(argocd: ArgoCd, timeout: Duration) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("mirante/", env!("CARGO_PKG_VERSION")))
            .redirect(redirect::Policy::none())
            .build()?;
        Ok(ArgoClient {
            argocd,
            http,
            timeout,
        })
    }

    /// `GET /api/v1/applications/{name}`: one application.
    pub async fn application(&self, name: &str) -> Result<Answer<Application>, ArgoError> {
        let answer = self.get(&["applications", name], true).await?;
        let body = serde_json::from_slice(&answer.body).map_err(|e| ArgoError::Malformed {
            what: "an application",
            error: e.to_string(),
        })?;
        Ok(Answer {
            status: answer.status,
            body,
        })
    }

    /// `GET /api/v1/applications`: every application the token may read.
    pub async fn applications(&self) -> Result<Vec<Application>, ArgoError> {
        let answer = self.get(&["applications"], false).await?;
        let list: ApplicationList =
            serde_json::from_slice(&answer.body).map_err(|e| ArgoError::Malformed {
                what: "a list of applications",
                error: e.to_string(),
            })?;
        Ok(list.items.unwrap_or_default())
    }

    #[tracing::instrument(name = "argocd.call", skip(self, one), fields(path = %segments.join("/")))]
    async fn get(&self, segments: &[&str], one: bool) -> Result<Answer<Vec<u8>>, ArgoError> {
        let mut url = self.argocd.url.clone();
        url.path_segments_mut()
            .map_err(|()| ArgoError::BadAddress)?
            .pop_if_empty()
            .extend(["api", "v1"])
            .extend(segments);
        let response = self
            .http
            .get(url)
            .bearer_auth(self.argocd.token.expose_secret())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| ArgoError::Unreachable(self.describe(&e)))?;
        let status = response.status();
        let body = read_limited(response)
            .await
            .map_err(ArgoError::Unreadable)?;
        if !status.is_success() {
            let said = serde_json::from_slice::<RuntimeError>(&body)
                .ok()
                .and_then(|e| e.message.or(e.error))
                .filter(|m| !m.trim().is_empty())
                .map(|m| one_line(&m));
            return Err(match status {
                StatusCode::NOT_FOUND if one => ArgoError::NotFound { said },
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ArgoError::Refused {
                    status: status.as_u16(),
                    said,
                },
                _ => ArgoError::Status {
                    status: status.as_u16(),
                    said,
                },
            });
        }
        Ok(Answer {
            status: status.as_u16(),
            body,
        })
    }

    /// One line saying why a request got no answer.
    fn describe(&self, error: &reqwest::Error) -> String {
        if error.is_timeout() {
            return format!("no answer within {} ms", self.timeout.as_millis());
        }
        let root = root_cause(error);
        if error.is_connect() {
            return format!("cannot connect: {root}");
        }
        format!("request failed: {root}")
    }
}

async fn read_limited(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| root_cause(&e))? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(format!("larger than {MAX_ANSWER_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    one_line(&current.to_string())
}

/// `s` on one line, at most 300 characters.
pub(crate) fn one_line(s: &str) -> String {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    line.chars().take(300).collect()
}

/// Argo CD's error body (`runtimeError`): `{"error", "code", "message"}`.
#[derive(Debug, Deserialize)]
struct RuntimeError {
    error: Option<String>,
    message: Option<String>,
}

/// `v1alpha1ApplicationList`: the parts read.
#[derive(Debug, Deserialize)]
struct ApplicationList {
    items: Option<Vec<Application>>,
}

/// `v1alpha1Application`: the parts the portal reads.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Application {
    /// `metadata` (`v1ObjectMeta`).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// `spec` (`v1alpha1ApplicationSpec`).
    #[serde(default)]
    pub spec: ApplicationSpec,
    /// `status` (`v1alpha1ApplicationStatus`).
    #[serde(default)]
    pub status: ApplicationStatus,
}

/// `v1ObjectMeta`: the name.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ObjectMeta {
    /// The application's name.
    pub name: Option<String>,
    /// Its namespace (where Argo CD keeps it).
    pub namespace: Option<String>,
}

/// `v1alpha1ApplicationSpec`: where the manifests come from.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ApplicationSpec {
    /// The single source.
    pub source: Option<ApplicationSource>,
    /// The sources of a multi-source application.
    pub sources: Option<Vec<ApplicationSource>>,
}

impl ApplicationSpec {
    /// Every source, the single one first.
    pub fn all_sources(&self) -> impl Iterator<Item = &ApplicationSource> {
        self.source.iter().chain(self.sources.iter().flatten())
    }
}

/// `v1alpha1ApplicationSource`: a repository and a folder in it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ApplicationSource {
    /// The repository.
    #[serde(rename = "repoURL")]
    pub repo_url: Option<String>,
    /// The folder in it.
    pub path: Option<String>,
    /// The revision Argo CD tracks.
    #[serde(rename = "targetRevision")]
    pub target_revision: Option<String>,
}

/// `v1alpha1ApplicationStatus`: the parts read.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ApplicationStatus {
    /// Health.
    pub health: Option<HealthStatus>,
    /// Sync.
    pub sync: Option<SyncStatus>,
    /// Conditions (errors and warnings).
    pub conditions: Option<Vec<Condition>>,
    /// The last sync operation.
    #[serde(rename = "operationState")]
    pub operation_state: Option<OperationState>,
}

/// `v1alpha1AppHealthStatus`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct HealthStatus {
    /// `Healthy`, `Progressing`, `Degraded`, `Suspended`, `Missing`, `Unknown`.
    pub status: Option<String>,
    /// Why, when not healthy.
    pub message: Option<String>,
}

/// `v1alpha1SyncStatus`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SyncStatus {
    /// `Synced`, `OutOfSync`, `Unknown`.
    pub status: Option<String>,
    /// The revision compared (single source).
    pub revision: Option<String>,
    /// The revisions compared (multi-source, one per source).
    pub revisions: Option<Vec<String>>,
}

impl SyncStatus {
    /// Every revision reported, the single one first.
    pub fn all_revisions(&self) -> Vec<String> {
        self.revision
            .iter()
            .chain(self.revisions.iter().flatten())
            .filter(|r| !r.is_empty())
            .cloned()
            .collect()
    }
}

/// `v1alpha1ApplicationCondition`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Condition {
    /// `ComparisonError`, `SyncError`, `OrphanedResourceWarning`, ...
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// What it says.
    pub message: Option<String>,
}

/// `v1alpha1OperationState`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct OperationState {
    /// `Running`, `Succeeded`, `Failed`, `Error`, `Terminating`.
    pub phase: Option<String>,
    /// What it says.
    pub message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_need_a_token_and_an_http_url() {
        let token = SecretString::from("t".to_owned());
        let empty = SecretString::from(String::new());
        assert!(ArgoCd::from_settings(None, None).unwrap().is_none());
        assert!(matches!(
            ArgoCd::from_settings(Some("https://argocd.example.org"), None),
            Err(ArgoSettingsError::Token)
        ));
        assert!(matches!(
            ArgoCd::from_settings(Some("https://argocd.example.org"), Some(&empty)),
            Err(ArgoSettingsError::Token)
        ));
        assert!(matches!(
            ArgoCd::from_settings(Some("ftp://argocd.example.org"), Some(&token)),
            Err(ArgoSettingsError::Url(_))
        ));
        let ok = ArgoCd::from_settings(Some("https://argocd.example.org/"), Some(&token))
            .unwrap()
            .unwrap();
        assert!(!format!("{ok:?}").contains("\"t\""));
    }

    #[test]
    fn an_application_reads_its_sources_and_revisions_single_or_many() {
        let app: Application = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "ws-llm"},
            "spec": {
                "source": {"repoURL": "https://git.example.org/devops.git", "path": "a"},
                "sources": [{"path": "b"}, {"repoURL": "x"}]
            },
            "status": {"sync": {"status": "Synced", "revision": "", "revisions": ["r1", "r2"]}}
        }))
        .unwrap();
        let paths: Vec<_> = app
            .spec
            .all_sources()
            .filter_map(|s| s.path.as_deref())
            .collect();
        assert_eq!(paths, ["a", "b"]);
        assert_eq!(
            app.status.sync.unwrap().all_revisions(),
            ["r1".to_owned(), "r2".to_owned()]
        );
        let bare: Application = serde_json::from_value(serde_json::json!({})).unwrap();
        assert!(bare.spec.all_sources().next().is_none());
    }
}
