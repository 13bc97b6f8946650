//! Any bytes as a catalog file: the loader answers a catalog or diagnostics, never a panic,
//! and every diagnostic is one printable line that points into the file.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mirante_domain::load::load_bytes;

fuzz_target!(|data: &[u8]| {
    let lines = data.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    if let Err(diagnostics) = load_bytes(vec![("platform.yaml".to_owned(), data.to_vec())]) {
        assert!(!diagnostics.is_empty(), "a refusal says why");
        for d in &diagnostics {
            assert!(d.line <= lines, "line {} of {lines}: {}", d.line, d.message);
            assert!(!d.message.chars().any(char::is_control), "{:?}", d.message);
            assert!(!d.file.chars().any(char::is_control), "{:?}", d.file);
        }
    }
});
