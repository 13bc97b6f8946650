//! The expiry sweep: for each resource whose files carry an expiry date (`mirante.dev/expires`),
//! the owner is told at each threshold before the date (by default 7 days and 1 day), each at
//! most once, and on the day after the date its removal is opened on the owner's behalf —
//! proposed at once, or waiting for an admin (`MIRANTE_EXPIRY_REMOVAL`). A resource with an
//! open request on its folder (an extension asked for) is left alone: no removal is opened
//! while it waits. One replica sweeps at a time (a lease in the database); the date comes
//! from one [`Clock`], so tests move time. The same sweep tells each owner, once per template
//! version, of a template update their resource is offered (`service::upgrade`).

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use chrono::NaiveDate;
use mirante_domain::notification::NoticeKind;
use mirante_domain::resource::Resource;
use tokio_util::sync::CancellationToken;

use crate::adapters::db::Db;
use crate::app::clock::Clock;
use crate::app::selfservice::service::{SelfService, ServiceError};

/// The lease one replica holds while it sweeps.
const LEASE: &str = "expiry-sweep";

/// What to do with a resource the day after it expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpiryRemoval {
    /// Open the removal and let the worker propose it at once (the pull request is the review).
    Propose,
    /// Open the removal awaiting an admin's approval.
    Approve,
}

/// The sweep's settings.
#[derive(Debug, Clone)]
pub struct ExpirySettings {
    /// What the day after expiry does.
    pub removal: ExpiryRemoval,
    /// Days before the date at which the owner is told, e.g. `[7, 1]`.
    pub notice_days: Vec<u32>,
}

/// What one sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Notices queued (each threshold once per resource and date).
    pub notices: usize,
    /// Removals opened: the new requests' ids.
    pub removals: Vec<i64>,
    /// Expired resources left alone because a request on their folder is open.
    pub waiting: Vec<i64>,
    /// Resources whose owner was told of a template update.
    pub updates: Vec<i64>,
}

/// The sweep.
#[derive(Debug, Clone)]
pub struct ExpirySweep {
    service: Arc<SelfService>,
    db: Db,
    clock: Arc<dyn Clock>,
    settings: ExpirySettings,
}

impl ExpirySweep {
    /// A sweep of `service`'s resources, by `clock`.
    pub fn new(
        service: Arc<SelfService>,
        db: Db,
        clock: Arc<dyn Clock>,
        settings: ExpirySettings,
    ) -> Self {
        ExpirySweep {
            service,
            db,
            clock,
            settings,
        }
    }

    /// Sweeps once: the notices due and the removals due by the clock's date, and each
    /// owner told once of a template update their resource is offered.
    pub async fn run_once(&self) -> Result<Swept, ServiceError> {
        let mut swept = self.expiry_once().await?;
        for resource in self.service.all_resources().await? {
            match self.service.update_for_owner(&resource).await {
                Ok(Some(update)) => {
                    let detail = if update.needs.is_empty() {
                        format!(
                            "template {} version {}: {} file(s) change",
                            resource.template,
                            update.version,
                            update.files.len()
                        )
                    } else {
                        format!(
                            "template {} version {} asks for: {}",
                            resource.template,
                            update.version,
                            update.needs.join(", ")
                        )
                    };
                    if self
                        .db
                        .update_notice_once(resource.id, &update.version, self.clock.now(), &detail)
                        .await?
                    {
                        swept.updates.push(resource.id);
                    }
                }
                Ok(None) => {}
                // One resource's update that cannot be rendered (a broken template) does not
                // stop the others'; the template's problems are on the admins' page.
                Err(error) => {
                    tracing::warn!(resource = resource.id, %error, "cannot check the resource's template update");
                }
            }
        }
        Ok(swept)
    }

    /// The expiry part of a sweep.
    async fn expiry_once(&self) -> Result<Swept, ServiceError> {
        let now = self.clock.now();
        let today = now.date_naive();
        let mut swept = Swept::default();
        // Folders with a request still on its way (an extension asked for, or the removal
        // opened by an earlier sweep): no removal is opened for them, and the forge is not read.
        let busy: BTreeSet<String> = self
            .db
            .open_requests()
            .await?
            .into_iter()
            .filter(|r| !r.state.is_final())
            .map(|r| r.target)
            .collect();
        for resource in self.service.all_resources().await? {
            let Some(expires) = expiry_of(&resource) else {
                continue;
            };
            let days_left = (expires - today).num_days();
            let date = expires.to_string();
            if days_left < 0 {
                if busy.contains(&resource.target) {
                    swept.waiting.push(resource.id);
                    continue;
                }
                match self
                    .service
                    .open_expiry_removal(&resource, self.settings.removal == ExpiryRemoval::Approve)
                    .await
                {
                    Ok(id) => {
                        swept.removals.push(id);
                        let detail = format!("expired on {date}");
                        if self
                            .db
                            .expiry_step_once(
                                resource.id,
                                &date,
                                0,
                                now,
                                Some((NoticeKind::RemovalOpened, id, &detail)),
                            )
                            .await?
                        {
                            swept.notices += 1;
                        }
                    }
                    Err(ServiceError::Duplicate { .. }) => swept.waiting.push(resource.id),
                    Err(e) => return Err(e),
                }
                continue;
            }
            // The nearest threshold reached is told; the farther ones, if never told, are
            // recorded without a second message.
            let mut reached: Vec<u32> = self
                .settings
                .notice_days
                .iter()
                .copied()
                .filter(|t| i64::from(*t) >= days_left)
                .collect();
            reached.sort_unstable();
            for (i, threshold) in reached.into_iter().enumerate() {
                let detail = format!("expires on {date} (in {days_left} days)");
                let notice = (i == 0).then_some((NoticeKind::ExpiresSoon, resource.id, &*detail));
                if self
                    .db
                    .expiry_step_once(resource.id, &date, i64::from(threshold), now, notice)
                    .await?
                    && notice.is_some()
                {
                    swept.notices += 1;
                }
            }
        }
        Ok(swept)
    }

    /// Sweeps at once and then every `interval` until `stop`, on one replica at a time.
    pub fn spawn(self, interval: Duration, replica: String, stop: CancellationToken) {
        if interval.is_zero() {
            tracing::info!("the expiry sweep is off (MIRANTE_EXPIRY_SWEEP_SECS=0)");
            return;
        }
        tokio::spawn(async move {
            let mut every = tokio::time::interval(interval);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    _ = every.tick() => {
                        match self.db.claim_round(LEASE, &replica, interval).await {
                            Ok(true) => {}
                            Ok(false) => continue,
                            Err(error) => {
                                tracing::warn!(%error, "cannot take the expiry sweep's lease; sweeping next time");
                                continue;
                            }
                        }
                        match self.run_once().await {
                            Ok(swept) => tracing::info!(
                                notices = swept.notices,
                                removals = swept.removals.len(),
                                waiting = swept.waiting.len(),
                                updates = swept.updates.len(),
                                "expiry sweep ran"
                            ),
                            Err(error) => tracing::warn!(%error, "the expiry sweep failed; it runs again next time"),
                        }
                    }
                }
            }
        });
    }
}

/// The expiry date of a resource whose files are on the base branch, if it has one.
fn expiry_of(resource: &Resource) -> Option<NaiveDate> {
    if !resource.state.has_files_on_base() {
        return None;
    }
    NaiveDate::parse_from_str(resource.expires.as_deref()?, "%Y-%m-%d").ok()
}
