//! Webhook verification with GitHub's real example payloads (npm
//! `@octokit/webhooks-examples`), signed here the way GitHub signs them.

use std::sync::OnceLock;

use axum::http::{HeaderMap, HeaderValue};
use hmac::{Hmac, Mac};
use mirante::adapters::forge::{
    ForgeKind, PullRequestState, WebhookError, WebhookEvent, verify_and_parse,
};
use secrecy::SecretString;
use serde_json::Value;
use sha2::Sha256;

const SECRET: &str = "a-webhook-secret-of-some-length";

/// Every example payload of api.github.com, by event name.
fn examples() -> &'static Vec<Value> {
    static EXAMPLES: OnceLock<Vec<Value>> = OnceLock::new();
    EXAMPLES.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/forges/node_modules/@octokit/webhooks-examples/api.github.com/index.json"
        );
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
            panic!("{path}: {e} (run `npm ci` in tests/forges, or `cargo xtask setup`)")
        });
        serde_json::from_str(&text).expect("the webhook examples parse")
    })
}

/// The first example of `event` whose `action` is `action` (any action when `None`).
fn example(event: &str, action: Option<&str>) -> Value {
    examples()
        .iter()
        .find(|e| e["name"] == event)
        .and_then(|e| e["examples"].as_array())
        .into_iter()
        .flatten()
        .find(|x| action.is_none_or(|a| x["action"] == a))
        .cloned()
        .unwrap_or_else(|| panic!("no {event} {action:?} example"))
}

fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// The headers GitHub sends with a delivery.
fn delivery(event: &str, signature: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("x-github-event", HeaderValue::from_str(event).unwrap());
    headers.insert(
        "x-github-delivery",
        HeaderValue::from_static("72d3162e-cc78-11e3-81ab-4c9367dc0958"),
    );
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    if let Some(signature) = signature {
        headers.insert(
            "x-hub-signature-256",
            HeaderValue::from_str(signature).unwrap(),
        );
    }
    headers
}

fn receive(event: &str, payload: &Value) -> Result<Option<WebhookEvent>, WebhookError> {
    let body = serde_json::to_vec(payload).unwrap();
    let headers = delivery(event, Some(&sign(SECRET, &body)));
    verify_and_parse(
        ForgeKind::Github,
        &headers,
        &body,
        &SecretString::from(SECRET),
    )
}

#[test]
fn an_opened_pull_request_is_reported_open() {
    let payload = example("pull_request", Some("opened"));

    let event = receive("pull_request", &payload).unwrap().unwrap();

    assert_eq!(event.forge, ForgeKind::Github);
    assert_eq!(event.number, payload["number"].as_u64().unwrap());
    assert_eq!(
        event.branch,
        payload["pull_request"]["head"]["ref"].as_str().unwrap()
    );
    assert_eq!(event.state, PullRequestState::Open);
}

#[test]
fn a_reopened_pull_request_is_reported_open() {
    let event = receive("pull_request", &example("pull_request", Some("reopened")))
        .unwrap()
        .unwrap();
    assert_eq!(event.state, PullRequestState::Open);
}

#[test]
fn a_pull_request_closed_without_merging_is_reported_closed() {
    let payload = example("pull_request", Some("closed"));
    assert_eq!(payload["pull_request"]["merged"], false);

    let event = receive("pull_request", &payload).unwrap().unwrap();

    assert_eq!(event.state, PullRequestState::Closed);
}

#[test]
fn a_merged_pull_request_is_reported_merged() {
    // The examples have no merged one: GitHub sends a merge as `closed` with `merged: true`
    // and `merged_at` set, so the real closed payload is made into one.
    let mut payload = example("pull_request", Some("closed"));
    payload["pull_request"]["merged"] = Value::Bool(true);
    payload["pull_request"]["merged_at"] = Value::String("2019-05-15T15:20:40Z".into());

    let event = receive("pull_request", &payload).unwrap().unwrap();

    assert_eq!(event.state, PullRequestState::Merged);
    assert_eq!(event.number, payload["number"].as_u64().unwrap());
}

#[test]
fn pull_request_activity_that_changes_no_state_is_ignored() {
    for action in ["labeled", "synchronize", "assigned", "edited"] {
        let Some(payload) = examples()
            .iter()
            .find(|e| e["name"] == "pull_request")
            .and_then(|e| e["examples"].as_array())
            .and_then(|xs| xs.iter().find(|x| x["action"] == action))
        else {
            continue;
        };
        assert_eq!(receive("pull_request", payload).unwrap(), None, "{action}");
    }
}

#[test]
fn events_other_than_pull_requests_are_ignored() {
    assert_eq!(receive("push", &example("push", None)).unwrap(), None);
    assert_eq!(receive("ping", &example("ping", None)).unwrap(), None);
    assert_eq!(
        receive("issues", &example("issues", Some("opened"))).unwrap(),
        None
    );
}

#[test]
fn a_delivery_signed_with_another_secret_is_refused() {
    let body = serde_json::to_vec(&example("pull_request", Some("closed"))).unwrap();
    let headers = delivery("pull_request", Some(&sign("another-secret", &body)));

    let result = verify_and_parse(
        ForgeKind::Github,
        &headers,
        &body,
        &SecretString::from(SECRET),
    );

    assert!(
        matches!(result, Err(WebhookError::BadSignature)),
        "{result:?}"
    );
}

#[test]
fn a_delivery_without_a_signature_is_refused() {
    let body = serde_json::to_vec(&example("pull_request", Some("closed"))).unwrap();
    let mut headers = delivery("pull_request", None);
    // The legacy SHA-1 header alone is not enough.
    headers.insert("x-hub-signature", HeaderValue::from_static("sha1=0000"));

    let result = verify_and_parse(
        ForgeKind::Github,
        &headers,
        &body,
        &SecretString::from(SECRET),
    );

    assert!(
        matches!(result, Err(WebhookError::BadSignature)),
        "{result:?}"
    );
}

#[test]
fn a_delivery_changed_after_signing_is_refused() {
    let payload = example("pull_request", Some("closed"));
    let body = serde_json::to_vec(&payload).unwrap();
    let signature = sign(SECRET, &body);
    let mut forged = payload.clone();
    forged["pull_request"]["merged"] = Value::Bool(true);
    let forged = serde_json::to_vec(&forged).unwrap();

    let result = verify_and_parse(
        ForgeKind::Github,
        &delivery("pull_request", Some(&signature)),
        &forged,
        &SecretString::from(SECRET),
    );

    assert!(
        matches!(result, Err(WebhookError::BadSignature)),
        "{result:?}"
    );
}

#[test]
fn a_malformed_signature_header_is_refused_without_reading_the_body() {
    for signature in ["sha256=", "sha256=not-hex", "sha1=abcdef", "garbage"] {
        let result = verify_and_parse(
            ForgeKind::Github,
            &delivery("pull_request", Some(signature)),
            b"{ not json",
            &SecretString::from(SECRET),
        );
        assert!(
            matches!(result, Err(WebhookError::BadSignature)),
            "{signature}: {result:?}"
        );
    }
}

#[test]
fn a_correctly_signed_body_that_is_not_a_pull_request_payload_is_malformed() {
    let body = br#"{"action": "closed"}"#;
    let headers = delivery("pull_request", Some(&sign(SECRET, body)));

    let result = verify_and_parse(
        ForgeKind::Github,
        &headers,
        body,
        &SecretString::from(SECRET),
    );

    assert!(
        matches!(result, Err(WebhookError::Malformed(_))),
        "{result:?}"
    );
}
