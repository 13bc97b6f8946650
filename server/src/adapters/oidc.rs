//! The OpenID Connect relying party: discovery, the authorization URL (code flow with PKCE
//! S256, `state` and `nonce`), the code exchange, ID-token verification and userinfo.
//!
//! [`Provider`] keeps the discovered provider and discovers again when it is missing (the
//! provider was down when the portal started) or stale (keys rotate), so a provider outage
//! never needs a restart of the portal.
//!
//! Discovery is fetched here rather than with `openidconnect`'s `discover_async`: Authentik
//! without a signing key serves `{}` at its JWKS endpoint, which the crate's `JsonWebKeySet`
//! cannot parse, so an unparsable or empty key set is taken as "no keys" (HS256 tokens are
//! verified with the client secret, which needs none).

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, anyhow, bail};
use arc_swap::ArcSwapOption;
use openidconnect::{
    AccessToken, AccessTokenHash, AdditionalClaims, AuthorizationCode, ClientId, ClientSecret,
    CsrfToken, EndpointMaybeSet, EndpointNotSet, EndpointSet, IssuerUrl, JsonWebKey, Nonce,
    OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, TokenResponse,
    UserInfoClaims,
    core::{
        CoreAuthenticationFlow, CoreClient, CoreGenderClaim, CoreIdToken, CoreIdTokenClaims,
        CoreIdTokenVerifier, CoreJsonWebKey, CoreJsonWebKeySet, CoreJwsSigningAlgorithm,
        CoreProviderMetadata,
    },
};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// The client after discovery: authorization endpoint set, token and userinfo endpoints as
/// advertised.
type Client = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// The `groups` claim (Authentik sends it with the `profile` scope).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct GroupsClaim {
    /// Group names.
    #[serde(default)]
    pub groups: Vec<String>,
}

impl AdditionalClaims for GroupsClaim {}

/// The configured provider.
pub struct Oidc {
    issuer: String,
    client: Client,
    end_session_endpoint: Option<url::Url>,
    client_id: String,
    client_secret: SecretString,
    http: reqwest::Client,
}

/// Where the provider is and who the portal is to it: what discovery needs.
pub struct ProviderSettings {
    /// `MIRANTE_OIDC_ISSUER`, exactly as the provider spells it.
    pub issuer: String,
    /// `MIRANTE_OIDC_CLIENT_ID`.
    pub client_id: String,
    /// `MIRANTE_OIDC_CLIENT_SECRET`.
    pub client_secret: SecretString,
    /// `<MIRANTE_PUBLIC_URL>/auth/callback`.
    pub redirect_uri: String,
}

/// The configured provider and, once discovery has succeeded, its discovered client.
///
/// Discovery is tried at start-up; when the provider cannot be reached then, the portal starts
/// anyway, [`Provider::get`] tries again on the next sign-in (at most once per
/// [`Provider::RETRY_EVERY`]) and [`Provider::keep_fresh`] retries in the background with
/// backoff. Once discovered, the metadata and keys are read again every
/// [`Provider::REFRESH_EVERY`] so a rotated signing key is picked up; a failed refresh keeps
/// the last good client.
pub struct Provider {
    settings: ProviderSettings,
    current: ArcSwapOption<Oidc>,
    last_attempt: tokio::sync::Mutex<Option<Instant>>,
}

impl Provider {
    /// The least time between two discovery attempts made for sign-ins.
    pub const RETRY_EVERY: Duration = Duration::from_secs(5);
    /// How often a discovered provider's metadata and keys are read again.
    pub const REFRESH_EVERY: Duration = Duration::from_secs(3600);
    /// The longest wait between two background attempts while the provider is unreachable.
    const MAX_BACKOFF: Duration = Duration::from_secs(60);

    /// A provider not yet discovered.
    pub fn new(settings: ProviderSettings) -> Self {
        Provider {
            settings,
            current: ArcSwapOption::empty(),
            last_attempt: tokio::sync::Mutex::new(None),
        }
    }

    /// The issuer, as users are keyed by it (known before discovery).
    pub fn issuer(&self) -> &str {
        &self.settings.issuer
    }

    /// The discovered client, if discovery has succeeded.
    pub fn current(&self) -> Option<Arc<Oidc>> {
        self.current.load_full()
    }

    /// Discovers now and, on success, replaces the client in use.
    pub async fn refresh(&self) -> anyhow::Result<Arc<Oidc>> {
        let s = &self.settings;
        let oidc = Arc::new(
            Oidc::discover(&s.issuer, &s.client_id, &s.client_secret, &s.redirect_uri)
                .await
                .with_context(|| format!("cannot use the OpenID provider {}", s.issuer))?,
        );
        self.current.store(Some(Arc::clone(&oidc)));
        Ok(oidc)
    }

