//! Repeated refusals, written once per window.
//!
//! An unsigned webhook is refused cheaply, but each refusal used to write an audit row and a
//! WARN line: 1,000 forgeries in 1.8 s were 1,000 rows. Now the first refusal of a kind in a
//! window is written at once, the others in that window are only counted, and the first one
//! after the window is written with how many were left out (`"repeated"`), so the audit log
//! still says how many there were without growing with every forgery.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

/// How long repeats of one refusal are counted before the next is written.
pub(crate) const WINDOW: Duration = Duration::from_secs(60);

/// The refusals counted in the current window of each kind.
#[derive(Debug, Default)]
pub(crate) struct Refusals {
    windows: Mutex<HashMap<&'static str, (Instant, u64)>>,
}

impl Refusals {
    /// Notes one refusal of `kind` at `now`. `Some(left_out)` when it is to be written, with the
    /// number of repeats not written since the last one; `None` when it is only counted.
    pub(crate) fn note(&self, kind: &'static str, now: Instant) -> Option<u64> {
        let mut windows = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match windows.get_mut(kind) {
            Some((start, left_out)) if now.duration_since(*start) < WINDOW => {
                *left_out += 1;
                None
            }
            Some((start, left_out)) => {
                let written = *left_out;
                *start = now;
                *left_out = 0;
                Some(written)
            }
            None => {
                windows.insert(kind, (now, 0));
                Some(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_refusal_of_a_window_is_written_and_the_next_window_says_how_many_were_left_out() {
        let refusals = Refusals::default();
        let start = Instant::now();

        let first = refusals.note("bad signature", start);
        let repeats: Vec<_> = (1..=5)
            .map(|s| refusals.note("bad signature", start + Duration::from_secs(s)))
            .collect();
        let other_kind = refusals.note("no secret", start + Duration::from_secs(2));
        let after = refusals.note("bad signature", start + WINDOW + Duration::from_secs(1));
        let again = refusals.note("bad signature", start + WINDOW + Duration::from_secs(2));

        assert_eq!(first, Some(0));
        assert!(repeats.iter().all(Option::is_none));
        assert_eq!(other_kind, Some(0), "each kind has its own window");
        assert_eq!(after, Some(5));
        assert_eq!(again, None);
    }
}
