//! A self-service request's journey as a state machine: plain types and one pure function,
//! so every layer (the database, the worker, the API, the UI) agrees on what may follow what.
//!
//! ```text
//! submitted ──► awaiting_approval ──► approved ──► proposing ──► proposed ──► merged
//!     │                 │                              │  ▲          │
//!     │                 └──► rejected                  │  │          └──► closed
//!     └────────────────────────────────────────────────┘  │
//!                          (no approval needed)           └── failed ◄── (permanent forge error)
//! ```
//!
//! `failed` is reached from `proposing` (the forge refused for good) and from `proposed` (the
//! pull request vanished); `merged`, `closed`, `rejected` and `failed` are final.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestState {
    /// Stored with its rendered files; nothing decided yet.
    Submitted,
    /// The template needs an admin's approval.
    AwaitingApproval,
    /// An admin approved it; the worker will propose it.
    Approved,
    /// An admin rejected it (with a comment). Final.
    Rejected,
    /// The worker is creating the branch and the pull request.
    Proposing,
    /// The pull request is open on the forge.
    Proposed,
    /// The pull request was merged. Final.
    Merged,
    /// The pull request was closed without merging. Final.
    Closed,
    /// Proposing failed for good (the last error says why). Final.
    Failed,
}

impl RequestState {
    /// Every state, in the order of the journey.
    pub const ALL: [RequestState; 9] = [
        RequestState::Submitted,
        RequestState::AwaitingApproval,
        RequestState::Approved,
        RequestState::Rejected,
        RequestState::Proposing,
        RequestState::Proposed,
        RequestState::Merged,
        RequestState::Closed,
        RequestState::Failed,
    ];

    /// The identifier used in JSON, the database and the UI.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestState::Submitted => "submitted",
            RequestState::AwaitingApproval => "awaiting_approval",
            RequestState::Approved => "approved",
            RequestState::Rejected => "rejected",
            RequestState::Proposing => "proposing",
            RequestState::Proposed => "proposed",
            RequestState::Merged => "merged",
            RequestState::Closed => "closed",
            RequestState::Failed => "failed",
        }
    }

    /// The state named `s` (as [`RequestState::as_str`] writes it).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == s)
    }

    /// Whether nothing can follow this state.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            RequestState::Rejected
                | RequestState::Merged
                | RequestState::Closed
                | RequestState::Failed
        )
    }
}

impl fmt::Display for RequestState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a template request does to its resource (a folder of the monorepo).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Makes the resource: files rendered into a folder that does not exist yet.
    #[default]
    Create,
    /// Changes its values: the files rendered again with the new values.
    Update,
    /// Moves its expiry: the files rendered again with a new number of days.
    Extend,
    /// Gives it back: every file of its folder deleted.
    Remove,
}

impl Action {
    /// Every action.
    pub const ALL: [Action; 4] = [
        Action::Create,
        Action::Update,
        Action::Extend,
        Action::Remove,
    ];

    /// The identifier used in JSON, the database and the UI.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Extend => "extend",
            Action::Remove => "remove",
        }
    }

    /// The action named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// Whether it acts on a resource that exists (its folder must be on the base branch),
    /// rather than making one (its folder must not be).
    pub fn on_existing(self) -> bool {
        self != Action::Create
    }
}

/// What happens to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestEvent {
    /// The template needs approval: wait for an admin.
    AwaitApproval,
    /// An admin approved.
    Approve,
    /// An admin rejected (a comment is required).
    Reject,
    /// The worker starts proposing (after approval, or right after submission when the
    /// template needs none).
    StartProposing,
    /// The pull request is open.
    Propose,
    /// The pull request was merged.
    Merge,
    /// The pull request was closed without merging.
    Close,
    /// Proposing failed for good, or the pull request disappeared.
    Fail,
    /// The requester (or an admin) takes it back before it is proposed.
    Withdraw,
}

impl RequestEvent {
    /// Every event.
    pub const ALL: [RequestEvent; 9] = [
        RequestEvent::AwaitApproval,
        RequestEvent::Approve,
        RequestEvent::Reject,
        RequestEvent::StartProposing,
        RequestEvent::Propose,
        RequestEvent::Merge,
        RequestEvent::Close,
        RequestEvent::Fail,
        RequestEvent::Withdraw,
    ];

