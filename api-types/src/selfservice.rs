//! Self-service: templates, previews, requests and their timelines.

use chrono::{DateTime, Utc};
use mirante_domain::request::{Action, RequestState};
use mirante_domain::resource::ResourceState;
use mirante_domain::selfservice::{Approval, Localized, TemplateManifest};
use serde::{Deserialize, Serialize};

/// A template in the catalogue of templates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TemplateSummary {
    /// Its id (`gpu-workspace`).
    pub id: String,
    /// Title in English.
    pub title: String,
    /// Title in Brazilian Portuguese.
    pub title_pt_br: String,
    /// Description in English.
    pub description: String,
    /// Description in Brazilian Portuguese.
    pub description_pt_br: String,
    /// Whether an admin approves requests made from it.
    pub needs_approval: bool,
}

/// A template with everything its form needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TemplateDetail {
    /// The summary.
    #[serde(flatten)]
    pub summary: TemplateSummary,
    /// The whole `template.yaml`: parameters (JSON-Schema subset), target, access.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub manifest: TemplateManifest,
}

/// What a request asks for: `{"template": ID, "values": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RequestInput {
    /// The template's id.
    pub template: String,
    /// The form's values, by parameter name.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub values: serde_json::Value,
    /// The `at` of the preview being submitted: the files are rendered for that time again,
    /// so a template that writes the date or time gives exactly the previewed files. At most
    /// a day old; without it, now.
    #[serde(default)]
    pub at: Option<DateTime<Utc>>,
}

/// What a request on an existing resource asks:
/// `{"kind": "update"|"extend"|"remove", "values": {...}}`. For `update`, `values` holds the
/// parameters that change (the others keep the resource's current values); for `extend`, the
/// new `days` (counted from today); for `remove`, nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ResourceRequestInput {
    /// `update`, `extend` or `remove`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "extend"))]
    pub kind: Action,
    /// The values that change, by parameter name.
    #[serde(default = "empty_object")]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub values: serde_json::Value,
}

/// What a resubmission changes: `{"values": {...}}`, the parameters that change (the others
/// keep the ended request's values). `{}` resubmits the same values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ResubmitInput {
    /// The values that change, by parameter name.
    #[serde(default = "empty_object")]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub values: serde_json::Value,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}

/// How a file compares with the base branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// New in the monorepo.
    Added,
    /// Replaces a file with other content.
    Modified,
    /// Same content as on the base branch.
    Unchanged,
    /// Deleted from the base branch (a removal).
    Deleted,
}

/// One file of a preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PreviewFile {
    /// Path in the monorepo.
    pub path: String,
    /// The whole new content.
    pub content: String,
    /// Added, modified or unchanged.
    pub status: FileStatus,
    /// A unified diff against the base branch (`--- a/…`, `+++ b/…`).
    pub diff: String,
}

/// What a submission would propose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Preview {
    /// The template's id.
    pub template: String,
    /// The directory the files go to.
    pub target: String,
    /// Short name for the branch.
    pub slug: String,
    /// The values after defaults and normalisation.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub values: serde_json::Map<String, serde_json::Value>,
    /// The branch compared against.
    pub base: String,
    /// Whether an admin approves it before it is proposed.
    pub needs_approval: bool,
    /// Every file, with its diff.
    pub files: Vec<PreviewFile>,
    /// When the files were rendered; submit with it to get exactly these files.
    pub at: DateTime<Utc>,
}

/// A request in a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RequestSummary {
    /// Its id.
    pub id: i64,
    /// What it does to its resource: `create` (and every catalog change), `update`,
    /// `extend` or `remove`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "create"))]
    pub action: Action,
    /// The template's id.
    pub template: String,
    /// The template's title.
    pub template_title: String,
    /// The directory in the monorepo.
    pub target: String,
    /// Where it stands.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "awaiting_approval"))]
    pub state: RequestState,
    /// Who asked (username).
    pub author: String,
    /// Their display name.
    pub author_name: String,
    /// The pull request's number, once open.
    pub pr_number: Option<i64>,
    /// Where to open the pull request.
    pub pr_url: Option<String>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// The ended request (rejected, withdrawn or failed) it makes again, if it does.
    #[serde(default)]
    pub resubmits: Option<i64>,
}

