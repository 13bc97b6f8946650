//! The HTTP side shared by the hosted forges: building URLs from path segments, sending with
//! the token and a timeout, and turning HTTP outcomes into [`ForgeError`]s that never carry
//! the token.
//!
//! **Rate limits.** When a forge says to wait — a 429, or GitHub's 403, with `Retry-After`,
//! or a `X-RateLimit-Remaining`/`RateLimit-Remaining` of 0 with its reset time — every later
//! call through the same client fails at once as unavailable until then, without being sent:
//! the worker backs off and the poller ends its round, instead of spending the token's
//! remaining budget on refusals. The remaining budget each answer reports is a metric.

use std::{
    fmt,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use reqwest::{
    Method, StatusCode,
    header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER},
};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use url::Url;

use super::{DirLimits, Files, ForgeError, ForgeKind, ForgeResult};

/// How long one call to a forge may take, connection included, unless configured otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long to wait after a rate-limit answer that says neither when to retry nor when the
/// budget is reset.
const RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);

/// The longest wait a forge's rate-limit answer is taken at its word for.
const RATE_LIMIT_WAIT_MAX: Duration = Duration::from_secs(3600);

/// The longest forge message kept in an error, in characters.
const MESSAGE_LIMIT: usize = 300;

/// A forge's REST API: base URL, credentials and the headers every call carries.
#[derive(Clone)]
pub(crate) struct Api {
    kind: ForgeKind,
    http: reqwest::Client,
    base: Url,
    headers: HeaderMap,
    token: SecretString,
    timeout: Duration,
    /// Until when the forge asked not to be called (its rate limit), shared by the clones.
    paused_until: Arc<Mutex<Option<Instant>>>,
}

impl fmt::Debug for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Api")
            .field("kind", &self.kind)
            .field("base", &self.base.as_str())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A forge's answer: status and body, any status.
pub(crate) struct Reply {
    pub status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
    what: String,
    token: SecretString,
}

impl Api {
    /// `auth` names the header that carries the token and how its value is written
    /// (`Bearer {token}`, `token {token}`, or the bare token).
    pub(super) fn new(
        kind: ForgeKind,
        http: reqwest::Client,
        base: &Url,
        auth: (HeaderName, &str),
        token: SecretString,
        extra: &[(HeaderName, &'static str)],
    ) -> Result<Self, String> {
        if base.cannot_be_a_base() || !matches!(base.scheme(), "http" | "https") {
            return Err(format!("{base} is not an http(s) URL"));
        }
        let mut headers = HeaderMap::new();
        let (name, template) = auth;
        let mut value = HeaderValue::from_str(&template.replace("{token}", token.expose_secret()))
            .map_err(|_| "the forge token contains characters a header cannot carry".to_owned())?;
        value.set_sensitive(true);
        headers.insert(name, value);
        for (name, value) in extra {
            headers.insert(name.clone(), HeaderValue::from_static(value));
        }
        headers.insert(
            reqwest::header::USER_AGENT,
            HeaderValue::from_static(concat!("mirante/", env!("CARGO_PKG_VERSION"))),
        );
        let mut base = base.clone();
        // A trailing slash would leave an empty segment before the ones appended later.
        if let Ok(mut segments) = base.path_segments_mut() {
            segments.pop_if_empty();
        }
        Ok(Api {
            kind,
            http,
            base,
            headers,
            token,
            timeout: DEFAULT_TIMEOUT,
            paused_until: Arc::default(),
        })
    }

    /// Refuses a call while the forge's rate limit says to wait.
    fn check_pause(&self, what: &str) -> ForgeResult<()> {
        let until = *self
            .paused_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match until {
            Some(until) if Instant::now() < until => {
                crate::metrics::forge_call(self.kind.as_str(), "paused");
                Err(ForgeError::Unavailable(format!(
                    "{what}: not sent, the forge's rate limit asks to wait {} s more",
                    until.saturating_duration_since(Instant::now()).as_secs() + 1
                )))
            }
            _ => Ok(()),
        }
    }

    /// Notes what an answer says of the rate limit: the remaining budget (a metric), and a
    /// pause when the forge asks to wait.
    fn note_answer(&self, status: StatusCode, headers: &HeaderMap) {
        let remaining = header_number(headers, "x-ratelimit-remaining")
            .or_else(|| header_number(headers, "ratelimit-remaining"));
        if let Some(remaining) = remaining {
            crate::metrics::forge_rate_limit_remaining(self.kind.as_str(), remaining);
        }
        let limited = status == StatusCode::TOO_MANY_REQUESTS
            || (status == StatusCode::FORBIDDEN && rate_limited(headers))
            || remaining == Some(0);
        crate::metrics::forge_call(
            self.kind.as_str(),
            match status {
                _ if limited && !status.is_success() => "rate_limited",
                s if s.is_success() || s.is_redirection() => "ok",
                s if s.is_server_error() => "server_error",
                _ => "client_error",
            },
        );
        if !limited {
            return;
        }
        let wait = rate_limit_wait(headers).unwrap_or(RATE_LIMIT_WAIT);
        tracing::warn!(
            forge = %self.kind,
            wait.secs = wait.as_secs(),
            "the forge's rate limit asks to wait; no call is sent until then"
        );
        *self
            .paused_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now() + wait);
    }

    pub(super) fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The base URL with `segments` appended, each percent-encoded as one segment (a `/`
    /// inside a segment becomes `%2F`).
    pub(super) fn url<S: AsRef<str>>(&self, segments: impl IntoIterator<Item = S>) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.extend(segments);
        }
        url
    }

