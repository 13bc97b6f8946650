//! Shared helpers live in `api/helpers.rs`; this library is empty on purpose.
