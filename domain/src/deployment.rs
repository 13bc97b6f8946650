//! Following a resource past its merge: what Argo CD's answer about the Application that
//! deploys the resource's folder means for the resource.
//!
//! ```text
//! merged ──► syncing ──► live          (Synced at a revision containing the merge, Healthy)
//!               │   └──► degraded      (Synced there, any other health but Progressing)
//!               └──────► degraded      (the sync failed: operation Failed/Error, an error condition)
//! ```
//!
//! The rules are pure: the server reads Argo CD and the monorepo (is the merge commit the
//! synced revision or an ancestor of it?) and hands the facts in.

use crate::resource::ResourceState;

/// What Argo CD says about one Application, as far as following needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observation {
    /// The Application's name.
    pub application: String,
    /// `status.sync.status`: `Synced`, `OutOfSync`, `Unknown`.
    pub sync: Option<String>,
    /// `status.sync.revision` and `status.sync.revisions[]`, in that order.
    pub revisions: Vec<String>,
    /// `status.health.status`: `Healthy`, `Progressing`, `Degraded`, `Suspended`, `Missing`,
    /// `Unknown`.
    pub health: Option<String>,
    /// `status.health.message`.
    pub health_message: Option<String>,
    /// `status.conditions[]`: type and message.
    pub conditions: Vec<(Option<String>, Option<String>)>,
    /// `status.operationState.phase`: `Running`, `Succeeded`, `Failed`, `Error`, ...
    pub operation_phase: Option<String>,
    /// `status.operationState.message`.
    pub operation_message: Option<String>,
}

/// Where the deployment stands after one answer of Argo CD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Not yet applied at a revision that contains the merge, or still rolling out; why.
    Syncing(String),
    /// Applied at a revision containing the merge, and healthy.
    Live,
    /// Applied but not healthy, or the sync failed; Argo CD's message.
    Degraded(String),
}

impl Verdict {
    /// The resource state it stands for.
    pub fn state(&self) -> ResourceState {
        match self {
            Verdict::Syncing(_) => ResourceState::Syncing,
            Verdict::Live => ResourceState::Live,
            Verdict::Degraded(_) => ResourceState::Degraded,
        }
    }

    /// Argo CD's message or why it is still syncing; none when live.
    pub fn message(&self) -> Option<&str> {
        match self {
            Verdict::Syncing(m) | Verdict::Degraded(m) => Some(m),
            Verdict::Live => None,
        }
    }
}

/// Whether an Application's source `path` is the resource's folder `target`, written either
/// way (`./a/b/`, `/a/b`, `a/b`).
pub fn same_folder(target: &str, path: &str) -> bool {
    fn norm(p: &str) -> &str {
        let p = p.trim();
        let p = p.strip_prefix("./").unwrap_or(p);
        p.trim_matches('/')
    }
    let (t, p) = (norm(target), norm(path));
    !t.is_empty() && t == p
}

/// What an answer means. `contains_merge` says whether one of the synced revisions is the merge
/// commit or has it as an ancestor.
pub fn judge(o: &Observation, contains_merge: bool) -> Verdict {
    let synced = o.sync.as_deref() == Some("Synced");
    if !(synced && contains_merge) {
        if let Some(failed) = sync_failure(o) {
            return Verdict::Degraded(failed);
        }
        let at = o
            .revisions
            .first()
            .map(|r| format!(" at {}", short(r)))
            .unwrap_or_default();
        let sync = o.sync.as_deref().unwrap_or("Unknown");
        return Verdict::Syncing(if synced {
            format!(
                "Argo CD application {} is Synced{at}, which does not contain the merge yet",
                o.application
            )
        } else {
            format!("Argo CD application {} is {sync}{at}", o.application)
        });
    }
    match o.health.as_deref() {
        Some("Healthy") => Verdict::Live,
        None | Some("Progressing") => Verdict::Syncing(format!(
            "Argo CD application {} is Synced and {}",
            o.application,
            o.health.as_deref().unwrap_or("has no health yet")
        )),
        Some(health) => Verdict::Degraded(
            o.health_message
                .clone()
                .filter(|m| !m.trim().is_empty())
                .or_else(|| error_condition(o))
                .or_else(|| o.operation_message.clone().filter(|m| !m.trim().is_empty()))
                .unwrap_or_else(|| format!("Argo CD application {} is {health}", o.application)),
        ),
    }
}

