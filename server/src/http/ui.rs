//! The web UI's view of self-service: [`SelfServiceData`] implemented on the [`SelfService`]
//! layer, so the pages and the JSON API go through the same operations and the same rules.
//! This module only finds who is asking and reshapes the answers for the pages.

use std::sync::Arc;

use axum::http::request::Parts;
use mirante_domain::access::{self, Principal};
use mirante_domain::{Diagnostic, selfservice::CatalogContext};
use mirante_frontend::{
    api::catalog_change::{CatalogChangeView, ItemFieldsView},
    api::selfservice::{
        FileStatus, GpuCapacity, PreviewFile, PreviewView, Refusal, RequestFile, RequestRow,
        RequestView, SsError, TemplateCard, TemplateForm, TimelineStep,
    },
    ssr::SelfServiceData,
};
use serde_json::Value;

use crate::adapters::forge::MergeStyle;
use crate::app::catalog::CatalogStore;
use crate::app::selfservice::capacity;
use crate::app::selfservice::service;
use crate::app::selfservice::service::CatalogChangeInput;
use crate::app::selfservice::service::ItemFields;
use crate::app::selfservice::service::RequestInput;
use crate::app::selfservice::service::SelfService;
use crate::app::selfservice::service::ServiceError;
use crate::app::selfservice::service::TemplateSummary;

/// Self-service for the web UI.
pub(crate) struct UiSelfService {
    service: Arc<SelfService>,
    catalog: Arc<CatalogStore>,
}

impl UiSelfService {
    /// The UI's view of `service`; `catalog` gives the forms their catalog-derived choices.
    pub(crate) fn new(service: Arc<SelfService>, catalog: Arc<CatalogStore>) -> Self {
        UiSelfService { service, catalog }
    }
}

/// Who is asking: the authentication layer put them in the request's extensions.
fn principal(parts: &Parts) -> Result<&Principal, SsError> {
    parts
        .extensions
        .get::<Principal>()
        .ok_or_else(|| SsError::Internal("the request is not signed in".to_owned()))
}

fn refusal(e: ServiceError) -> SsError {
    match e {
        ServiceError::NotFound(_) => SsError::NotFound,
        ServiceError::Invalid(fields) => SsError::Refused(Refusal::Invalid(fields)),
        ServiceError::OverCapacity(field) => SsError::Refused(Refusal::Invalid(vec![*field])),
        ServiceError::Forbidden(m)
        | ServiceError::BadRequest(m)
        | ServiceError::Conflict(m)
        | ServiceError::Unavailable(m) => SsError::Refused(Refusal::Refused(m)),
        ServiceError::Internal(error) => {
            // Logged once here; the page says only that something broke.
            tracing::error!(error = %format!("{error:#}"), "self-service operation failed");
            SsError::Internal("internal error; the details are in the server's log".to_owned())
        }
    }
}

fn card(s: TemplateSummary) -> TemplateCard {
    TemplateCard {
        id: s.id,
        title: mirante_domain::selfservice::Localized {
            pt_br: s.title_pt_br,
            en: s.title,
        },
        description: mirante_domain::selfservice::Localized {
            pt_br: s.description_pt_br,
            en: s.description,
        },
        needs_approval: s.needs_approval,
    }
}

fn row(s: &service::RequestSummary) -> RequestRow {
    RequestRow {
        id: s.id,
        template: s.template.clone(),
        template_title: s.template_title.clone(),
        target: s.target.clone(),
        state: s.state,
        author: s.author.clone(),
        author_name: s.author_name.clone(),
        pr_number: s.pr_number,
        pr_url: s.pr_url.clone(),
        created_at: s.created_at.to_rfc3339(),
    }
}

fn fields_view(f: ItemFields) -> ItemFieldsView {
    ItemFieldsView {
        state: f.state,
        qualifier: f.qualifier,
        evidence: f.evidence,
    }
}

/// The form's change as the API's input; a malformed one is refused with the reason.
fn change_input(input: Value) -> Result<CatalogChangeInput, SsError> {
    serde_json::from_value(input)
        .map_err(|e| SsError::Refused(Refusal::Refused(format!("the change is malformed: {e}"))))
}

