//! What a proposal says on the forge: the commit message, and the pull request's title and
//! body for a template request and for a catalog change (askama templates in
//! `templates/forge/`). Every value from a request is put on one line or fenced, so nothing a
//! requester types can change the text's shape.

use askama::Template;

use super::worker::WorkerSettings;
use crate::adapters::db::requests::RequestKind;
use crate::adapters::db::requests::RequestRecord;
use crate::app::catalog_change::ItemFields;
use crate::app::catalog_change::evidence_line;
use crate::app::catalog_change::one_line;

pub(crate) fn commit_message(request: &RequestRecord) -> String {
    if request.kind == RequestKind::CatalogChange {
        let item = request
            .values
            .get("item")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        return format!(
            "catalog: {} {} (request #{})\n\nProposed by {} through Mirante.",
            one_line(item),
            CatalogChangeText::summary(&request.values),
            request.id,
            one_line(&request.author.username)
        );
    }
    format!(
        "{}: {} (request #{})\n\nRequested by {} through Mirante.",
        request.template,
        request.target,
        request.id,
        one_line(&request.author.username)
    )
}

/// A catalog change's pull request title and body (`templates/forge/catalog_change_*`).
#[derive(Debug, Clone)]
pub struct CatalogChangeText {
    id: i64,
    item: String,
    name: String,
    file: String,
    summary: String,
    author_username: String,
    author_name: String,
    base: String,
    link: String,
    changes: String,
    reason: String,
    fence: String,
}

#[derive(Template)]
#[template(path = "forge/catalog_change_title.txt", escape = "none")]
struct CatalogTitleTemplate<'a> {
    id: i64,
    item: &'a str,
    summary: &'a str,
}

#[derive(Template)]
#[template(path = "forge/catalog_change_body.md", escape = "none")]
struct CatalogBodyTemplate<'a> {
    id: i64,
    item: &'a str,
    name: &'a str,
    file: &'a str,
    author_username: &'a str,
    author_name: &'a str,
    base: &'a str,
    link: &'a str,
    changes: &'a str,
    reason: &'a str,
    fence: &'a str,
}

impl CatalogChangeText {
    fn fields(values: &serde_json::Value) -> Option<(ItemFields, ItemFields)> {
        let from = serde_json::from_value(values.get("from")?.clone()).ok()?;
        let to = serde_json::from_value(values.get("to")?.clone()).ok()?;
        Some((from, to))
    }

    /// `validated → declared`, or what else changes when the state does not.
    pub fn summary(values: &serde_json::Value) -> String {
        match Self::fields(values) {
            Some((from, to)) if from.state != to.state => {
                format!("{} → {}", from.state.as_str(), to.state.as_str())
            }
            Some((from, to)) if from.qualifier != to.qualifier => format!(
                "qualifier {} → {}",
                from.qualifier.map_or("none", |q| q.as_str()),
                to.qualifier.map_or("none", |q| q.as_str())
            ),
            _ => "evidence".to_owned(),
        }
    }

    /// The text for a catalog-change request.
    pub fn of(request: &RequestRecord, settings: &WorkerSettings) -> Self {
        let text = |key: &str| {
            request
                .values
                .get(key)
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let mut changes = String::new();
        if let Some((from, to)) = Self::fields(&request.values) {
            changes.push_str(&format!(
                "state:     {} → {}\n",
                from.state.as_str(),
                to.state.as_str()
            ));
            changes.push_str(&format!(
                "qualifier: {} → {}\n",
                from.qualifier.map_or("(none)", |q| q.as_str()),
                to.qualifier.map_or("(none)", |q| q.as_str())
            ));
            changes.push_str("evidence:\n");
            for e in &to.evidence {
                let mark = if from.evidence.contains(e) { ' ' } else { '+' };
                changes.push_str(&format!("  {mark} {}\n", evidence_line(e)));
            }
            for e in from.evidence.iter().filter(|e| !to.evidence.contains(e)) {
                changes.push_str(&format!("  - {}\n", evidence_line(e)));
            }
        }
        let changes = changes.trim_end().to_owned();
        // The reason keeps its lines; control characters other than line breaks are gone.
        let reason: String = text("reason")
            .chars()
            .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
            .collect();
        // A fence longer than any run of backticks in what it holds, so nothing closes it.
        let longest = changes
            .split(|c| c != '`')
            .chain(reason.split(|c| c != '`'))
            .map(str::len)
            .max()
            .unwrap_or(0);
        CatalogChangeText {
            id: request.id,
            item: one_line(&text("item")),
            name: one_line(&text("name")),
            file: one_line(&request.target),
            summary: Self::summary(&request.values),
            author_username: one_line(&request.author.username),
            author_name: one_line(&request.author.name),
            base: settings.base_branch.clone(),
            link: format!("{}/requests/{}", settings.public_url, request.id),
            changes,
            reason,
            fence: "`".repeat(longest.max(2) + 1),
        }
    }

    /// One line.
    pub fn title(&self) -> String {
        CatalogTitleTemplate {
            id: self.id,
            item: &self.item,
            summary: &self.summary,
        }
        .render()
        .map(|t| t.trim().to_owned())
        .unwrap_or_else(|_| format!("Mirante catalog change #{}", self.id))
    }

    /// Markdown.
    pub fn body(&self) -> String {
        CatalogBodyTemplate {
            id: self.id,
            item: &self.item,
            name: &self.name,
            file: &self.file,
            author_username: &self.author_username,
            author_name: &self.author_name,
            base: &self.base,
            link: &self.link,
            changes: &self.changes,
            reason: &self.reason,
            fence: &self.fence,
        }
        .render()
        .unwrap_or_else(|e| {
            format!(
                "Mirante catalog change #{}: {}\n\n(body not rendered: {e})",
                self.id, self.link
            )
        })
    }
}

/// The pull request's title and body (askama templates in `templates/forge/`).
#[derive(Debug, Clone)]
pub struct PullRequestText {
    id: i64,
    template: String,
    template_title: String,
    author_username: String,
    author_name: String,
    target: String,
    base: String,
    link: String,
    decided_by: Option<String>,
    decision_comment: Option<String>,
    overcommit_reason: Option<String>,
    values: String,
    fence: String,
    files: Vec<String>,
    checks: Vec<String>,
}

#[derive(Template)]
#[template(path = "forge/pull_request_title.txt", escape = "none")]
struct TitleTemplate<'a> {
    id: i64,
    template_title: &'a str,
    author_username: &'a str,
    target: &'a str,
}

