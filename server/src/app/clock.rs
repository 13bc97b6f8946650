//! The one source of "now" for the work that waits for dates (the expiry sweep), so that tests
//! move time instead of sleeping through it.

use std::sync::Mutex;

use chrono::{DateTime, Utc};

/// Tells the time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now(&self) -> DateTime<Utc>;
}

/// The system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that says what it was set to (tests).
#[derive(Debug)]
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    /// A clock at `at`.
    pub fn at(at: DateTime<Utc>) -> Self {
        ManualClock(Mutex::new(at))
    }

    /// Moves it to `at`.
    pub fn set(&self, at: DateTime<Utc>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = at;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