/// A catalog change's values as its page lists them: the item, each field from → to, the
/// reason.
fn catalog_change_values(values: &Value) -> Vec<(String, Value)> {
    let text = |key: &str| values.get(key).cloned().unwrap_or(Value::Null);
    let fields = |key: &str| {
        values
            .get(key)
            .and_then(|v| serde_json::from_value::<ItemFields>(v.clone()).ok())
    };
    let mut out = vec![("item".to_owned(), text("item"))];
    if let (Some(from), Some(to)) = (fields("from"), fields("to")) {
        let qualifier = |q: Option<mirante_domain::Qualifier>| q.map_or("none", |q| q.as_str());
        out.push((
            "state".to_owned(),
            Value::from(format!("{} → {}", from.state.as_str(), to.state.as_str())),
        ));
        out.push((
            "qualifier".to_owned(),
            Value::from(format!(
                "{} → {}",
                qualifier(from.qualifier),
                qualifier(to.qualifier)
            )),
        ));
        let mut evidence: Vec<Value> = to
            .evidence
            .iter()
            .filter(|e| !from.evidence.contains(e))
            .map(|e| {
                Value::from(format!(
                    "+ {}",
                    crate::app::catalog_change::evidence_line(e)
                ))
            })
            .collect();
        evidence.extend(
            from.evidence
                .iter()
                .filter(|e| !to.evidence.contains(e))
                .map(|e| {
                    Value::from(format!(
                        "− {}",
                        crate::app::catalog_change::evidence_line(e)
                    ))
                }),
        );
        out.push(("evidence".to_owned(), Value::Array(evidence)));
    }
    out.push(("reason".to_owned(), text("reason")));
    out
}

#[async_trait::async_trait]
impl SelfServiceData for UiSelfService {
    async fn preview_catalog_change(
        &self,
        caller: &Parts,
        item: &str,
        input: Value,
    ) -> Result<CatalogChangeView, SsError> {
        let principal = principal(caller)?;
        let input = change_input(input)?;
        let p = self
            .service
            .preview_catalog_change(principal, item, &input)
            .await
            .map_err(refusal)?;
        Ok(CatalogChangeView {
            file: p.file,
            base: p.base,
            from: fields_view(p.from),
            to: fields_view(p.to),
            diff: p.diff,
        })
    }

    async fn submit_catalog_change(
        &self,
        caller: &Parts,
        item: &str,
        input: Value,
    ) -> Result<i64, SsError> {
        let principal = principal(caller)?;
        let input = change_input(input)?;
        let detail = self
            .service
            .submit_catalog_change(principal, item, &input)
            .await
            .map_err(refusal)?;
        Ok(detail.summary.id)
    }

    async fn templates(&self, caller: &Parts) -> Result<Vec<TemplateCard>, SsError> {
        let principal = principal(caller)?;
        Ok(self
            .service
            .templates_for(principal)
            .await
            .into_iter()
            .map(card)
            .collect())
    }

    async fn template(&self, caller: &Parts, id: &str) -> Result<TemplateForm, SsError> {
        let principal = principal(caller)?;
        let detail = self
            .service
            .template_for(principal, id)
            .await
            .map_err(refusal)?;
        // Whose namespaces the form offers: the caller's workspaces (admins type any).
        let namespaces = if crate::app::selfservice::service::uses_own_namespaces(&detail.manifest)
        {
            self.service
                .own_namespaces(principal)
                .await
                .map_err(refusal)?
        } else {
            None
        };
        let capacity = if capacity::gpu_parameters(&detail.manifest).is_some() {
            // Best effort: the form still works (and the server still checks) without it.
            self.gpu_capacity(caller).await.unwrap_or_default()
        } else {
            Vec::new()
        };
        Ok(TemplateForm {
            card: card(detail.summary),
            manifest: detail.manifest,
            catalog: CatalogContext::from_snapshot(&self.catalog.current().snapshot)
                .with_namespaces(namespaces),
            capacity,
        })
    }

    async fn gpu_capacity(&self, caller: &Parts) -> Result<Vec<GpuCapacity>, SsError> {
        principal(caller)?;
        let ledger = self.service.capacity().await.map_err(refusal)?;
        Ok(ledger
            .into_iter()
            .map(|c| GpuCapacity {
                id: c.id,
                total: c.total,
                free: c.free,
            })
            .collect())
    }

    async fn preview(
        &self,
        caller: &Parts,
        template: &str,
        values: Value,
    ) -> Result<PreviewView, SsError> {
        let principal = principal(caller)?;
        let input = RequestInput {
            template: template.to_owned(),
            values,
            at: None,
        };
        let p = self
            .service
            .preview(principal, &input)
            .await
            .map_err(refusal)?;
        Ok(PreviewView {
            target: p.target,
            base: p.base,
            needs_approval: p.needs_approval,
            at: p.at.to_rfc3339(),
            files: p
                .files
                .into_iter()
                .map(|f| PreviewFile {
                    path: f.path,
                    status: match f.status {
                        service::FileStatus::Added => FileStatus::Added,
                        service::FileStatus::Modified => FileStatus::Modified,
                        service::FileStatus::Unchanged => FileStatus::Unchanged,
                    },
                    diff: f.diff,
                })
                .collect(),
        })
    }