    /// The discovered client, discovering first when there is none yet. Concurrent callers
    /// share one attempt, and a failed attempt is not repeated for [`Provider::RETRY_EVERY`].
    pub async fn get(&self) -> anyhow::Result<Arc<Oidc>> {
        if let Some(oidc) = self.current() {
            return Ok(oidc);
        }
        let mut last = self.last_attempt.lock().await;
        if let Some(oidc) = self.current() {
            return Ok(oidc);
        }
        if last.is_some_and(|at| at.elapsed() < Self::RETRY_EVERY) {
            bail!(
                "the OpenID provider {} could not be reached a moment ago",
                self.settings.issuer
            );
        }
        *last = Some(Instant::now());
        self.refresh().await
    }

    /// Runs until `stop`: retries discovery with backoff while the provider is unreachable,
    /// then refreshes it every [`Provider::REFRESH_EVERY`].
    pub async fn keep_fresh(self: Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        let mut backoff = Duration::from_secs(1);
        loop {
            let wait = if self.current().is_some() {
                Self::REFRESH_EVERY
            } else {
                backoff
            };
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
            match self.refresh().await {
                Ok(_) => backoff = Duration::from_secs(1),
                Err(error) => {
                    tracing::warn!(
                        error = format!("{error:#}"),
                        "OpenID provider discovery failed"
                    );
                    backoff = (backoff * 2).min(Self::MAX_BACKOFF);
                }
            }
        }
    }
}

/// A sign-in attempt in progress, kept in the session between the redirect and the callback.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PendingLogin {
    /// The `state` sent to the provider.
    pub state: String,
    /// The `nonce` sent to the provider.
    pub nonce: String,
    /// The PKCE verifier.
    pub pkce_verifier: String,
    /// Where to go after signing in.
    pub next: String,
}

/// Who signed in, as the provider vouched.
#[derive(Debug, Clone)]
pub struct Identity {
    /// Subject.
    pub subject: String,
    /// `preferred_username`.
    pub username: String,
    /// Display name.
    pub name: String,
    /// E-mail.
    pub email: Option<String>,
    /// Groups.
    pub groups: Vec<String>,
    /// The raw ID token, for `id_token_hint` at sign-out.
    pub id_token: String,
}

impl Oidc {
    /// Reads the provider's discovery document and key set.
    pub async fn discover(
        issuer: &str,
        client_id: &str,
        client_secret: &SecretString,
        redirect_uri: &str,
    ) -> anyhow::Result<Self> {
        // Redirects are never followed: a provider answering discovery or the token request
        // with a redirect is misconfigured, and following it would leak requests elsewhere.
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .context("cannot build the HTTP client")?;
        let discovery_url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let body = http
            .get(&discovery_url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .with_context(|| format!("cannot read {discovery_url}"))?
            .bytes()
            .await
            .with_context(|| format!("cannot read {discovery_url}"))?;
        let metadata: CoreProviderMetadata = serde_json::from_slice(&body)
            .with_context(|| format!("{discovery_url} is not OpenID provider metadata"))?;
        if metadata.issuer().as_str() != issuer {
            bail!(
                "the provider calls itself {} but MIRANTE_OIDC_ISSUER is {issuer} (they must match exactly, trailing slash included)",
                metadata.issuer().as_str()
            );
        }
        let raw: serde_json::Value = serde_json::from_slice(&body)?;
        let end_session_endpoint = raw["end_session_endpoint"]
            .as_str()
            .and_then(|u| url::Url::parse(u).ok());

        let jwks_url = metadata.jwks_uri().url().clone();
        let jwks_body = http
            .get(jwks_url.clone())
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .with_context(|| format!("cannot read the key set at {jwks_url}"))?
            .bytes()
            .await?;
        let jwks = serde_json::from_slice::<CoreJsonWebKeySet>(&jwks_body).unwrap_or_else(|_| {
            tracing::info!(
                oidc.jwks = %jwks_url,
                "the provider publishes no signing keys; only HS256 ID tokens can be verified"
            );
            CoreJsonWebKeySet::new(Vec::new())
        });
        let metadata = metadata.set_jwks(jwks);

        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(client_id.to_owned()),
            Some(ClientSecret::new(client_secret.expose_secret().to_owned())),
        )
        .set_redirect_uri(RedirectUrl::new(redirect_uri.to_owned())?);
        IssuerUrl::new(issuer.to_owned())?;
        Ok(Oidc {
            issuer: issuer.to_owned(),
            client,
            end_session_endpoint,
            client_id: client_id.to_owned(),
            client_secret: client_secret.clone(),
            http,
        })
    }

