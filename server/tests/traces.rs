//! Traces over OTLP: the real binary, with `OTEL_EXPORTER_OTLP_ENDPOINT` naming a receiver
//! this test runs, exports its spans as OTLP/HTTP protobuf; the receiver decodes them with the
//! OpenTelemetry protocol's own message types and finds the HTTP request's span with its
//! request id, under the configured service name, and a database statement's span inside a
//! request's.

mod support;

use std::{
    process::{Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{Router, body::Bytes, extract::State, routing::post};
use opentelemetry_proto::tonic::{
    collector::trace::v1::ExportTraceServiceRequest, common::v1::any_value::Value,
};
use prost::Message;
use tempfile::TempDir;

/// What the receiver got: every exported request, decoded.
type Received = Arc<Mutex<Vec<ExportTraceServiceRequest>>>;

async fn receive(State(received): State<Received>, body: Bytes) -> &'static str {
    let request = ExportTraceServiceRequest::decode(body).expect("not an OTLP trace export");
    received.lock().unwrap().push(request);
    ""
}

/// An OTLP/HTTP trace receiver on a free port: its base URL and what it received.
async fn receiver() -> (String, Received) {
    let received = Received::default();
    let router = Router::new()
        .route("/v1/traces", post(receive))
        .with_state(Arc::clone(&received));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{addr}"), received)
}

/// A string attribute of a span.
fn attribute<'a>(
    attributes: &'a [opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<&'a str> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            Value::StringValue(s) => Some(s.as_str()),
            _ => None,
        }
    })
}

#[tokio::test]
async fn spans_are_exported_over_otlp_with_the_request_id_and_the_service_name() {
    let (endpoint, received) = receiver().await;
    let data = TempDir::new().unwrap();
    let port = support::free_port();
    let address = format!("http://127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mirante"))
        .arg("serve")
        .current_dir(data.path())
        .env_clear()
        .env("MIRANTE_BIND", format!("127.0.0.1:{port}"))
        .env("MIRANTE_DATA_DIR", data.path())
        .env("MIRANTE_PROBE_INTERVAL_SECS", "0")
        .env("MIRANTE_FORGE_POLL_SECS", "0")
        .env("MIRANTE_SHUTDOWN_DELAY_SECS", "0")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_SERVICE_NAME", "mirante-under-test")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cannot start the mirante binary");
    support::wait_ready(&mut child, &address).await;

    let answered = reqwest::Client::new()
        .get(format!("{address}/healthz"))
        .header("x-request-id", "trace-test-0001")
        .send()
        .await
        .unwrap();
    let ready = reqwest::Client::new()
        .get(format!("{address}/readyz"))
        .header("x-request-id", "trace-test-0002")
        .send()
        .await
        .unwrap();
    // A signed-in person's session is read from the session store.
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .cookie_store(true)
        .build()
        .unwrap();
    let signed_in = browser
        .post(format!("{address}/auth/dev"))
        .header("origin", &address)
        .form(&[("user", "rui"), ("next", "/")])
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), 303);
    let with_cookie = browser
        .get(format!("{address}/api/v1/requests"))
        .header("x-request-id", "trace-test-0003")
        .send()
        .await
        .unwrap();
    // Stopping flushes the spans still batched.
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "mirante did not stop");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    assert_eq!(answered.status(), 200);
    let received = received.lock().unwrap();
    let resources: Vec<_> = received.iter().flat_map(|r| &r.resource_spans).collect();
    assert!(!resources.is_empty(), "nothing was exported");
    let services: Vec<&str> = resources
        .iter()
        .filter_map(|r| attribute(&r.resource.as_ref()?.attributes, "service.name"))
        .collect();
    assert!(
        services.iter().all(|s| *s == "mirante-under-test"),
        "{services:?}"
    );
    let spans: Vec<_> = resources
        .iter()
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .collect();
    let request = spans
        .iter()
        .find(|s| attribute(&s.attributes, "request.id") == Some("trace-test-0001"))
        .unwrap_or_else(|| panic!("no span of the request: {spans:#?}"));
    assert_eq!(request.name, "http.request");
    assert_eq!(
        attribute(&request.attributes, "http.path"),
        Some("/healthz")
    );
    assert_eq!(request.trace_id.len(), 16);
    // Readiness pings the database: a statement's span, in the request's trace.
    assert_eq!(ready.status(), 200);
    let readiness = spans
        .iter()
        .find(|s| attribute(&s.attributes, "request.id") == Some("trace-test-0002"))
        .expect("no span of the readiness request");
    let ping = spans
        .iter()
        .find(|s| s.name == "db.ping" && s.trace_id == readiness.trace_id)
        .unwrap_or_else(|| panic!("no database span in the readiness request: {spans:#?}"));
    assert!(!ping.parent_span_id.is_empty(), "{ping:#?}");
    assert_eq!(with_cookie.status(), 200);
    let cookie_request = spans
        .iter()
        .find(|s| attribute(&s.attributes, "request.id") == Some("trace-test-0003"))
        .expect("no span of the signed-in request");
    assert!(
        spans
            .iter()
            .any(|s| s.name == "db.session_load" && s.trace_id == cookie_request.trace_id),
        "no session-store span in the signed-in request: {spans:#?}"
    );
}