    /// Whether a person must explain this event with a comment.
    pub fn needs_comment(self) -> bool {
        matches!(self, RequestEvent::Reject)
    }
}

/// An event that cannot happen in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a request that is {from} cannot be {event:?}")]
pub struct IllegalTransition {
    /// The state the request is in.
    pub from: RequestState,
    /// What was attempted.
    pub event: RequestEvent,
}

/// What must happen besides recording a step, in the same transaction as the step itself, so
/// a crash never leaves one without the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Queue the job that proposes the request on the forge (the worker picks it up).
    QueueProposal,
    /// Queue the messages that tell people about the step
    /// (`crate::notification::NoticeKind::of_step` says which notice).
    Notify,
}

/// One step of a request's journey, as its timeline records it, with its effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The state before; `None` for the request's creation.
    pub from: Option<RequestState>,
    /// The state after.
    pub to: RequestState,
    /// What else the step makes happen.
    pub effects: &'static [Effect],
}

/// The one rule of when a request is queued for proposing: as soon as nothing stands in its
/// way. That is when an admin approves it, or when it is stored and needs no approval
/// (`needs_approval` matters only for that creation step).
fn queues_proposal(from: Option<RequestState>, to: RequestState, needs_approval: bool) -> bool {
    match (from, to) {
        (Some(RequestState::AwaitingApproval), RequestState::Approved) => true,
        (None, RequestState::Submitted) => !needs_approval,
        _ => false,
    }
}

impl Step {
    fn new(from: Option<RequestState>, to: RequestState, needs_approval: bool) -> Self {
        let notifies = crate::notification::NoticeKind::of_change(from, to).is_some();
        let effects: &'static [Effect] = match (queues_proposal(from, to, needs_approval), notifies)
        {
            (true, true) => &[Effect::QueueProposal, Effect::Notify],
            (true, false) => &[Effect::QueueProposal],
            (false, true) => &[Effect::Notify],
            (false, false) => &[],
        };
        Step { from, to, effects }
    }
}

/// The step `event` makes from `from`, or why it cannot happen.
pub fn transition(from: RequestState, event: RequestEvent) -> Result<Step, IllegalTransition> {
    use RequestEvent as E;
    use RequestState as S;
    let to = match (from, event) {
        (S::Submitted, E::AwaitApproval) => S::AwaitingApproval,
        (S::AwaitingApproval, E::Approve) => S::Approved,
        (S::AwaitingApproval, E::Reject) => S::Rejected,
        (S::Submitted | S::Approved, E::StartProposing) => S::Proposing,
        (S::Proposing, E::Propose) => S::Proposed,
        // A pull request found already merged or closed when the worker resumes.
        (S::Proposing | S::Proposed, E::Merge) => S::Merged,
        (S::Proposing | S::Proposed, E::Close) => S::Closed,
        (S::Proposing | S::Proposed, E::Fail) => S::Failed,
        // Taken back before the worker starts on it; a proposed one is closed on the forge.
        (S::Submitted | S::AwaitingApproval | S::Approved, E::Withdraw) => S::Closed,
        _ => return Err(IllegalTransition { from, event }),
    };
    Ok(Step::new(Some(from), to, true))
}

/// The steps a request takes when it is stored: it is submitted, then either waits for an
/// admin or is queued for proposing at once.
pub fn submission(needs_approval: bool) -> Vec<Step> {
    let created = Step::new(None, RequestState::Submitted, needs_approval);
    if needs_approval {
        let waiting = transition(RequestState::Submitted, RequestEvent::AwaitApproval)
            .expect("a submitted request may wait for approval");
        vec![created, waiting]
    } else {
        vec![created]
    }
}

/// Whether a request in `state` may be approved or rejected by an admin.
pub fn awaits_decision(state: RequestState) -> bool {
    state == RequestState::AwaitingApproval
}

#[cfg(test)]
mod tests {
    use super::*;
    use RequestEvent as E;
    use RequestState as S;

    #[test]
    fn a_request_needing_approval_goes_from_submission_to_merge() {
        let mut state = S::Submitted;
        for event in [
            E::AwaitApproval,
            E::Approve,
            E::StartProposing,
            E::Propose,
            E::Merge,
        ] {
            state = transition(state, event).unwrap().to;
        }
        assert_eq!(state, S::Merged);
        assert!(state.is_final());
    }