    /// The issuer, as users are keyed by it.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Where to send the browser to sign in, and what to remember until it comes back.
    pub fn start(&self, next: String) -> (url::Url, PendingLogin) {
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = self
            .client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("profile".to_owned()))
            .add_scope(Scope::new("email".to_owned()))
            .set_pkce_challenge(challenge)
            .url();
        (
            url,
            PendingLogin {
                state: state.secret().clone(),
                nonce: nonce.secret().clone(),
                pkce_verifier: verifier.secret().clone(),
                next,
            },
        )
    }

    /// Exchanges the code, verifies the ID token (signature, issuer, audience, expiry,
    /// nonce) and reads userinfo. The error is the reason shown and audited.
    pub async fn finish(&self, code: &str, pending: &PendingLogin) -> anyhow::Result<Identity> {
        let token = self
            .client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| anyhow!("the provider has no token endpoint: {e}"))?
            .set_pkce_verifier(PkceCodeVerifier::new(pending.pkce_verifier.clone()))
            .request_async(&self.http)
            .await
            .map_err(|e| {
                anyhow!(
                    "the provider refused the authorization code: {}",
                    describe(&e)
                )
            })?;
        let id_token = token
            .id_token()
            .ok_or_else(|| anyhow!("the provider sent no ID token"))?;
        // RS256 with the provider's key, or HS256 with the client secret (Authentik without a
        // signing key); nothing else, and never `none`.
        let verifier = self.client.id_token_verifier().set_allowed_algs([
            CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
            CoreJwsSigningAlgorithm::HmacSha256,
        ]);
        let claims = id_token
            .claims(&verifier, &Nonce::new(pending.nonce.clone()))
            .map_err(|e| anyhow!("the ID token was rejected: {e}"))?;
        check_access_token_hash(
            id_token,
            claims,
            &verifier,
            token.access_token(),
            &self.client_secret,
        )?;
        let subject = claims.subject().clone();

        let info: UserInfoClaims<GroupsClaim, CoreGenderClaim> = self
            .client
            .user_info(
                AccessToken::new(token.access_token().secret().clone()),
                Some(subject.clone()),
            )
            .map_err(|e| anyhow!("the provider has no userinfo endpoint: {e}"))?
            .request_async(&self.http)
            .await
            .map_err(|e| anyhow!("userinfo failed: {e}"))?;

        let username = info
            .preferred_username()
            .or(claims.preferred_username())
            .map(|u| u.as_str().to_owned())
            .unwrap_or_else(|| subject.as_str().to_owned());
        let name = info
            .name()
            .or(claims.name())
            .and_then(|n| n.get(None))
            .map(|n| n.as_str().to_owned())
            .unwrap_or_else(|| username.clone());
        let email = info
            .email()
            .or(claims.email())
            .map(|e| e.as_str().to_owned());
        Ok(Identity {
            subject: subject.as_str().to_owned(),
            username,
            name,
            email,
            groups: groups(&info.additional_claims().groups, &id_token.to_string()),
            id_token: id_token.to_string(),
        })
    }

    /// The provider's end-session URL for this ID token, when it advertises one.
    pub fn end_session_url(
        &self,
        id_token: &str,
        post_logout_redirect_uri: &str,
    ) -> Option<url::Url> {
        let mut url = self.end_session_endpoint.clone()?;
        url.query_pairs_mut()
            .append_pair("id_token_hint", id_token)
            .append_pair("post_logout_redirect_uri", post_logout_redirect_uri)
            .append_pair("client_id", &self.client_id);
        Some(url)
    }
}

/// Checks the ID token's `at_hash` against the access token that came with it, when the
/// provider sent one (Authentik always does): a token response whose access token was swapped
/// is refused. HS256 tokens hash with the client secret's key, RS256 with the provider's.
fn check_access_token_hash(
    id_token: &CoreIdToken,
    claims: &CoreIdTokenClaims,
    verifier: &CoreIdTokenVerifier<'_>,
    access_token: &AccessToken,
    client_secret: &SecretString,
) -> anyhow::Result<()> {
    let Some(expected) = claims.access_token_hash() else {
        return Ok(());
    };
    let alg = id_token
        .signing_alg()
        .map_err(|e| anyhow!("the ID token was rejected: {e}"))?;
    let actual = if matches!(alg, CoreJwsSigningAlgorithm::HmacSha256) {
        let key = CoreJsonWebKey::new_symmetric(client_secret.expose_secret().as_bytes().to_vec());
        AccessTokenHash::from_token(access_token, alg, &key)
    } else {
        let key = id_token
            .signing_key(verifier)
            .map_err(|e| anyhow!("the ID token was rejected: {e}"))?;
        AccessTokenHash::from_token(access_token, alg, key)
    }
    .map_err(|e| anyhow!("the ID token was rejected: {e}"))?;
    if actual != *expected {
        bail!("the ID token's at_hash does not match the access token");
    }
    Ok(())
}

