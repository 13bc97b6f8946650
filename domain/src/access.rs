//! Who is looking and what they may do: the signed-in user as every layer sees them, and
//! every per-object access rule (`may_*`). The HTTP layer decides per route from its table
//! (`server/src/http/policy.rs`, `ROUTES`); pages, server functions and application services ask
//! these functions about the objects they touch, so one rule lives in one place.

use serde::{Deserialize, Serialize};

use crate::selfservice::Access as TemplateAccess;

/// What a signed-in user may do, from their identity provider groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Uses the portal: reads the catalog, requests resources, follows their requests.
    Researcher,
    /// Runs the platform: approves requests, reloads the catalog, sees everything.
    Admin,
}

impl Role {
    /// The identifier used in JSON and the audit log.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Researcher => "researcher",
            Role::Admin => "admin",
        }
    }
}

/// The signed-in user of a request, as the UI shows them. The server puts one in the request's
/// extensions after authenticating it; pages read it from there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Viewer {
    /// Login name (`preferred_username`).
    pub username: String,
    /// Display name.
    pub name: String,
    /// E-mail address, when the provider sent one.
    pub email: Option<String>,
    /// Groups from the identity provider.
    pub groups: Vec<String>,
    /// Role derived from the groups at sign-in.
    pub role: Role,
    /// Per-session token that HTML forms send back (CSRF protection).
    pub csrf_token: String,
    /// Whether this session came from the development sign-in.
    pub dev_login: bool,
}

impl Viewer {
    /// Whether the home page shows this viewer the dashboard (findings, failing checks,
    /// pending tasks, requests to approve, recent changes) above the overview: the people who
    /// run the platform. Everyone else sees the overview alone.
    pub fn sees_dashboard(&self) -> bool {
        self.role == Role::Admin
    }
}

/// Who makes a call, as the HTTP layer authenticated it: the application services take one for
/// every operation and apply the rules below to it.
#[derive(Debug, Clone)]
pub struct Principal {
    /// Their row in `app_user`.
    pub user_id: i64,
    /// Who they are.
    pub viewer: Viewer,
    /// Whether they came with an API token rather than a session.
    pub via_token: bool,
}

/// The role of a user in `groups`.
pub fn role_for(groups: &[String], admin_groups: &[String]) -> Role {
    if groups.iter().any(|g| admin_groups.contains(g)) {
        Role::Admin
    } else {
        Role::Researcher
    }
}

/// Whether `viewer` may use a template with `access`: admins may use every template; an
/// empty access list opens it to every signed-in user; otherwise their role or one of their
/// groups must be listed.
pub fn may_use_template(viewer: &Viewer, access: &TemplateAccess) -> bool {
    may_use_template_as(viewer.role, &viewer.groups, access)
}

/// [`may_use_template`] for a user known by their role and groups alone.
pub fn may_use_template_as(role: Role, groups: &[String], access: &TemplateAccess) -> bool {
    role == Role::Admin
        || (access.roles.is_empty() && access.groups.is_empty())
        || access.roles.contains(&role)
        || groups.iter().any(|g| access.groups.contains(g))
}

/// Whether `viewer` sees everyone's requests (admins) rather than only their own.
pub fn sees_all_requests(viewer: &Viewer) -> bool {
    viewer.role == Role::Admin
}

/// Whether the user `user_id` (`viewer`) may see a request made by `author_user_id`: their
/// own, or any for an admin. Others' requests answer 404, not 403, so ids reveal nothing.
pub fn may_view_request(user_id: i64, viewer: &Viewer, author_user_id: i64) -> bool {
    sees_all_requests(viewer) || user_id == author_user_id
}

/// Whether `principal` may take back a request made by `author_user_id` (before it is
/// proposed): its author, or an admin.
pub fn may_withdraw_request(principal: &Principal, author_user_id: i64) -> bool {
    principal.viewer.role == Role::Admin || principal.user_id == author_user_id
}