    #[test]
    fn a_request_without_approval_is_proposed_straight_after_submission() {
        let state = transition(S::Submitted, E::StartProposing).unwrap().to;
        assert_eq!(state, S::Proposing);
    }

    #[test]
    fn a_request_can_be_approved_or_rejected_only_while_awaiting_approval() {
        assert_eq!(
            transition(S::AwaitingApproval, E::Reject).unwrap().to,
            S::Rejected
        );
        for state in RequestState::ALL {
            if state != S::AwaitingApproval {
                assert!(transition(state, E::Approve).is_err(), "{state}");
                assert!(transition(state, E::Reject).is_err(), "{state}");
            }
        }
    }

    #[test]
    fn nothing_follows_a_final_state() {
        for state in RequestState::ALL.into_iter().filter(|s| s.is_final()) {
            for event in RequestEvent::ALL {
                assert_eq!(
                    transition(state, event),
                    Err(IllegalTransition { from: state, event }),
                    "{state} {event:?}"
                );
            }
        }
    }

    #[test]
    fn an_unapproved_request_is_never_proposed() {
        assert!(transition(S::AwaitingApproval, E::StartProposing).is_err());
        assert!(transition(S::Rejected, E::StartProposing).is_err());
        assert!(transition(S::Submitted, E::Propose).is_err());
    }

    #[test]
    fn a_pull_request_found_merged_on_resume_completes_the_request() {
        assert_eq!(transition(S::Proposing, E::Merge).unwrap().to, S::Merged);
        assert_eq!(transition(S::Proposing, E::Close).unwrap().to, S::Closed);
        assert_eq!(transition(S::Proposed, E::Close).unwrap().to, S::Closed);
    }

    #[test]
    fn states_read_back_from_their_names() {
        for state in RequestState::ALL {
            assert_eq!(RequestState::parse(state.as_str()), Some(state));
            assert_eq!(
                serde_json::to_value(state).unwrap(),
                serde_json::Value::String(state.as_str().to_owned())
            );
        }
        assert_eq!(RequestState::parse("merging"), None);
    }

    #[test]
    fn a_request_is_queued_for_proposing_exactly_when_nothing_stands_in_its_way() {
        let queued = |steps: &[Step]| {
            steps
                .iter()
                .filter(|s| s.effects.contains(&Effect::QueueProposal))
                .count()
        };
        let waiting = submission(true);
        assert_eq!(
            waiting.iter().map(|s| (s.from, s.to)).collect::<Vec<_>>(),
            [
                (None, S::Submitted),
                (Some(S::Submitted), S::AwaitingApproval)
            ]
        );
        assert_eq!(queued(&waiting), 0, "an admin decides first");
        let straight = submission(false);
        assert_eq!(straight.len(), 1);
        assert_eq!((straight[0].from, straight[0].to), (None, S::Submitted));
        assert_eq!(queued(&straight), 1);

        for state in RequestState::ALL {
            for event in RequestEvent::ALL {
                if let Ok(step) = transition(state, event) {
                    assert_eq!(step.from, Some(state));
                    let expected = usize::from(step.to == S::Approved);
                    assert_eq!(queued(&[step]), expected, "{state} {event:?}");
                }
            }
        }
    }

    #[test]
    fn a_request_is_withdrawn_only_before_the_worker_starts_on_it() {
        for state in RequestState::ALL {
            let withdrawn = transition(state, E::Withdraw).map(|s| s.to);
            match state {
                S::Submitted | S::AwaitingApproval | S::Approved => {
                    assert_eq!(withdrawn, Ok(S::Closed), "{state}");
                }
                _ => assert!(withdrawn.is_err(), "{state}"),
            }
        }
    }

    #[test]
    fn actions_read_back_from_their_names_and_only_creation_makes_a_folder() {
        for action in Action::ALL {
            assert_eq!(Action::parse(action.as_str()), Some(action));
            assert_eq!(action.on_existing(), action != Action::Create);
        }
        assert_eq!(Action::parse("delete"), None);
    }

    #[test]
    fn only_a_rejection_needs_a_comment() {
        assert!(E::Reject.needs_comment());
        assert!(!E::Approve.needs_comment());
    }
}