    async fn submit(
        &self,
        caller: &Parts,
        template: &str,
        values: Value,
        at: Option<&str>,
    ) -> Result<i64, SsError> {
        let principal = principal(caller)?;
        let at = at
            .map(|a| {
                chrono::DateTime::parse_from_rfc3339(a)
                    .map(|t| t.with_timezone(&chrono::Utc))
                    .map_err(|_| {
                        SsError::Refused(Refusal::Refused(
                            "the preview's time is not an RFC 3339 time".to_owned(),
                        ))
                    })
            })
            .transpose()?;
        let input = RequestInput {
            template: template.to_owned(),
            values,
            at,
        };
        let detail = self
            .service
            .submit(principal, &input)
            .await
            .map_err(refusal)?;
        Ok(detail.summary.id)
    }

    async fn requests(&self, caller: &Parts) -> Result<Vec<RequestRow>, SsError> {
        let principal = principal(caller)?;
        let rows = self
            .service
            .list_requests(principal)
            .await
            .map_err(refusal)?;
        Ok(rows.iter().map(row).collect())
    }

    async fn resources(
        &self,
        caller: &Parts,
    ) -> Result<Vec<mirante_domain::resource::Resource>, SsError> {
        let principal = principal(caller)?;
        self.service
            .resources(principal, &Default::default())
            .await
            .map_err(refusal)
    }

    async fn request(&self, caller: &Parts, id: i64) -> Result<RequestView, SsError> {
        let principal = principal(caller)?;
        let d = self.service.request(principal, id).await.map_err(refusal)?;
        // The values in the order of the template's form, when the template is still there.
        let mut values: Vec<(String, Value)> = match &d.values {
            _ if d.summary.template == service::CATALOG_CHANGE => catalog_change_values(&d.values),
            Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            _ => Vec::new(),
        };
        if let Some(t) = self.service.last_template_set().get(&d.summary.template) {
            let position = |name: &str| {
                t.manifest()
                    .parameters
                    .iter()
                    .position(|p| p.name == name)
                    .unwrap_or(usize::MAX)
            };
            values.sort_by_key(|(k, _)| position(k));
        }
        Ok(RequestView {
            row: row(&d.summary),
            values,
            files: d
                .files
                .into_iter()
                .map(|f| RequestFile {
                    path: f.path,
                    content: f.content,
                })
                .collect(),
            branch: d.branch,
            last_error: d.last_error,
            timeline: d
                .timeline
                .into_iter()
                .map(|t| TimelineStep {
                    to: t.to,
                    at: t.at.to_rfc3339(),
                    actor: t.actor,
                    comment: t.comment,
                    overcommit_reason: t.overcommit_reason,
                    deployment: t.deployment,
                })
                .collect(),
            can_decide: d.can_decide,
            can_merge: d.can_merge,
            another_admin_decides: d.another_admin_decides,
            csrf_token: String::new(),
        })
    }

    async fn approve(
        &self,
        caller: &Parts,
        id: i64,
        comment: Option<String>,
        overcommit_reason: Option<String>,
    ) -> Result<(), SsError> {
        let principal = principal(caller)?;
        self.service
            .approve(
                principal,
                id,
                comment.as_deref(),
                overcommit_reason.as_deref(),
            )
            .await
            .map(drop)
            .map_err(refusal)
    }

    async fn reject(&self, caller: &Parts, id: i64, comment: String) -> Result<(), SsError> {
        let principal = principal(caller)?;
        self.service
            .reject(principal, id, &comment)
            .await
            .map(drop)
            .map_err(refusal)
    }

    async fn merge(&self, caller: &Parts, id: i64) -> Result<(), SsError> {
        let principal = principal(caller)?;
        self.service
            .merge(principal, id, MergeStyle::FastForward)
            .await
            .map(drop)
            .map_err(refusal)
    }

    async fn template_problems(&self, caller: &Parts) -> Result<Vec<Diagnostic>, SsError> {
        if !access::may_see_template_problems(principal(caller)?.viewer.role) {
            return Err(SsError::NotFound);
        }
        Ok(self.service.template_problems().await)
    }
}
