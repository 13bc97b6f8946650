//! The accept loop: HTTP/1 and HTTP/2 on one listener, with limits a plain `axum::serve` does
//! not set.
//!
//! - **Slow and idle connections.** A connection that has not sent a whole request head within
//!   `MIRANTE_HEADER_READ_TIMEOUT_SECS` is closed; the same clock runs while a keep-alive
//!   connection waits for its next request. Without it, a client that trickles header bytes
//!   holds a task and a socket each for ever. hyper's clock only starts once the protocol is
//!   known, from the first bytes, so a connection that sends nothing at all is given the same
//!   time for its first byte before hyper sees it.
//! - **Connections at once.** At most `MIRANTE_MAX_CONNECTIONS` are served; the loop stops
//!   accepting until one closes, and further clients wait in the kernel's listen queue.
//! - **Shutdown.** Once `stop` completes nothing new is accepted; idle connections close, and
//!   requests in flight finish (each is bounded by the request timeout layer).

use std::{convert::Infallible, future::Future, sync::Arc, time::Duration};

use axum::{Router, body::Body, extract::ConnectInfo};
use hyper::{Request, body::Incoming};
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::{conn::auto, graceful::GracefulShutdown},
};
use tokio::{net::TcpListener, sync::Semaphore};
use tower::ServiceExt;

/// What the accept loop holds connections to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// How long a request head (or the wait for the next one) may take.
    pub header_read_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

/// Serves `app` on `listener` until `stop` completes, then lets the connections finish.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stop: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(limits.header_read_timeout))
        .keep_alive_timeout(limits.header_read_timeout);
    tokio::pin!(stop);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut stop => break,
        };
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait a moment rather than spin.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(remote));
            let app = app.clone();
            async move {
                app.oneshot(req.map(Body::new))
                    .await
                    .map_err(|e: Infallible| e)
            }
        });
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let first_byte = limits.header_read_timeout;
        tokio::spawn(async move {
            let mut peek = [0u8; 1];
            match tokio::time::timeout(first_byte, stream.peek(&mut peek)).await {
                Ok(Ok(n)) if n > 0 => {}
                // Silent past the limit, closed, or failing: nothing to serve.
                _ => return,
            }
            let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            if let Err(error) = watcher.watch(connection.into_owned()).await {
                tracing::debug!(%error, %remote, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The limits of the configuration.
impl From<&crate::config::Config> for Limits {
    fn from(config: &crate::config::Config) -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(config.header_read_timeout_secs.max(1)),
            max_connections: config.max_connections,
        }
    }
}