/// One step of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TimelineEntry {
    /// The state before (`null` for the creation).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub from: Option<RequestState>,
    /// The state after.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub to: RequestState,
    /// When.
    pub at: DateTime<Utc>,
    /// A username, `system`, or `forge:<kind>`.
    pub actor: String,
    /// The admin's comment.
    pub comment: Option<String>,
    /// Why an approval handed out more GPUs than the cluster had free, if it did.
    pub overcommit_reason: Option<String>,
    /// For a step of the deployment after the merge, the state the resource reached
    /// (`syncing`, `live` or `degraded`); the request stays merged (`from` and `to` are
    /// `merged`), `actor` is `argocd` and `comment` is Argo CD's message. `null` for every
    /// change of the request's state.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, example = "live"))]
    pub deployment: Option<ResourceState>,
}

/// A file of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RequestFile {
    /// Path in the monorepo.
    pub path: String,
    /// Content.
    pub content: String,
}

/// A request with everything its page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RequestDetail {
    /// The list's fields.
    #[serde(flatten)]
    pub summary: RequestSummary,
    /// The values.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub values: serde_json::Value,
    /// The files, exactly as previewed.
    pub files: Vec<RequestFile>,
    /// The files it deletes (a removal), exactly as previewed.
    #[serde(default)]
    pub removed: Vec<String>,
    /// `mirante/<id>-<slug>`.
    pub branch: String,
    /// Whether an admin must approve it.
    pub needs_approval: bool,
    /// The admin who approved or rejected it.
    pub decided_by: Option<String>,
    /// Their comment.
    pub decision_comment: Option<String>,
    /// Why the admin approved more GPUs than the cluster had free, if they did.
    pub overcommit_reason: Option<String>,
    /// The last thing that went wrong while proposing or following it.
    pub last_error: Option<String>,
    /// How many times the worker took it up.
    pub attempts: i64,
    /// Every change of state, oldest first.
    pub timeline: Vec<TimelineEntry>,
    /// Whether the caller may approve or reject it now.
    pub can_decide: bool,
    /// Whether the caller may merge it now (local forge).
    pub can_merge: bool,
    /// Whether the caller (its author, or an admin) may withdraw it now: before the worker
    /// starts proposing it.
    #[serde(default)]
    pub can_withdraw: bool,
    /// Whether the caller (its author, or an admin) may make it again now, with changed values
    /// (`POST /api/v1/requests/{id}/resubmit`): it ended without a merge (rejected, withdrawn
    /// or failed) and no later request makes it again yet.
    #[serde(default)]
    pub can_resubmit: bool,
    /// The latest request that makes this one again, if one does.
    #[serde(default)]
    pub resubmitted_as: Option<i64>,
    /// Whether the caller, an admin, would decide or merge it now but made it themselves:
    /// the four-eyes rule leaves that to another admin.
    pub another_admin_decides: bool,
    /// The resource it made or changes (`/api/v1/resources/{id}`), once it is one: `null`
    /// for a catalog change and for a request refused before any merge.
    pub resource: Option<i64>,
}

/// What a webhook did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum WebhookOutcome {
    /// Not about a pull request the portal opened.
    Ignored,
    /// About one of ours, which already stood there.
    Unchanged {
        /// The request.
        request: i64,
    },
    /// A request moved on.
    Updated {
        /// The request.
        request: i64,
        /// Its new state.
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        state: RequestState,
    },
}

impl TemplateSummary {
    /// The summary of a template's manifest.
    pub fn of(manifest: &TemplateManifest) -> Self {
        TemplateSummary {
            id: manifest.id.clone(),
            title: manifest.title.en.clone(),
            title_pt_br: manifest.title.pt_br.clone(),
            description: manifest.description.en.clone(),
            description_pt_br: manifest.description.pt_br.clone(),
            needs_approval: manifest.approval == Approval::Required,
        }
    }

    /// The title in both languages.
    pub fn localized_title(&self) -> Localized {
        Localized {
            pt_br: self.title_pt_br.clone(),
            en: self.title.clone(),
        }
    }

