//! Shutting down without dropping anyone: the real `mirante` binary, sent SIGTERM, first says
//! it is not ready (so a load balancer stops sending it requests) while it still serves the
//! requests that come, for `MIRANTE_SHUTDOWN_DELAY_SECS`; then it closes and exits cleanly.

mod support;

use std::{
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use tempfile::TempDir;

const DELAY: Duration = Duration::from_secs(3);

/// Starts `mirante serve` on SQLite in `data` and waits until `/readyz` answers 200; answers
/// the process and its address.
async fn serve(data: &Path) -> (Child, String) {
    let port = support::free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mirante"))
        .arg("serve")
        .current_dir(data)
        .env_clear()
        .env("MIRANTE_BIND", format!("127.0.0.1:{port}"))
        .env("MIRANTE_DATA_DIR", data)
        .env("MIRANTE_SHUTDOWN_DELAY_SECS", DELAY.as_secs().to_string())
        .env("MIRANTE_PROBE_INTERVAL_SECS", "0")
        .env("MIRANTE_FORGE_POLL_SECS", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cannot start the mirante binary");
    let address = format!("http://127.0.0.1:{port}");
    support::wait_ready(&mut child, &address).await;
    (child, address)
}

fn terminate(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("cannot run kill");
    assert!(status.success());
}

#[tokio::test]
async fn on_sigterm_the_portal_says_it_is_not_ready_while_it_still_serves_then_exits_cleanly() {
    let data = TempDir::new().unwrap();
    let (mut child, address) = serve(data.path()).await;
    let client = reqwest::Client::new();

    terminate(&child);
    let sent = Instant::now();
    let mut not_ready = None;
    let mut served_while_draining = 0;
    while sent.elapsed() < DELAY - Duration::from_millis(500) {
        let ready = client
            .get(format!("{address}/readyz"))
            .send()
            .await
            .unwrap();
        if ready.status() == 503 {
            let body: serde_json::Value = ready.json().await.unwrap();
            not_ready.get_or_insert(body);
            let healthy = client
                .get(format!("{address}/healthz"))
                .send()
                .await
                .unwrap();
            assert_eq!(healthy.status(), 200, "still served while draining");
            served_while_draining += 1;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "mirante did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let stopped_after = sent.elapsed();
    let after = client.get(format!("{address}/healthz")).send().await;

    let not_ready = not_ready.expect("/readyz never answered 503 after SIGTERM");
    assert_eq!(not_ready["error"], "shutting down", "{not_ready}");
    assert!(served_while_draining >= 5, "{served_while_draining}");
    assert!(status.success(), "{status}");
    assert!(
        stopped_after >= DELAY,
        "the listener closed after {stopped_after:?}, before the drain delay"
    );
    assert!(after.is_err(), "nothing listens once it has exited");
}
