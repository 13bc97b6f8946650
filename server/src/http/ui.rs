//! The web UI's view of self-service: [`SelfServiceData`] implemented on the [`SelfService`]
//! layer, so the pages and the JSON API go through the same operations and the same rules.
//! This module only finds who is asking and reshapes the answers for the pages.

use std::sync::Arc;

use axum::http::request::Parts;
use mirante_api_types::selfservice::ResourceRequestInput;
use mirante_domain::access::{self, Principal};
use mirante_domain::request::Action;
use mirante_domain::{Diagnostic, selfservice::CatalogContext};
use mirante_frontend::{
    api::selfservice::{
        GpuCapacity, Refusal, RequestPageData, ResourcePageData, SsError, TemplateForm,
        TemplateUpdates, field_text, values_from_fields,
    },
    ssr::SelfServiceData,
};
use serde_json::Value;

use crate::adapters::forge::MergeStyle;
use crate::app::catalog::CatalogStore;
use crate::app::selfservice::capacity;
use crate::app::selfservice::service;
use crate::app::selfservice::service::CatalogChangeInput;
use crate::app::selfservice::service::CatalogChangePreview;
use crate::app::selfservice::service::ItemFields;
use crate::app::selfservice::service::Preview;
use crate::app::selfservice::service::RequestInput;
use crate::app::selfservice::service::RequestSummary;
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

impl UiSelfService {
    /// A day-two form's fields as the API's input: typed as the resource's template types
    /// them; only the fields the form sent change.
    async fn resource_input(
        &self,
        principal: &Principal,
        id: i64,
        action: Action,
        fields: &[(String, String)],
    ) -> Result<ResourceRequestInput, SsError> {
        let now = self
            .service
            .resource_now(principal, id)
            .await
            .map_err(refusal)?;
        let manifest = self
            .service
            .template_for(principal, &now.template)
            .await
            .map_err(refusal)?
            .manifest;
        let mut values = match values_from_fields(&manifest, fields) {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        values.retain(|name, _| fields.iter().any(|(k, _)| k == name));
        Ok(ResourceRequestInput {
            kind: action,
            values: Value::Object(values),
        })
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
        | ServiceError::Duplicate { message: m, .. }
        | ServiceError::KeyReused(m)
        | ServiceError::Unavailable(m) => SsError::Refused(Refusal::Refused(m)),
        ServiceError::Internal(error) => {
            // Logged once here; the page says only that something broke.
            tracing::error!(error = %format!("{error:#}"), "self-service operation failed");
            SsError::Internal("internal error; the details are in the server's log".to_owned())
        }
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
    ) -> Result<CatalogChangePreview, SsError> {
        let principal = principal(caller)?;
        let input = change_input(input)?;
        self.service
            .preview_catalog_change(principal, item, &input)
            .await
            .map_err(refusal)
    }

    async fn submit_catalog_change(
        &self,
        caller: &Parts,
        item: &str,
        input: Value,
        key: Option<&str>,
    ) -> Result<i64, SsError> {
        let principal = principal(caller)?;
        let input = change_input(input)?;
        let submitted = self
            .service
            .submit_catalog_change(principal, item, &input, key)
            .await
            .map_err(refusal)?;
        Ok(submitted.detail.summary.id)
    }

    fn request_key(&self) -> String {
        use rand::RngCore;
        let mut bits = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut bits);
        hex::encode(bits)
    }

    async fn templates(&self, caller: &Parts) -> Result<Vec<TemplateSummary>, SsError> {
        let principal = principal(caller)?;
        Ok(self.service.templates_for(principal).await)
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
            card: detail.summary,
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
    ) -> Result<Preview, SsError> {
        let principal = principal(caller)?;
        let input = RequestInput {
            template: template.to_owned(),
            values,
            at: None,
        };
        self.service
            .preview(principal, &input)
            .await
            .map_err(refusal)
    }

    async fn submit(
        &self,
        caller: &Parts,
        template: &str,
        values: Value,
        at: Option<&str>,
        key: Option<&str>,
        resubmits: Option<i64>,
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
        let submitted = match resubmits {
            Some(old) => self.service.submit_again(principal, old, &input, key).await,
            None => self.service.submit(principal, &input, key).await,
        }
        .map_err(refusal)?;
        Ok(submitted.detail.summary.id)
    }