    /// Sends one call and returns the answer whatever its status; only a failure to get an
    /// answer (timeout, refused connection, broken transfer) is an error here.
    #[tracing::instrument(
        name = "forge.call",
        skip_all,
        fields(forge = %self.kind, http.method = %method, http.path = %url.path())
    )]
    pub(super) async fn send<B: Serialize + ?Sized>(
        &self,
        method: Method,
        url: Url,
        body: Option<&B>,
    ) -> ForgeResult<Reply> {
        let what = format!("{} {} {}", self.kind, method, url.path());
        self.check_pause(&what)?;
        let mut request = self
            .http
            .request(method, url)
            .headers(self.headers.clone())
            .timeout(self.timeout);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.map_err(|e| {
            crate::metrics::forge_call(self.kind.as_str(), "transport_error");
            transport_error(&what, &e)
        })?;
        let status = response.status();
        let headers = response.headers().clone();
        self.note_answer(status, &headers);
        let body = response
            .bytes()
            .await
            .map_err(|e| transport_error(&what, &e))?
            .to_vec();
        tracing::debug!(forge.call = %what, http.status = status.as_u16(), "forge answered");
        Ok(Reply {
            status,
            headers,
            body,
            what,
            token: self.token.clone(),
        })
    }

    /// `GET` that expects a 2xx JSON answer, or `None` on 404.
    pub(super) async fn get_optional<T: DeserializeOwned>(
        &self,
        url: Url,
    ) -> ForgeResult<Option<T>> {
        let reply = self.send::<()>(Method::GET, url, None).await?;
        if reply.status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        reply.json().map(Some)
    }

    /// `GET` that expects a 2xx JSON answer.
    pub(super) async fn get<T: DeserializeOwned>(&self, url: Url) -> ForgeResult<T> {
        self.send::<()>(Method::GET, url, None).await?.json()
    }

    /// `GET` of raw bytes (a file's content, not JSON), `None` on 404. At most `max` bytes are
    /// read: a longer answer is [`ForgeError::TooLarge`], `what` saying what was being read.
    #[tracing::instrument(
        name = "forge.call",
        skip_all,
        fields(forge = %self.kind, http.method = "GET", http.path = %url.path())
    )]
    pub(super) async fn get_raw(
        &self,
        url: Url,
        max: u64,
        what: &str,
    ) -> ForgeResult<Option<Vec<u8>>> {
        let call = format!("{} GET {}", self.kind, url.path());
        self.check_pause(&call)?;
        let mut response = self
            .http
            .get(url)
            .headers(self.headers.clone())
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|e| {
                crate::metrics::forge_call(self.kind.as_str(), "transport_error");
                transport_error(&call, &e)
            })?;
        let status = response.status();
        self.note_answer(status, response.headers());
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            let headers = response.headers().clone();
            let body = response.bytes().await.unwrap_or_default().to_vec();
            return Err(Reply {
                status,
                headers,
                body,
                what: call,
                token: self.token.clone(),
            }
            .into_error());
        }
        let too_large = || ForgeError::TooLarge(format!("{what}: more than {max} bytes"));
        if response.content_length().is_some_and(|n| n > max) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| transport_error(&call, &e))?
        {
            body.extend_from_slice(&chunk);
            if body.len() as u64 > max {
                return Err(too_large());
            }
        }
        tracing::debug!(forge.call = %call, http.status = status.as_u16(), "forge answered");
        Ok(Some(body))
    }

    /// `POST` a JSON body; expects a 2xx JSON answer.
    pub(super) async fn post<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        url: Url,
        body: &B,
    ) -> ForgeResult<T> {
        self.send(Method::POST, url, Some(body)).await?.json()
    }
}

impl Reply {
    pub(super) fn is_success(&self) -> bool {
        self.status.is_success()
    }

