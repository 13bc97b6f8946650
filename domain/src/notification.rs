//! What people are told about a request, and through which channel: the kinds of notice, who
//! receives each, and the states of an outgoing message. Pure values; the server queues one
//! outbox row per recipient and channel in the transaction of the step that causes it, and
//! delivers them later.

use serde::{Deserialize, Serialize};

use crate::request::{RequestState, Step};

/// What happened that someone is told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// A request waits for an admin's decision (told to every admin).
    AwaitsApproval,
    /// An admin approved the request.
    Approved,
    /// An admin rejected the request, with a comment.
    Rejected,
    /// The pull request is open.
    Proposed,
    /// The pull request was merged.
    Merged,
    /// Argo CD reports the merged resource live.
    Live,
    /// Argo CD reports the merged resource degraded.
    Degraded,
    /// Proposing failed for good, or the pull request disappeared.
    Failed,
    /// The resource expires soon (told at each threshold of the expiry sweep, once).
    ExpiresSoon,
    /// The resource expired and the sweep opened its removal.
    RemovalOpened,
    /// A removal was merged: the resource's folder is gone from the base branch.
    Removed,
    /// The resource's template renders its files differently now: an update is offered.
    UpdateAvailable,
}

impl NoticeKind {
    /// Every kind.
    pub const ALL: [NoticeKind; 12] = [
        NoticeKind::AwaitsApproval,
        NoticeKind::Approved,
        NoticeKind::Rejected,
        NoticeKind::Proposed,
        NoticeKind::Merged,
        NoticeKind::Live,
        NoticeKind::Degraded,
        NoticeKind::Failed,
        NoticeKind::ExpiresSoon,
        NoticeKind::RemovalOpened,
        NoticeKind::Removed,
        NoticeKind::UpdateAvailable,
    ];

    /// The identifier used in the database, the webhook's JSON and the message templates.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::AwaitsApproval => "awaits_approval",
            NoticeKind::Approved => "approved",
            NoticeKind::Rejected => "rejected",
            NoticeKind::Proposed => "proposed",
            NoticeKind::Merged => "merged",
            NoticeKind::Live => "live",
            NoticeKind::Degraded => "degraded",
            NoticeKind::Failed => "failed",
            NoticeKind::ExpiresSoon => "expires_soon",
            NoticeKind::RemovalOpened => "removal_opened",
            NoticeKind::Removed => "removed",
            NoticeKind::UpdateAvailable => "update_available",
        }
    }

    /// The kind named `s` (as [`NoticeKind::as_str`] writes it).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The notice a step of a request's journey gives, if any.
    pub fn of_step(step: &Step) -> Option<Self> {
        Self::of_change(step.from, step.to)
    }

    /// The notice of a request moving from `from` (`None`: its creation) to `to`, if any.
    pub fn of_change(from: Option<RequestState>, to: RequestState) -> Option<Self> {
        match (from, to) {
            (Some(_), RequestState::AwaitingApproval) => Some(NoticeKind::AwaitsApproval),
            (Some(_), RequestState::Approved) => Some(NoticeKind::Approved),
            (Some(_), RequestState::Rejected) => Some(NoticeKind::Rejected),
            (Some(_), RequestState::Proposed) => Some(NoticeKind::Proposed),
            (Some(_), RequestState::Merged) => Some(NoticeKind::Merged),
            (Some(_), RequestState::Failed) => Some(NoticeKind::Failed),
            _ => None,
        }
    }

    /// The notice as a request doing `action` gives it: a merged removal says the resource
    /// is removed.
    pub fn for_action(self, action: crate::request::Action) -> Self {
        match (self, action) {
            (NoticeKind::Merged, crate::request::Action::Remove) => NoticeKind::Removed,
            (kind, _) => kind,
        }
    }

    /// Who receives it by e-mail.
    pub fn audience(self) -> Audience {
        match self {
            NoticeKind::AwaitsApproval => Audience::Admins,
            _ => Audience::Requester,
        }
    }
}

/// Who a notice is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// The person who made the request.
    Requester,
    /// Everyone whose groups make them an admin (`access::role_for`).
    Admins,
}

/// How a notice goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// An e-mail to one person.
    Email,
    /// One JSON POST per notice to the configured webhook.
    Webhook,
}

impl Channel {
    /// The identifier used in the database, the API and the metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Email => "email",
            Channel::Webhook => "webhook",
        }
    }

    /// The channel named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        [Channel::Email, Channel::Webhook]
            .into_iter()
            .find(|c| c.as_str() == s)
    }
}

/// Where an outgoing message stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Waiting to be sent, or to be tried again after an error.
    Pending,
    /// Accepted by the mail server or the webhook.
    Sent,
    /// Given up after the last attempt; the last error says why.
    Failed,
}

impl DeliveryState {
    /// Every state.
    pub const ALL: [DeliveryState; 3] = [
        DeliveryState::Pending,
        DeliveryState::Sent,
        DeliveryState::Failed,
    ];

    /// The identifier used in the database and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Sent => "sent",
            DeliveryState::Failed => "failed",
        }
    }

    /// The state named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{self, RequestEvent as E, RequestState as S};

    #[test]
    fn kinds_and_states_read_back_from_their_names() {
        for kind in NoticeKind::ALL {
            assert_eq!(NoticeKind::parse(kind.as_str()), Some(kind));
        }
        for state in DeliveryState::ALL {
            assert_eq!(DeliveryState::parse(state.as_str()), Some(state));
        }
        assert_eq!(Channel::parse("email"), Some(Channel::Email));
        assert_eq!(Channel::parse("pigeon"), None);
    }

    #[test]
    fn the_steps_people_are_told_about_are_exactly_those_with_a_notice() {
        let notice = |from, event| NoticeKind::of_step(&request::transition(from, event).unwrap());
        assert_eq!(
            notice(S::Submitted, E::AwaitApproval),
            Some(NoticeKind::AwaitsApproval)
        );
        assert_eq!(
            notice(S::AwaitingApproval, E::Approve),
            Some(NoticeKind::Approved)
        );
        assert_eq!(
            notice(S::AwaitingApproval, E::Reject),
            Some(NoticeKind::Rejected)
        );
        assert_eq!(notice(S::Proposing, E::Propose), Some(NoticeKind::Proposed));
        assert_eq!(notice(S::Proposed, E::Merge), Some(NoticeKind::Merged));
        assert_eq!(notice(S::Proposing, E::Fail), Some(NoticeKind::Failed));
        assert_eq!(notice(S::Submitted, E::StartProposing), None);
        assert_eq!(notice(S::Proposed, E::Close), None);
        let created = request::submission(false);
        assert_eq!(NoticeKind::of_step(&created[0]), None);
    }

    #[test]
    fn a_step_calls_for_messages_exactly_when_it_gives_a_notice() {
        let mut steps = request::submission(true);
        steps.extend(request::submission(false));
        for state in RequestState::ALL {
            for event in request::RequestEvent::ALL {
                steps.extend(request::transition(state, event));
            }
        }
        for step in steps {
            assert_eq!(
                step.effects.contains(&request::Effect::Notify),
                NoticeKind::of_step(&step).is_some(),
                "{step:?}"
            );
        }
    }

    #[test]
    fn only_the_wait_for_approval_goes_to_the_admins() {
        for kind in NoticeKind::ALL {
            let expected = if kind == NoticeKind::AwaitsApproval {
                Audience::Admins
            } else {
                Audience::Requester
            };
            assert_eq!(kind.audience(), expected, "{kind:?}");
        }
    }
}