    async fn requests(&self, caller: &Parts) -> Result<Vec<RequestSummary>, SsError> {
        let principal = principal(caller)?;
        self.service.list_requests(principal).await.map_err(refusal)
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

    async fn proposed_change(
        &self,
        caller: &Parts,
        id: i64,
    ) -> Result<mirante_api_types::selfservice::ProposedChange, SsError> {
        let principal = principal(caller)?;
        self.service
            .proposed_change(principal, id)
            .await
            .map_err(refusal)
    }

    async fn request(&self, caller: &Parts, id: i64) -> Result<RequestPageData, SsError> {
        let principal = principal(caller)?;
        let d = self.service.request(principal, id).await.map_err(refusal)?;
        // The template's words, when the caller may still see the template.
        let manifest = self
            .service
            .template_for(principal, &d.summary.template)
            .await
            .ok()
            .map(|t| t.manifest);
        // The values in the order of the template's form.
        let mut values: Vec<(String, Value)> = match &d.values {
            _ if d.summary.template == service::CATALOG_CHANGE => catalog_change_values(&d.values),
            Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            _ => Vec::new(),
        };
        if let Some(m) = &manifest {
            let position = |name: &str| {
                m.parameters
                    .iter()
                    .position(|p| p.name == name)
                    .unwrap_or(usize::MAX)
            };
            values.sort_by_key(|(k, _)| position(k));
        }
        Ok(RequestPageData {
            request: d,
            values,
            title: manifest.as_ref().map(|m| m.title.clone()),
            labels: manifest
                .map(|m| {
                    m.parameters
                        .into_iter()
                        .map(|p| (p.name, p.title))
                        .collect()
                })
                .unwrap_or_default(),
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

    async fn resource(&self, caller: &Parts, id: i64) -> Result<ResourcePageData, SsError> {
        let principal = principal(caller)?;
        let now = self
            .service
            .resource_now(principal, id)
            .await
            .map_err(refusal)?;
        // The form only when the caller may still use the template.
        let form = match self.template(caller, &now.template).await {
            Ok(form) => Some(form),
            Err(SsError::NotFound | SsError::Refused(_)) => None,
            Err(e) => return Err(e),
        };
        let fields = match (&form, &now.values) {
            (Some(form), Value::Object(values)) => form
                .manifest
                .parameters
                .iter()
                .filter_map(|p| {
                    let v = values.get(&p.name).filter(|v| !v.is_null())?;
                    Some((p.name.clone(), field_text(v)))
                })
                .collect(),
            _ => Vec::new(),
        };
        Ok(ResourcePageData {
            resource: now.resource,
            may_change: now.may_change && form.is_some(),
            open_request: now.open_request,
            form,
            fields,
            template_version: now.template_version,
            update: now.update,
            csrf_token: String::new(),
            request_key: String::new(),
        })
    }

    async fn ask_on_resource(
        &self,
        caller: &Parts,
        id: i64,
        action: Action,
        fields: Vec<(String, String)>,
        key: Option<&str>,
    ) -> Result<i64, SsError> {
        let principal = principal(caller)?;
        let input = self.resource_input(principal, id, action, &fields).await?;
        let submitted = self
            .service
            .ask_on_resource(principal, id, &input, key)
            .await
            .map_err(refusal)?;
        Ok(submitted.detail.summary.id)
    }

    async fn preview_on_resource(
        &self,
        caller: &Parts,
        id: i64,
        action: Action,
        fields: Vec<(String, String)>,
    ) -> Result<Preview, SsError> {
        let principal = principal(caller)?;
        let input = self.resource_input(principal, id, action, &fields).await?;
        self.service
            .preview_on_resource(principal, id, &input)
            .await
            .map_err(refusal)
    }

    async fn withdraw(&self, caller: &Parts, id: i64) -> Result<(), SsError> {
        let principal = principal(caller)?;
        self.service
            .withdraw(principal, id)
            .await
            .map(drop)
            .map_err(refusal)
    }

    async fn template_updates(&self, caller: &Parts) -> Result<Vec<TemplateUpdates>, SsError> {
        let principal = principal(caller)?;
        if !access::may_see_template_problems(principal.viewer.role) {
            return Err(SsError::NotFound);
        }
        let set = self.service.template_set().await;
        let mut out = Vec::new();
        for summary in self.service.templates_for(principal).await {
            let resources = self
                .service
                .template_updates(principal, &summary.id)
                .await
                .map_err(refusal)?;
            let Some(template) = set.get(&summary.id) else {
                continue;
            };
            if !resources.is_empty() {
                out.push(TemplateUpdates {
                    template: summary.id.clone(),
                    title: template.manifest().title.clone(),
                    version: template.version().to_owned(),
                    resources,
                });
            }
        }
        Ok(out)
    }

    async fn template_problems(&self, caller: &Parts) -> Result<Vec<Diagnostic>, SsError> {
        if !access::may_see_template_problems(principal(caller)?.viewer.role) {
            return Err(SsError::NotFound);
        }
        Ok(self.service.template_problems().await)
    }
}