    /// The body as `T` when the status is 2xx, else the error the status means.
    pub(super) fn json<T: DeserializeOwned>(self) -> ForgeResult<T> {
        if !self.is_success() {
            return Err(self.into_error());
        }
        serde_json::from_slice(&self.body).map_err(|e| {
            ForgeError::Other(format!(
                "{}: unexpected answer from the forge: {e}",
                self.what
            ))
        })
    }

    /// The forge's own explanation, from its JSON error body (`message`, `error`, `errors`),
    /// shortened and with the token scrubbed should a forge ever echo it.
    pub(super) fn message(&self) -> String {
        let text = match serde_json::from_slice::<serde_json::Value>(&self.body) {
            Ok(value) => explain(&value),
            Err(_) => String::from_utf8_lossy(&self.body).trim().to_owned(),
        };
        let token = self.token.expose_secret();
        let text = if token.is_empty() {
            text
        } else {
            text.replace(token, "[REDACTED]")
        };
        let mut short: String = text.chars().take(MESSAGE_LIMIT).collect();
        if short.len() < text.len() {
            short.push('…');
        }
        short
    }

    /// The error this (non-2xx) answer means.
    pub(super) fn into_error(self) -> ForgeError {
        let detail = format!("{}: {} {}", self.what, self.status.as_u16(), self.message());
        let detail = detail.trim_end().to_owned();
        match self.status {
            StatusCode::UNAUTHORIZED => ForgeError::Unauthorized(detail),
            // GitHub answers rate limits with 403 and says so in its headers.
            StatusCode::FORBIDDEN if rate_limited(&self.headers) => ForgeError::Unavailable(detail),
            StatusCode::FORBIDDEN => ForgeError::Unauthorized(detail),
            StatusCode::NOT_FOUND => ForgeError::NotFound(detail),
            StatusCode::CONFLICT => ForgeError::Conflict(detail),
            StatusCode::TOO_MANY_REQUESTS | StatusCode::REQUEST_TIMEOUT => {
                ForgeError::Unavailable(detail)
            }
            s if s.is_server_error() => ForgeError::Unavailable(detail),
            s if s.is_client_error() => ForgeError::Rejected(detail),
            _ => ForgeError::Other(detail),
        }
    }

    /// A header of the answer, when it is there and is text.
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Whether a 403 is a rate limit (GitHub says so in its headers) rather than a refusal.
fn rate_limited(headers: &HeaderMap) -> bool {
    headers.contains_key(RETRY_AFTER)
        || header_number(headers, "x-ratelimit-remaining") == Some(0)
        || header_number(headers, "ratelimit-remaining") == Some(0)
}

/// A header holding a whole number.
fn header_number(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// How long a rate-limit answer asks to wait: `Retry-After` in seconds, else the reset time
/// (`X-RateLimit-Reset` / `RateLimit-Reset`, seconds since the epoch on GitHub, GitLab and
/// Gitea), at most [`RATE_LIMIT_WAIT_MAX`].
fn rate_limit_wait(headers: &HeaderMap) -> Option<Duration> {
    let wait = if let Some(secs) = header_number(headers, RETRY_AFTER.as_str()) {
        Duration::from_secs(secs)
    } else {
        let reset = header_number(headers, "x-ratelimit-reset")
            .or_else(|| header_number(headers, "ratelimit-reset"))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs();
        Duration::from_secs(reset.saturating_sub(now).max(1))
    };
    Some(wait.min(RATE_LIMIT_WAIT_MAX))
}

/// The human part of a forge's JSON error body.
fn explain(value: &serde_json::Value) -> String {
    use serde_json::Value;
    let mut parts = Vec::new();
    match value {
        Value::String(s) => parts.push(s.clone()),
        Value::Array(items) => parts.extend(items.iter().map(explain)),
        Value::Object(map) => {
            for key in ["message", "error", "errors"] {
                if let Some(v) = map.get(key) {
                    let text = explain(v);
                    if !text.is_empty() {
                        parts.push(text);
                    }
                }
            }
        }
        Value::Null => {}
        other => parts.push(other.to_string()),
    }
    parts.join("; ")
}

/// No answer at all: a timeout, a refused connection or a broken transfer is worth retrying.
/// reqwest's message names the URL, which carries no credentials.
fn transport_error(what: &str, error: &reqwest::Error) -> ForgeError {
    let cause = if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "could not connect".to_owned()
    } else {
        "the connection failed".to_owned()
    };
    let source = std::error::Error::source(error)
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    if error.is_builder() {
        return ForgeError::Other(format!("{what}: {cause}{source}"));
    }
    ForgeError::Unavailable(format!("{what}: {cause}{source}"))
}

/// Whether `rev` is written as a full commit id (40 hex digits, or 64 in a SHA-256 repository).
/// The ancestry questions are asked about commits only: a branch or tag name, or a Helm chart
/// version Argo CD reports as a revision, is answered "cannot tell" without asking the forge.
pub(crate) fn is_commit_id(rev: &str) -> bool {
    matches!(rev.len(), 40 | 64) && rev.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Splits a repository-relative path or branch name into URL segments.
pub(crate) fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|s| !s.is_empty())
}