    /// The description in both languages.
    pub fn localized_description(&self) -> Localized {
        Localized {
            pt_br: self.description_pt_br.clone(),
            en: self.description.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_detail_reads_back_what_the_api_wrote() {
        let at = DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
            .expect("a time")
            .with_timezone(&Utc);
        let detail = RequestDetail {
            summary: RequestSummary {
                id: 7,
                action: Action::Extend,
                template: "gpu-workspace".into(),
                template_title: "GPU workspace".into(),
                target: "workspaces/rui-llm".into(),
                state: RequestState::Proposed,
                author: "rui".into(),
                author_name: "Rui Researcher".into(),
                pr_number: Some(3),
                pr_url: None,
                created_at: at,
                updated_at: at,
                resubmits: Some(5),
            },
            values: serde_json::json!({"gpus": 2}),
            files: vec![RequestFile {
                path: "workspaces/rui-llm/quota.yaml".into(),
                content: "gpus: 2\n".into(),
            }],
            removed: vec!["workspaces/rui-llm/old.yaml".into()],
            branch: "mirante/7-rui-llm".into(),
            needs_approval: true,
            decided_by: Some("ada".into()),
            decision_comment: None,
            overcommit_reason: None,
            last_error: None,
            attempts: 1,
            timeline: vec![TimelineEntry {
                from: None,
                to: RequestState::AwaitingApproval,
                at,
                actor: "rui".into(),
                comment: None,
                overcommit_reason: None,
                deployment: None,
            }],
            can_decide: false,
            can_merge: true,
            can_withdraw: false,
            can_resubmit: false,
            resubmitted_as: None,
            another_admin_decides: false,
            resource: None,
        };
        let json = serde_json::to_value(&detail).expect("serialises");
        // The summary's fields sit beside the detail's, as the API has always answered them.
        assert_eq!(json["id"], 7);
        assert_eq!(json["state"], "proposed");
        assert_eq!(json["created_at"], "2026-12-01T10:00:00Z");
        let back: RequestDetail = serde_json::from_value(json).expect("deserialises");
        assert_eq!(back, detail);
    }

    #[test]
    fn a_summary_gives_its_title_in_both_languages() {
        let summary = TemplateSummary {
            id: "t".into(),
            title: "Workspace".into(),
            title_pt_br: "Espaço".into(),
            description: "d".into(),
            description_pt_br: "d-pt".into(),
            needs_approval: false,
        };
        assert_eq!(summary.localized_title().pt_br, "Espaço");
        assert_eq!(summary.localized_title().en, "Workspace");
        assert_eq!(summary.localized_description().pt_br, "d-pt");
    }
}

/// What a request's branch proposes against the base branch, as a pull request page shows it:
/// where the local forge holds the monorepo, this is its pull request's page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProposedChange {
    /// The request.
    pub request: i64,
    /// Its branch.
    pub branch: String,
    /// The branch it is merged into.
    pub base: String,
    /// `open`, `merged` or `closed`.
    #[cfg_attr(feature = "openapi", schema(example = "open"))]
    pub state: String,
    /// The commit the diff starts from: where the branch left the base (open, closed), or the
    /// base before the merge (merged).
    pub from: String,
    /// The commit it ends at: the branch's head, or the merge commit.
    pub to: String,
    /// The branch's commits the base did not have, newest first (at most 50).
    pub commits: Vec<ChangeCommit>,
    /// Every file changed, by path (at most 300), each with git's unified diff.
    pub files: Vec<ChangeFile>,
    /// Whether more files changed than are listed.
    pub more_files: bool,
}

/// One commit of a proposed change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChangeCommit {
    /// Its id.
    pub id: String,
    /// The first line of its message.
    pub summary: String,
    /// Its author's name.
    pub author: String,
    /// When it was authored (RFC 3339).
    pub at: String,
}

/// One file of a proposed change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChangeFile {
    /// Path in the monorepo.
    pub path: String,
    /// `added`, `modified` or `deleted`.
    pub status: FileStatus,
    /// git's unified diff of the file (cut after 256 KiB, with a last line saying so).
    pub diff: String,
}