/// Why the last sync failed, when it did: an operation that ended in `Failed` or `Error`, or
/// an error condition (`ComparisonError`, `SyncError`, ...).
fn sync_failure(o: &Observation) -> Option<String> {
    if matches!(o.operation_phase.as_deref(), Some("Failed" | "Error")) {
        return Some(
            o.operation_message
                .clone()
                .filter(|m| !m.trim().is_empty())
                .or_else(|| error_condition(o))
                .unwrap_or_else(|| format!("the sync of {} failed", o.application)),
        );
    }
    error_condition(o)
}

fn error_condition(o: &Observation) -> Option<String> {
    o.conditions
        .iter()
        .find(|(kind, message)| {
            kind.as_deref().is_some_and(|k| k.ends_with("Error"))
                && message.as_deref().is_some_and(|m| !m.trim().is_empty())
        })
        .and_then(|(_, message)| message.clone())
}

/// The first 12 characters of a commit id.
pub fn short(revision: &str) -> &str {
    revision.get(..12).unwrap_or(revision)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(sync: &str, health: &str) -> Observation {
        Observation {
            application: "ws-nlp".into(),
            sync: Some(sync.into()),
            revisions: vec!["4f2a9c1d0e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c".into()],
            health: Some(health.into()),
            ..Observation::default()
        }
    }

    #[test]
    fn synced_at_the_merge_and_healthy_is_live() {
        assert_eq!(judge(&seen("Synced", "Healthy"), true), Verdict::Live);
    }

    #[test]
    fn out_of_sync_or_synced_before_the_merge_is_still_syncing() {
        let v = judge(&seen("OutOfSync", "Healthy"), false);
        assert_eq!(v.state(), ResourceState::Syncing);
        assert_eq!(
            v.message(),
            Some("Argo CD application ws-nlp is OutOfSync at 4f2a9c1d0e5b")
        );
        let older = judge(&seen("Synced", "Healthy"), false);
        assert_eq!(older.state(), ResourceState::Syncing);
        assert!(
            older
                .message()
                .unwrap()
                .contains("does not contain the merge")
        );
        let rolling = judge(&seen("Synced", "Progressing"), true);
        assert_eq!(rolling.state(), ResourceState::Syncing);
    }

    #[test]
    fn synced_and_unhealthy_is_degraded_with_argo_cds_message() {
        let mut o = seen("Synced", "Degraded");
        o.health_message = Some("Deployment \"x\" exceeded its progress deadline".into());
        assert_eq!(
            judge(&o, true),
            Verdict::Degraded("Deployment \"x\" exceeded its progress deadline".into())
        );
        o.health_message = None;
        o.conditions = vec![
            (
                Some("OrphanedResourceWarning".into()),
                Some("orphans".into()),
            ),
            (Some("SyncError".into()), Some("quota exceeded".into())),
        ];
        assert_eq!(judge(&o, true), Verdict::Degraded("quota exceeded".into()));
        o.conditions.clear();
        o.operation_message = Some("one or more objects failed to apply".into());
        assert_eq!(
            judge(&o, true),
            Verdict::Degraded("one or more objects failed to apply".into())
        );
        o.operation_message = None;
        assert_eq!(
            judge(&o, true),
            Verdict::Degraded("Argo CD application ws-nlp is Degraded".into())
        );
    }

    #[test]
    fn a_failed_sync_is_degraded_even_before_the_revision_arrives() {
        let mut o = seen("OutOfSync", "Missing");
        o.operation_phase = Some("Failed".into());
        o.operation_message = Some("namespaces \"ws-nlp\" is forbidden".into());
        assert_eq!(
            judge(&o, false),
            Verdict::Degraded("namespaces \"ws-nlp\" is forbidden".into())
        );
        let mut c = seen("Unknown", "Healthy");
        c.conditions = vec![(Some("ComparisonError".into()), Some("bad yaml".into()))];
        assert_eq!(judge(&c, false), Verdict::Degraded("bad yaml".into()));
    }

    #[test]
    fn a_folder_matches_however_its_path_is_written() {
        for path in [
            "clusters/a/ws",
            "./clusters/a/ws",
            "/clusters/a/ws/",
            " clusters/a/ws",
        ] {
            assert!(same_folder("clusters/a/ws", path), "{path}");
        }
        assert!(!same_folder("clusters/a/ws", "clusters/a"));
        assert!(!same_folder("clusters/a/ws", "clusters/a/ws2"));
        assert!(!same_folder("", "."));
    }
}
