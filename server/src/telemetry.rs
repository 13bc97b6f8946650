//! Logging and traces: `tracing` events to stderr, filtered by `RUST_LOG` (default `info`), as
//! text or JSON lines; and, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, the spans — HTTP requests with their request
//! id, forge and Argo CD calls, the worker's steps, database statements — exported over
//! OTLP/HTTP (protobuf) to a collector such as OpenObserve's. The standard `OTEL_*` variables
//! configure it (`OTEL_SERVICE_NAME`, default `mirante`; `OTEL_EXPORTER_OTLP_HEADERS` for a
//! token; `OTEL_RESOURCE_ATTRIBUTES`).

use std::io::IsTerminal;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::{Resource, trace::SdkTracerProvider};
use tracing_subscriber::{EnvFilter, Layer, fmt, prelude::*};

use crate::config::LogFormat;

/// What must outlive the program's work for its traces to leave: the tracer provider, which
/// flushes the spans still batched when it is dropped.
#[derive(Debug, Default)]
#[must_use = "dropping it stops the export of traces"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("warning: the last traces could not be sent: {error}");
        }
    }
}

/// Whether the environment names an OTLP endpoint for traces.
fn otlp_configured() -> bool {
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|name| std::env::var(name).is_ok_and(|v| !v.trim().is_empty()))
}

/// The tracer provider exporting over OTLP/HTTP, configured by the `OTEL_*` variables.
fn otlp_provider() -> Result<SdkTracerProvider, opentelemetry_otlp::ExporterBuildError> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()?;
    let service = std::env::var("OTEL_SERVICE_NAME")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "mirante".to_owned());
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name(service).build())
        .build())
}

/// Installs the global subscriber. Call once, before anything logs; keep what it returns
/// until the end of the program.
pub fn init(format: LogFormat) -> Telemetry {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info"));
    // Colours only for a person at a terminal, not for log files and collectors.
    let ansi = std::io::stderr().is_terminal();
    let logs = match format {
        LogFormat::Text => fmt::layer()
            .with_ansi(ansi)
            .with_writer(std::io::stderr)
            .boxed(),
        LogFormat::Json => fmt::layer().json().with_writer(std::io::stderr).boxed(),
    };
    let (provider, traces) = if otlp_configured() {
        match otlp_provider() {
            Ok(provider) => {
                let tracer = provider.tracer("mirante");
                let layer = tracing_opentelemetry::layer().with_tracer(tracer);
                (Some(provider), Some(layer))
            }
            Err(error) => {
                eprintln!("warning: traces are not exported: {error}");
                (None, None)
            }
        }
    } else {
        (None, None)
    };
    // try_init: a second call (tests) keeps the first subscriber instead of panicking.
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(logs)
        .with(traces)
        .try_init();
    Telemetry { provider }
}
