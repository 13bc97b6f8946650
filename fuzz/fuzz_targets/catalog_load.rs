//! Any bytes as a catalog file: the loader answers a catalog or diagnostics, never a panic,
//! and every diagnostic is one printable line that points into the file.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mirante_domain::load::load_bytes;

/// The lines of `data` as YAML counts them, and an editor shows them: `\n`, `\r\n` and a
/// `\r` alone each end one.
fn lines(data: &[u8]) -> u64 {
    let breaks = data
        .iter()
        .enumerate()
        .filter(|(i, b)| **b == b'\n' || (**b == b'\r' && data.get(i + 1) != Some(&b'\n')))
        .count();
    breaks as u64 + 1
}

fuzz_target!(|data: &[u8]| {
    let lines = lines(data);
    if let Err(diagnostics) = load_bytes(vec![("platform.yaml".to_owned(), data.to_vec())]) {
        assert!(!diagnostics.is_empty(), "a refusal says why");
        for d in &diagnostics {
            assert!(d.line <= lines, "line {} of {lines}: {}", d.line, d.message);
            assert!(!d.message.chars().any(char::is_control), "{:?}", d.message);
            assert!(!d.file.chars().any(char::is_control), "{:?}", d.file);
        }
    }
});