/// Whether `principal` may ask to update, extend or remove a resource owned by
/// `owner_user_id`: its owner, or an admin.
pub fn may_act_on_resource(principal: &Principal, owner_user_id: i64) -> bool {
    principal.viewer.role == Role::Admin || principal.user_id == owner_user_id
}

/// Whether `viewer` may approve or reject requests.
pub fn may_decide_request(viewer: &Viewer) -> bool {
    viewer.role == Role::Admin
}

/// The four-eyes rule: whether the user `user_id` may approve or merge a request made by
/// `author_user_id`. Someone else's, always; their own only where the deployment allows
/// self-approval. Rejecting one's own request is always allowed: it hands out nothing.
pub fn four_eyes_allow(user_id: i64, author_user_id: i64, self_approval: bool) -> bool {
    self_approval || user_id != author_user_id
}

/// Why [`four_eyes_allow`] refused, for the refusal's message.
pub const FOUR_EYES_REFUSAL: &str = "you made this request: another admin approves and merges it \
     (MIRANTE_ALLOW_SELF_APPROVAL=true lets admins approve their own)";

/// Whether `viewer` may merge a request's pull request from the portal (local forge).
pub fn may_merge_request(viewer: &Viewer) -> bool {
    viewer.role == Role::Admin
}

/// Whether `viewer` may propose a change of a catalog item's state, qualifier or evidence.
pub fn may_change_catalog(viewer: &Viewer) -> bool {
    viewer.role == Role::Admin
}

/// Whether a user with `role` may see which self-service templates did not load and why
/// (their files and messages name the monorepo's layout): admins.
pub fn may_see_template_problems(role: Role) -> bool {
    role == Role::Admin
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_admin_approves_only_others_requests_unless_self_approval_is_allowed() {
        assert!(four_eyes_allow(1, 2, false));
        assert!(!four_eyes_allow(1, 1, false));
        assert!(four_eyes_allow(1, 1, true));
    }

    fn viewer(role: Role, groups: &[&str]) -> Viewer {
        Viewer {
            username: "someone".into(),
            name: "Someone".into(),
            email: None,
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            role,
            csrf_token: String::new(),
            dev_login: false,
        }
    }

    #[test]
    fn a_researcher_sees_only_their_own_requests_and_an_admin_all() {
        let rui = viewer(Role::Researcher, &[]);
        let ada = viewer(Role::Admin, &[]);
        assert!(may_view_request(7, &rui, 7));
        assert!(!may_view_request(7, &rui, 8));
        assert!(may_view_request(1, &ada, 8));
        assert!(!may_decide_request(&rui));
        assert!(!may_merge_request(&rui));
        assert!(may_decide_request(&ada));
        assert!(may_merge_request(&ada));
    }

    #[test]
    fn a_template_is_used_by_the_roles_and_groups_it_lists_and_by_admins() {
        let open = TemplateAccess::default();
        let gpu = TemplateAccess {
            roles: vec![],
            groups: vec!["gpu-users".into()],
        };
        assert!(may_use_template(&viewer(Role::Researcher, &[]), &open));
        assert!(!may_use_template(&viewer(Role::Researcher, &["x"]), &gpu));
        assert!(may_use_template(
            &viewer(Role::Researcher, &["gpu-users"]),
            &gpu
        ));
        assert!(may_use_template(&viewer(Role::Admin, &[]), &gpu));
        let researchers = TemplateAccess {
            roles: vec![Role::Researcher],
            groups: vec![],
        };
        assert!(may_use_template(
            &viewer(Role::Researcher, &[]),
            &researchers
        ));
    }

    #[test]
    fn members_of_an_admin_group_are_admins() {
        let admins = vec!["portal-admins".to_owned()];
        assert_eq!(
            role_for(&["researchers".into(), "portal-admins".into()], &admins),
            Role::Admin
        );
        assert_eq!(role_for(&["researchers".into()], &admins), Role::Researcher);
        assert_eq!(role_for(&[], &admins), Role::Researcher);
    }
}