/// A token-request error with the provider's error code when there is one.
fn describe<RE: std::error::Error + 'static, T: openidconnect::ErrorResponse + 'static>(
    e: &openidconnect::RequestTokenError<RE, T>,
) -> String {
    match e {
        openidconnect::RequestTokenError::ServerResponse(r) => serde_json::to_value(r)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "error response".to_owned()),
        other => other.to_string(),
    }
}

/// The user's groups: from userinfo, or else from the ID token's `groups` claim (Authentik
/// sends them in both; other providers may send them in only one).
fn groups(from_userinfo: &[String], verified_id_token: &str) -> Vec<String> {
    if !from_userinfo.is_empty() {
        return from_userinfo.to_vec();
    }
    id_token_groups(verified_id_token)
}

/// The `groups` claim of an ID token whose signature has already been verified.
fn id_token_groups(verified_id_token: &str) -> Vec<String> {
    use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
    verified_id_token
        .split('.')
        .nth(1)
        .and_then(|payload| URL_SAFE_NO_PAD.decode(payload).ok())
        .and_then(|json| serde_json::from_slice::<GroupsClaim>(&json).ok())
        .map(|claim| claim.groups)
        .unwrap_or_default()
}

#[cfg(test)]
mod groups_tests {
    use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};

    use super::*;

    fn token(payload: &str) -> String {
        format!("e30.{}.c2ln", URL_SAFE_NO_PAD.encode(payload))
    }

    #[test]
    fn groups_come_from_userinfo_when_it_has_them() {
        let t = token(r#"{"sub":"1","groups":["from-token"]}"#);

        assert_eq!(groups(&["portal-admins".into()], &t), ["portal-admins"]);
    }

    #[test]
    fn groups_fall_back_to_the_id_token_claim() {
        let t = token(r#"{"sub":"1","groups":["portal-admins","researchers"]}"#);

        assert_eq!(groups(&[], &t), ["portal-admins", "researchers"]);
    }

    #[test]
    fn a_token_without_groups_gives_none() {
        assert!(groups(&[], &token(r#"{"sub":"1"}"#)).is_empty());
        assert!(groups(&[], "not-a-jwt").is_empty());
    }
}

#[cfg(test)]
mod at_hash_tests {
    use chrono::{Duration, Utc};
    use openidconnect::{
        Audience, EmptyAdditionalClaims, IssuerUrl, StandardClaims, SubjectIdentifier,
        core::CoreHmacKey,
    };

    use super::*;

    const SECRET: &str = "a-client-secret-of-some-length";
    const ISSUER: &str = "https://auth.example.org/application/o/mirante/";

    fn id_token_for(access_token: &str) -> CoreIdToken {
        let claims = CoreIdTokenClaims::new(
            IssuerUrl::new(ISSUER.to_owned()).unwrap(),
            vec![Audience::new("mirante".to_owned())],
            Utc::now() + Duration::minutes(5),
            Utc::now(),
            StandardClaims::new(SubjectIdentifier::new("hashed-sub".to_owned())),
            EmptyAdditionalClaims {},
        )
        .set_nonce(Some(Nonce::new("n".to_owned())));
        CoreIdToken::new(
            claims,
            &CoreHmacKey::new(SECRET.as_bytes()),
            CoreJwsSigningAlgorithm::HmacSha256,
            Some(&AccessToken::new(access_token.to_owned())),
            None,
        )
        .unwrap()
    }

    fn check(id_token: &CoreIdToken, access_token: &str) -> anyhow::Result<()> {
        let verifier = CoreIdTokenVerifier::new_confidential_client(
            ClientId::new("mirante".to_owned()),
            ClientSecret::new(SECRET.to_owned()),
            IssuerUrl::new(ISSUER.to_owned()).unwrap(),
            CoreJsonWebKeySet::new(Vec::new()),
        )
        .set_allowed_algs([CoreJwsSigningAlgorithm::HmacSha256]);
        let claims = id_token.claims(&verifier, &Nonce::new("n".to_owned()))?;
        check_access_token_hash(
            id_token,
            claims,
            &verifier,
            &AccessToken::new(access_token.to_owned()),
            &SecretString::from(SECRET),
        )
    }

    #[test]
    fn an_id_token_whose_at_hash_matches_the_access_token_is_accepted() {
        let token = id_token_for("the-access-token");

        check(&token, "the-access-token").unwrap();
    }

    #[test]
    fn an_access_token_swapped_after_signing_is_refused() {
        let token = id_token_for("the-access-token");

        let error = check(&token, "another-access-token").unwrap_err();

        assert!(error.to_string().contains("at_hash"), "{error:#}");
    }
}
