//! What the tests that run the real `mirante` binary share.

use std::{
    process::Child,
    time::{Duration, Instant},
};

/// A port nothing listens on now, for a portal to bind.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until the portal at `address` answers `/readyz` with 200; fails if it stops first
/// or is not ready within a minute.
pub async fn wait_ready(child: &mut Child, address: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(r) = reqwest::get(format!("{address}/readyz")).await
            && r.status() == 200
        {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("mirante serve stopped: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "mirante serve never became ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