#[derive(Template)]
#[template(path = "forge/pull_request_body.md", escape = "none")]
struct BodyTemplate<'a> {
    id: i64,
    template: &'a str,
    template_title: &'a str,
    author_username: &'a str,
    author_name: &'a str,
    target: &'a str,
    base: &'a str,
    link: &'a str,
    decided_by: &'a Option<String>,
    decision_comment: &'a Option<String>,
    overcommit_reason: &'a Option<String>,
    values: &'a str,
    fence: &'a str,
    files: &'a [String],
    checks: &'a [String],
}

impl PullRequestText {
    /// The text for a request.
    pub fn of(request: &RequestRecord, settings: &WorkerSettings) -> Self {
        let values =
            serde_json::to_string_pretty(&request.values).unwrap_or_else(|_| "{}".to_owned());
        // A fence longer than any run of backticks in the values, so none can close it.
        let longest = values.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let mut checks = vec![
            "values validated on the server against the template's parameters".to_owned(),
            "every file rendered from the template parses as YAML, with apiVersion, kind and a valid metadata.name in each document".to_owned(),
            format!(
                "the target directory `{}` did not exist on `{}`",
                one_line(&request.target),
                settings.base_branch
            ),
        ];
        if let Some(by) = &request.decided_by {
            checks.push(format!("approved in the portal by `{}`", one_line(by)));
        }
        PullRequestText {
            id: request.id,
            template: one_line(&request.template),
            template_title: one_line(&request.template_title),
            author_username: one_line(&request.author.username),
            author_name: one_line(&request.author.name),
            target: one_line(&request.target),
            base: settings.base_branch.clone(),
            link: format!("{}/requests/{}", settings.public_url, request.id),
            decided_by: request.decided_by.as_deref().map(one_line),
            decision_comment: request.decision_comment.as_deref().map(one_line),
            overcommit_reason: request.overcommit_reason.as_deref().map(one_line),
            values,
            fence: "`".repeat(longest.max(2) + 1),
            files: request.files.iter().map(|f| one_line(&f.path)).collect(),
            checks,
        }
    }

    /// One line.
    pub fn title(&self) -> String {
        let title = TitleTemplate {
            id: self.id,
            template_title: &self.template_title,
            author_username: &self.author_username,
            target: &self.target,
        }
        .render()
        .unwrap_or_else(|_| format!("Mirante request #{}", self.id));
        title.trim().to_owned()
    }

    /// Markdown.
    pub fn body(&self) -> String {
        BodyTemplate {
            id: self.id,
            template: &self.template,
            template_title: &self.template_title,
            author_username: &self.author_username,
            author_name: &self.author_name,
            target: &self.target,
            base: &self.base,
            link: &self.link,
            decided_by: &self.decided_by,
            decision_comment: &self.decision_comment,
            overcommit_reason: &self.overcommit_reason,
            values: &self.values,
            fence: &self.fence,
            files: &self.files,
            checks: &self.checks,
        }
        .render()
        .unwrap_or_else(|e| {
            format!(
                "Mirante request #{}: {}\n\n(body not rendered: {e})",
                self.id, self.link
            )
        })
    }
}