/// Decodes the base64 `content` forges send for a file (with line breaks in it).
pub(crate) fn decode_base64_text(content: &str, what: &str) -> ForgeResult<String> {
    use base64::Engine as _;
    let compact: String = content
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| ForgeError::Other(format!("{what}: the file content is not base64: {e}")))?;
    String::from_utf8(bytes)
        .map_err(|_| ForgeError::Other(format!("{what}: the file is not UTF-8 text")))
}

/// Decodes base64 content that need not be text (a blob), line breaks allowed.
pub(crate) fn decode_base64_bytes(content: &str, what: &str) -> ForgeResult<Vec<u8>> {
    use base64::Engine as _;
    let compact: String = content
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| ForgeError::Other(format!("{what}: the content is not base64: {e}")))
}

/// Encodes text as base64 for forges that want file contents that way.
pub(crate) fn encode_base64(content: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forge_error_body_is_explained_from_its_message_fields() {
        let body = serde_json::json!({
            "message": "Validation Failed",
            "errors": [{"resource": "PullRequest", "message": "A pull request already exists"}]
        });
        assert_eq!(
            explain(&body),
            "Validation Failed; A pull request already exists"
        );
        let gitlab = serde_json::json!({"message": ["Another open merge request already exists"]});
        assert_eq!(
            explain(&gitlab),
            "Another open merge request already exists"
        );
    }

    #[test]
    fn url_segments_are_encoded_one_by_one() {
        let api = Api::new(
            ForgeKind::Gitlab,
            reqwest::Client::new(),
            &Url::parse("https://gitlab.example.org/api/v4/").unwrap(),
            (HeaderName::from_static("private-token"), "{token}"),
            SecretString::from("t"),
            &[],
        )
        .unwrap();
        let url = api.url([
            "projects",
            "infra/devops",
            "repository",
            "files",
            "a b.yaml",
        ]);
        assert_eq!(
            url.as_str(),
            "https://gitlab.example.org/api/v4/projects/infra%2Fdevops/repository/files/a%20b.yaml"
        );
    }

    #[test]
    fn only_full_commit_ids_are_asked_about() {
        assert!(is_commit_id("0123456789abcdef0123456789ABCDEF01234567"));
        assert!(is_commit_id(&"a".repeat(64)));
        for not_one in ["main", "0123456", "1.2.3", &"g".repeat(40), &"a".repeat(41)] {
            assert!(!is_commit_id(not_one), "{not_one}");
        }
    }

    #[test]
    fn base64_file_content_with_line_breaks_decodes() {
        assert_eq!(
            decode_base64_text("aGVs\nbG8=\n", "x").unwrap(),
            "hello".to_owned()
        );
        assert!(decode_base64_text("%%%", "x").is_err());
    }
}

/// An entry of a git tree listing as GitHub and Gitea send it (`GET …/git/trees/{sha}`).
#[derive(Deserialize)]
pub(crate) struct TreeEntry {
    pub path: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub sha: String,
    #[serde(default)]
    pub size: Option<u64>,
}

/// A blob as GitHub and Gitea send it (`GET …/git/blobs/{sha}`): base64 content.
#[derive(Deserialize)]
pub(crate) struct Blob {
    pub content: String,
}

/// Reads the listed files `blobs` of folder `dir` through the git blobs API GitHub and Gitea
/// share (`blob_url(sha)`), sorted by path. The limits are checked first on the listing (count
/// and listed sizes), then on the bytes as they are read.
pub(crate) async fn read_listed_blobs(
    api: &Api,
    blob_url: impl Fn(&str) -> Url,
    dir: &str,
    blobs: Vec<TreeEntry>,
    limits: DirLimits,
) -> ForgeResult<Files> {
    limits.check_files(dir, blobs.len())?;
    limits.check_bytes(dir, blobs.iter().filter_map(|e| e.size).sum())?;
    let mut files = Vec::with_capacity(blobs.len());
    let mut bytes = 0u64;
    for entry in blobs {
        let blob: Blob = api.get(blob_url(&entry.sha)).await?;
        let what = format!("{}: {dir}/{}", api.kind, entry.path);
        let content = decode_base64_bytes(&blob.content, &what)?;
        bytes += content.len() as u64;
        limits.check_bytes(dir, bytes)?;
        files.push((entry.path, content));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}
