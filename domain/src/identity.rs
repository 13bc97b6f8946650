//! Who is looking: the signed-in user as every layer sees them.

use serde::{Deserialize, Serialize};

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
