//! Self-service server functions: the templates a person may use, the form of one, the
//! preview of what a request would propose, submitting it, and following requests.
//!
//! They read and act through [`crate::ssr::SelfServiceData`], which the server implements on
//! its self-service layer; who may see or do what is decided there, never here.

use leptos::prelude::*;
pub use mirante_api_types::selfservice::{
    FileStatus, Preview, PreviewFile, RequestDetail, RequestFile, RequestSummary, TemplateSummary,
    TimelineEntry,
};
use mirante_domain::{
    Diagnostic,
    selfservice::{CatalogContext, FieldError, Localized, ParamType, TemplateManifest},
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A template with what its form needs: the parameters and the catalog's choices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TemplateForm {
    /// Its id, titles and approval.
    pub card: TemplateSummary,
    /// The parameters, access and target.
    pub manifest: TemplateManifest,
    /// Catalog-derived choices (GPU clusters with their capacity).
    pub catalog: CatalogContext,
    /// The GPUs each GPU cluster has free now (empty when they cannot be counted).
    #[serde(default)]
    pub capacity: Vec<GpuCapacity>,
}

/// One GPU cluster's GPUs: how many the catalog records, how many are free now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuCapacity {
    /// The catalog item's id.
    pub id: String,
    /// GPUs the catalog records.
    pub total: u64,
    /// `total − allocated` (negative when overcommitted).
    pub free: i64,
}

/// Why the portal refused values or a step; what the page shows instead of the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Refusal {
    /// Values the submitter must fix, each next to its field.
    Invalid(Vec<FieldError>),
    /// Not possible now (the target exists, the request moved on, the forge is down), or a
    /// missing comment: the message says why.
    Refused(String),
}

/// The preview page: the form (to correct or go back to) and the outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreviewPage {
    /// The template's form.
    pub form: TemplateForm,
    /// The values as submitted, JSON, for the submit button.
    pub values: String,
    /// The files, or why there are none.
    pub outcome: Result<Preview, Refusal>,
    /// The session's token for the submit form.
    pub csrf_token: String,
    /// The submit form's `Idempotency-Key`: submitting twice from this page (a second click,
    /// a retry) makes one request.
    pub request_key: String,
}

/// What the requests page shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestsPage {
    /// The requests shown, awaiting approval first, then newest first.
    pub rows: Vec<RequestSummary>,
    /// Whether the viewer sees everyone's requests (admins).
    pub all: bool,
    /// Each template's title in both languages, to name the requests in the reader's.
    #[serde(default)]
    pub titles: Vec<(String, Localized)>,
}

/// A request's page: the request, its values as the page lists them, and its template's words
/// (title and parameter titles in both languages) when the viewer may still see the template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestPageData {
    /// The request, as the JSON API answers it.
    pub request: RequestDetail,
    /// The values as the page lists them: by parameter name in the template's order; for a
    /// catalog change the item, each field from → to, and the reason.
    pub values: Vec<(String, Value)>,
    /// The template's title.
    pub title: Option<Localized>,
    /// Each parameter's title, by name.
    pub labels: Vec<(String, Localized)>,
    /// The session's token for the admin's forms (filled in by the server function).
    #[serde(default)]
    pub csrf_token: String,
}

/// A resource's page: the resource, whether the viewer may change it now, and what the
/// forms to update, extend or remove it need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourcePageData {
    /// The resource, as the JSON API answers it.
    pub resource: mirante_domain::resource::Resource,
    /// Whether the viewer may ask to update, extend or remove it now: its owner or an admin,
    /// and its files on the base branch.
    pub may_change: bool,
    /// The open request on its folder, if one is on its way (no second one is taken).
    pub open_request: Option<i64>,
    /// Its template's form, when the viewer may still use the template.
    pub form: Option<TemplateForm>,
    /// The values its files hold now, as form fields.
    pub fields: Vec<(String, String)>,
    /// The template version its files were rendered with.
    pub template_version: Option<String>,
    /// What its template renders differently now, if anything.
    pub update: Option<mirante_domain::resource::TemplateUpdate>,
    /// The session's token for the forms (filled in by the server function).
    #[serde(default)]
    pub csrf_token: String,
    /// The forms' `Idempotency-Key`: sending one twice makes one request.
    #[serde(default)]
    pub request_key: String,
}

/// One template's resources that its current version would change (the admins' list).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TemplateUpdates {
    /// The template's id.
    pub template: String,
    /// Its title.
    pub title: Localized,
    /// Its current version.
    pub version: String,
    /// Each resource with its update.
    pub resources: Vec<mirante_domain::resource::ResourceDetail>,
}

/// A day-two request's preview page: the resource, what was asked and what it would propose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourcePreviewPage {
    /// The resource's page data (its card, the template's form, the session's token and the
    /// submit form's idempotency key).
    pub page: ResourcePageData,
    /// `update`, `extend` or `remove`.
    pub kind: String,
    /// The values that change, as the form sent them.
    pub fields: Vec<(String, String)>,
    /// The files, or why there are none.
    pub outcome: Result<Preview, Refusal>,
}

/// Why a self-service operation did not happen, as the server's layer says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SsError {
    /// No such thing, or one the viewer may not see (never told apart).
    NotFound,
    /// Refused: values to fix, or not possible now.
    Refused(Refusal),
    /// Something broke on the server; the details are in its log.
    Internal(String),
}

impl From<SsError> for ServerFnError {
    fn from(e: SsError) -> Self {
        match e {
            SsError::NotFound => ServerFnError::new("not found"),
            SsError::Refused(Refusal::Refused(m)) => ServerFnError::new(m),
            SsError::Refused(Refusal::Invalid(errors)) => ServerFnError::new(
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            SsError::Internal(m) => ServerFnError::new(m),
        }
    }
}

/// The form's fields as JSON values for a template's parameters: numbers parsed, empty text
/// left out, array items one per line (or comma-separated), a missing checkbox `false`.
/// A number that does not parse stays text, so validation names the field.
pub fn values_from_fields(manifest: &TemplateManifest, fields: &[(String, String)]) -> Value {
    let mut out = Map::new();
    for p in &manifest.parameters {
        let raw = fields
            .iter()
            .rev()
            .find(|(k, _)| *k == p.name)
            .map(|(_, v)| v.as_str());
        let value = match (p.kind, raw) {
            (ParamType::Boolean, raw) => Some(Value::Bool(matches!(raw, Some("true" | "on")))),
            (_, None) => None,
            (ParamType::String, Some(s)) => (!s.is_empty()).then(|| Value::from(s)),
            (ParamType::Integer, Some(s)) => {
                let s = s.trim();
                (!s.is_empty()).then(|| {
                    s.parse::<i64>()
                        .map(Value::from)
                        .ok()
                        .or_else(|| {
                            s.parse::<f64>()
                                .ok()
                                .and_then(serde_json::Number::from_f64)
                                .map(Value::Number)
                        })
                        .unwrap_or_else(|| Value::from(s))
                })
            }
            (ParamType::Number, Some(s)) => {
                let s = s.trim();
                (!s.is_empty()).then(|| {
                    s.parse::<f64>()
                        .ok()
                        .and_then(serde_json::Number::from_f64)
                        .map_or_else(|| Value::from(s), Value::Number)
                })
            }
            (ParamType::Array, Some(s)) => {
                let items: Vec<Value> = s
                    .split(['\n', ','])
                    .map(str::trim)
                    .filter(|i| !i.is_empty())
                    .map(Value::from)
                    .collect();
                (!items.is_empty()).then_some(Value::Array(items))
            }
        };
        if let Some(v) = value {
            out.insert(p.name.clone(), v);
        }
    }
    Value::Object(out)
}

/// A value as a form field shows it: text as is, numbers in JSON, arrays one item per line.
pub fn field_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(field_text).collect::<Vec<_>>().join("\n"),
        other => other.to_string(),
    }
}

/// The fields a form starts with: the parameters' defaults, replaced by the fields in the
/// address (coming back from the preview, or a link that fills the form).
pub fn initial_fields(
    manifest: &TemplateManifest,
    query: &[(String, String)],
) -> Vec<(String, String)> {
    manifest
        .parameters
        .iter()
        .filter_map(|p| {
            let given = query.iter().rev().find(|(k, _)| *k == p.name);
            let value = match (given, &p.default) {
                (Some((_, v)), _) => v.clone(),
                (None, Some(d)) => field_text(d),
                (None, None) => return None,
            };
            Some((p.name.clone(), value))
        })
        .collect()
}

#[cfg(feature = "ssr")]
fn service() -> Result<(crate::ssr::SelfServiceHandle, http::request::Parts), ServerFnError> {
    let service = use_context::<crate::ssr::SelfServiceHandle>()
        .ok_or_else(|| ServerFnError::new("self-service is not available"))?;
    let parts =
        use_context::<http::request::Parts>().ok_or_else(|| ServerFnError::new("no request"))?;
    Ok((service, parts))
}

/// Each template's title in both languages (those the caller may use), for lists that name
/// requests by their template.
#[cfg(feature = "ssr")]
pub(crate) async fn template_titles(
    service: &crate::ssr::SelfServiceHandle,
    parts: &http::request::Parts,
) -> Vec<(String, Localized)> {
    service
        .templates(parts)
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|t| (t.id.clone(), t.localized_title()))
        .collect()
}

/// The session's CSRF token, for the forms a page renders.
#[cfg(feature = "ssr")]
pub(crate) fn csrf(parts: &http::request::Parts) -> String {
    parts
        .extensions
        .get::<mirante_domain::Viewer>()
        .map(|v| v.csrf_token.clone())
        .unwrap_or_default()
}

/// State-changing forms carry the session's CSRF token as well as passing the Origin check.
#[cfg(feature = "ssr")]
pub(crate) fn check_csrf(parts: &http::request::Parts, token: &str) -> Result<(), ServerFnError> {
    let viewer = parts.extensions.get::<mirante_domain::Viewer>();
    let same = |a: &str| {
        !a.is_empty()
            && bool::from(subtle::ConstantTimeEq::ct_eq(
                a.as_bytes(),
                token.as_bytes(),
            ))
    };
    if viewer.is_some_and(|v| same(&v.csrf_token)) {
        Ok(())
    } else {
        refuse_with(http::StatusCode::FORBIDDEN);
        Err(ServerFnError::new(
            "this form has expired or was not sent from your session; reload the page",
        ))
    }
}

/// Sets the status of the answer, page or server function alike: a refusal is a client's
/// error whichever way it was asked.
#[cfg(feature = "ssr")]
pub(crate) fn refuse_with(status: http::StatusCode) {
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        resp.set_status(status);
    }
}

/// Sets the status of the page being rendered (422 for refused values, …). Calls from the
/// hydrated page keep their 200: the browser's server-function client reads the answer's body.
#[cfg(feature = "ssr")]
pub(crate) fn set_status(status: http::StatusCode) {
    let page =
        use_context::<http::request::Parts>().is_some_and(|p| !p.uri.path().starts_with("/_fn/"));
    if let (true, Some(resp)) = (page, use_context::<leptos_axum::ResponseOptions>()) {
        resp.set_status(status);
    }
}

/// The templates the viewer may use.
#[server(prefix = "/_fn", endpoint = "templates")]
pub async fn list_templates() -> Result<Vec<TemplateSummary>, ServerFnError> {
    crate::ssr::authorize("templates")?;
    let (service, parts) = service()?;
    Ok(service.templates(&parts).await?)
}

/// A template's form; `None` when there is no such template for the viewer.
#[server(prefix = "/_fn", endpoint = "template")]
pub async fn get_template_form(id: String) -> Result<Option<TemplateForm>, ServerFnError> {
    crate::ssr::authorize("template")?;
    let (service, parts) = service()?;
    match service.template(&parts, &id).await {
        Ok(form) => Ok(Some(form)),
        Err(SsError::NotFound) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The GPUs of catalog item `id` if it is a GPU cluster: total and free now (signed in).
#[server(prefix = "/_fn", endpoint = "gpu_capacity")]
pub async fn get_gpu_capacity(id: String) -> Result<Option<GpuCapacity>, ServerFnError> {
    crate::ssr::authorize("gpu_capacity")?;
    let (service, parts) = service()?;
    let all = service.gpu_capacity(&parts).await?;
    Ok(all.into_iter().find(|c| c.id == id))
}

/// What the form's fields would propose; `None` when there is no such template. Refused
/// values answer 422 with every field's error. JSON in: the fields are pairs, in order.
#[server(prefix = "/_fn", endpoint = "preview", input = leptos::server_fn::codec::Json)]
pub async fn preview_request(
    template: String,
    fields: Vec<(String, String)>,
) -> Result<Option<PreviewPage>, ServerFnError> {
    crate::ssr::authorize("preview")?;
    let (service, parts) = service()?;
    let form = match service.template(&parts, &template).await {
        Ok(form) => form,
        Err(SsError::NotFound) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let values = values_from_fields(&form.manifest, &fields);
    let outcome = match service.preview(&parts, &template, values.clone()).await {
        Ok(p) => Ok(p),
        Err(SsError::Refused(r)) => {
            set_status(match r {
                Refusal::Invalid(_) => http::StatusCode::UNPROCESSABLE_ENTITY,
                Refusal::Refused(_) => http::StatusCode::CONFLICT,
            });
            Err(r)
        }
        Err(SsError::NotFound) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    Ok(Some(PreviewPage {
        form,
        values: values.to_string(),
        outcome,
        csrf_token: csrf(&parts),
        request_key: service.request_key(),
    }))
}

/// Submits a request with the values that were previewed, rendered at the preview's time
/// (`at`) so it holds exactly the previewed files, then goes to its page.
#[server(prefix = "/_fn", endpoint = "submit")]
pub async fn submit_request(
    template: String,
    values: String,
    at: Option<String>,
    csrf_token: String,
    request_key: Option<String>,
    #[server(default)] resubmits: Option<i64>,
) -> Result<Result<i64, Refusal>, ServerFnError> {
    crate::ssr::authorize("submit")?;
    let (service, parts) = service()?;
    check_csrf(&parts, &csrf_token)?;
    let values: Value = serde_json::from_str(&values)
        .map_err(|_| ServerFnError::new("the values are not valid JSON"))?;
    let at = at.filter(|a| !a.is_empty());
    let key = request_key.filter(|k| !k.is_empty());
    match service
        .submit(
            &parts,
            &template,
            values,
            at.as_deref(),
            key.as_deref(),
            resubmits,
        )
        .await
    {
        Ok(id) => {
            leptos_axum::redirect(&format!("/requests/{id}"));
            Ok(Ok(id))
        }
        Err(SsError::Refused(r)) => {
            set_status(http::StatusCode::UNPROCESSABLE_ENTITY);
            Ok(Err(r))
        }
        Err(e) => Err(e.into()),
    }
}

/// The requests the viewer may see (admins: all), optionally in one state; awaiting approval
/// first, then newest first.
#[server(prefix = "/_fn", endpoint = "requests")]
pub async fn list_requests(state: Option<String>) -> Result<RequestsPage, ServerFnError> {
    crate::ssr::authorize("requests")?;
    let (service, parts) = service()?;
    let all = parts
        .extensions
        .get::<mirante_domain::Viewer>()
        .is_some_and(|v| v.role == mirante_domain::Role::Admin);
    use mirante_domain::request::RequestState;
    let wanted = state.as_deref().and_then(RequestState::parse);
    let mut rows: Vec<RequestSummary> = service
        .requests(&parts)
        .await?
        .into_iter()
        .filter(|r| wanted.is_none_or(|s| r.state == s))
        .collect();
    // Stable: the service's newest-first order is kept within each group.
    rows.sort_by_key(|r| r.state != RequestState::AwaitingApproval);
    let titles = template_titles(&service, &parts).await;
    Ok(RequestsPage { rows, all, titles })
}

/// What the resources page shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourcesPage {
    /// The resources shown, newest first.
    pub rows: Vec<mirante_domain::resource::Resource>,
    /// Whether the viewer sees everyone's (admins).
    pub all: bool,
}

/// The resources the viewer may see.
#[server(prefix = "/_fn", endpoint = "resources")]
pub async fn list_resources() -> Result<ResourcesPage, ServerFnError> {
    crate::ssr::authorize("resources")?;
    let (service, parts) = service()?;
    let all = parts
        .extensions
        .get::<mirante_domain::Viewer>()
        .is_some_and(|v| v.role == mirante_domain::Role::Admin);
    let rows = service.resources(&parts).await?;
    Ok(ResourcesPage { rows, all })
}

/// A request's page; `None` when there is no such request for the viewer.
#[server(prefix = "/_fn", endpoint = "request")]
pub async fn get_request(id: i64) -> Result<Option<RequestPageData>, ServerFnError> {
    crate::ssr::authorize("request")?;
    let (service, parts) = service()?;
    match service.request(&parts, id).await {
        Ok(page) => Ok(Some(RequestPageData {
            csrf_token: csrf(&parts),
            ..page
        })),
        Err(SsError::NotFound) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// What request `id`'s pull request proposes; `None` when there is no such request for the
/// viewer. A refusal (no pull request yet, a hosted forge) is the page's error.
#[server(prefix = "/_fn", endpoint = "proposed_change")]
pub async fn get_proposed_change(
    id: i64,
) -> Result<Option<mirante_api_types::selfservice::ProposedChange>, ServerFnError> {
    crate::ssr::authorize("proposed_change")?;
    let (service, parts) = service()?;
    match service.proposed_change(&parts, id).await {
        Ok(change) => Ok(Some(change)),
        Err(SsError::NotFound) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A resource's page; `None` when there is no such resource for the viewer.
#[server(prefix = "/_fn", endpoint = "resource")]
pub async fn get_resource(id: i64) -> Result<Option<ResourcePageData>, ServerFnError> {
    crate::ssr::authorize("resource")?;
    let (service, parts) = service()?;
    match service.resource(&parts, id).await {
        Ok(page) => Ok(Some(ResourcePageData {
            csrf_token: csrf(&parts),
            request_key: service.request_key(),
            ..page
        })),
        Err(SsError::NotFound) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Asks to update (`kind` = `update`), extend or remove resource `id`: the form's
/// `values[<parameter>]` fields are the values that change. Goes to the new request's page;
/// answers why not, in the reader's language, when refused.
#[server(prefix = "/_fn", endpoint = "resource-request")]
pub async fn ask_on_resource(
    id: i64,
    kind: String,
    #[server(default)] values: std::collections::BTreeMap<String, String>,
    csrf_token: String,
    request_key: Option<String>,
) -> Result<Option<String>, ServerFnError> {
    crate::ssr::authorize("resource-request")?;
    let (service, parts) = service()?;
    check_csrf(&parts, &csrf_token)?;
    let Some(action) = mirante_domain::request::Action::parse(&kind) else {
        refuse_with(http::StatusCode::BAD_REQUEST);
        return Ok(Some(format!("`{kind}` is not update, extend or remove")));
    };
    let key = request_key.filter(|k| !k.is_empty());
    let fields: Vec<(String, String)> = values.into_iter().collect();
    match service
        .ask_on_resource(&parts, id, action, fields, key.as_deref())
        .await
    {
        Ok(new) => {
            leptos_axum::redirect(&format!("/requests/{new}"));
            Ok(None)
        }
        Err(e) => refused_text(&parts, e),
    }
}

/// What asking to update, extend or remove resource `id` with the form's fields would
/// propose; `None` when there is no such resource for the viewer. Refused values answer 422.
#[server(prefix = "/_fn", endpoint = "resource-preview", input = leptos::server_fn::codec::Json)]
pub async fn preview_resource_request(
    id: i64,
    kind: String,
    fields: Vec<(String, String)>,
) -> Result<Option<ResourcePreviewPage>, ServerFnError> {
    crate::ssr::authorize("resource-preview")?;
    let (service, parts) = service()?;
    let page = match service.resource(&parts, id).await {
        Ok(page) => ResourcePageData {
            csrf_token: csrf(&parts),
            request_key: service.request_key(),
            ..page
        },
        Err(SsError::NotFound) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let outcome = match mirante_domain::request::Action::parse(&kind) {
        Some(action) if action != mirante_domain::request::Action::Create => {
            match service
                .preview_on_resource(&parts, id, action, fields.clone())
                .await
            {
                Ok(p) => Ok(p),
                Err(SsError::Refused(r)) => {
                    set_status(match r {
                        Refusal::Invalid(_) => http::StatusCode::UNPROCESSABLE_ENTITY,
                        Refusal::Refused(_) => http::StatusCode::CONFLICT,
                    });
                    let lang = crate::i18n::from_headers(&parts.headers);
                    Err(match r {
                        Refusal::Invalid(errors) => Refusal::Refused(
                            errors
                                .iter()
                                .map(|e| crate::pages::selfservice::field_error_text(lang, e))
                                .collect::<Vec<_>>()
                                .join(" "),
                        ),
                        other => other,
                    })
                }
                Err(SsError::NotFound) => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
        _ => {
            set_status(http::StatusCode::BAD_REQUEST);
            Err(Refusal::Refused(format!(
                "`{kind}` is not update, extend or remove"
            )))
        }
    };
    Ok(Some(ResourcePreviewPage {
        page,
        kind,
        fields,
        outcome,
    }))
}

/// Withdraws a request not yet proposed (its author, or an admin).
#[server(prefix = "/_fn", endpoint = "withdraw")]
pub async fn withdraw_request(
    id: i64,
    csrf_token: String,
) -> Result<Option<String>, ServerFnError> {
    crate::ssr::authorize("withdraw")?;
    let (service, parts) = service()?;
    check_csrf(&parts, &csrf_token)?;
    let result = service.withdraw(&parts, id).await;
    acted(id, &parts, result)
}

/// What an admin decided, for the request page's buttons.
#[cfg(feature = "ssr")]
fn acted(
    id: i64,
    parts: &http::request::Parts,
    result: Result<(), SsError>,
) -> Result<Option<String>, ServerFnError> {
    match result {
        Ok(()) => {
            leptos_axum::redirect(&format!("/requests/{id}"));
            Ok(None)
        }
        Err(e) => refused_text(parts, e),
    }
}

/// Why a step was refused, in the reader's language, with the answer's status.
#[cfg(feature = "ssr")]
fn refused_text(
    parts: &http::request::Parts,
    error: SsError,
) -> Result<Option<String>, ServerFnError> {
    match error {
        SsError::Refused(Refusal::Invalid(errors)) => {
            // Values refused (GPUs beyond the cluster's free ones, say): in the reader's
            // language, with the numbers.
            let lang = crate::i18n::from_headers(&parts.headers);
            set_status(http::StatusCode::CONFLICT);
            Ok(Some(
                errors
                    .iter()
                    .map(|e| crate::pages::selfservice::field_error_text(lang, e))
                    .collect::<Vec<_>>()
                    .join(" "),
            ))
        }
        SsError::Refused(Refusal::Refused(m)) => {
            set_status(http::StatusCode::CONFLICT);
            Ok(Some(m))
        }
        SsError::NotFound => {
            set_status(http::StatusCode::NOT_FOUND);
            Ok(Some("not found".to_owned()))
        }
        e @ SsError::Internal(_) => Err(e.into()),
    }
}

/// Approves a request awaiting approval (admins). Answers why not, when refused.
#[server(prefix = "/_fn", endpoint = "approve")]
pub async fn approve_request(
    id: i64,
    comment: Option<String>,
    #[server(default)] overcommit_reason: Option<String>,
    csrf_token: String,
) -> Result<Option<String>, ServerFnError> {
    crate::ssr::authorize("approve")?;
    let (service, parts) = service()?;
    check_csrf(&parts, &csrf_token)?;
    let comment = comment.filter(|c| !c.trim().is_empty());
    let overcommit_reason = overcommit_reason.filter(|c| !c.trim().is_empty());
    let result = service
        .approve(&parts, id, comment, overcommit_reason)
        .await;
    acted(id, &parts, result)
}

/// Rejects a request awaiting approval (admins), with a comment saying why.
#[server(prefix = "/_fn", endpoint = "reject")]
pub async fn reject_request(
    id: i64,
    comment: String,
    csrf_token: String,
) -> Result<Option<String>, ServerFnError> {
    crate::ssr::authorize("reject")?;
    let (service, parts) = service()?;
    check_csrf(&parts, &csrf_token)?;
    {
        let result = service.reject(&parts, id, comment).await;
        acted(id, &parts, result)
    }
}

/// Merges a proposed request's pull request on the local forge (admins).
#[server(prefix = "/_fn", endpoint = "merge")]
pub async fn merge_request(id: i64, csrf_token: String) -> Result<Option<String>, ServerFnError> {
    crate::ssr::authorize("merge")?;
    let (service, parts) = service()?;
    check_csrf(&parts, &csrf_token)?;
    {
        let result = service.merge(&parts, id).await;
        acted(id, &parts, result)
    }
}

/// The resources each template's current version would change (admins).
#[server(prefix = "/_fn", endpoint = "template-updates")]
pub async fn list_template_updates() -> Result<Vec<TemplateUpdates>, ServerFnError> {
    crate::ssr::authorize("template-updates")?;
    let (service, parts) = service()?;
    Ok(service.template_updates(&parts).await?)
}

/// Templates that did not load, with file and line (admins).
#[server(prefix = "/_fn", endpoint = "template-problems")]
pub async fn list_template_problems() -> Result<Vec<Diagnostic>, ServerFnError> {
    crate::ssr::authorize("template-problems")?;
    let (service, parts) = service()?;
    Ok(service.template_problems(&parts).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> TemplateManifest {
        serde_json::from_value(serde_json::json!({
            "id": "t",
            "title": {"pt-BR": "T", "en": "T"},
            "description": {"pt-BR": "T", "en": "T"},
            "approval": "none",
            "target": "x/{{ name }}",
            "parameters": [
                {"name": "name", "type": "string", "title": {"pt-BR": "n", "en": "n"}},
                {"name": "gpus", "type": "integer", "title": {"pt-BR": "g", "en": "g"}, "default": 1},
                {"name": "ratio", "type": "number", "title": {"pt-BR": "r", "en": "r"}},
                {"name": "backup", "type": "boolean", "title": {"pt-BR": "b", "en": "b"}},
                {"name": "dbs", "type": "array", "items": {"type": "string"},
                 "title": {"pt-BR": "d", "en": "d"}}
            ]
        }))
        .expect("a manifest")
    }

    fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn form_fields_become_typed_values() {
        let v = values_from_fields(
            &manifest(),
            &fields(&[
                ("name", "ws"),
                ("gpus", " 2 "),
                ("ratio", "0.5"),
                ("backup", "true"),
                ("dbs", "app\nlogs, \n"),
                ("stray", "ignored"),
            ]),
        );
        assert_eq!(
            v,
            serde_json::json!({"name": "ws", "gpus": 2, "ratio": 0.5, "backup": true,
                               "dbs": ["app", "logs"]})
        );
    }

    #[test]
    fn empty_fields_are_left_out_and_a_missing_checkbox_is_false() {
        let v = values_from_fields(&manifest(), &fields(&[("name", ""), ("gpus", "")]));
        assert_eq!(v, serde_json::json!({"backup": false}));
    }

    #[test]
    fn a_number_that_does_not_parse_stays_text_for_validation_to_name() {
        let v = values_from_fields(&manifest(), &fields(&[("gpus", "two")]));
        assert_eq!(v["gpus"], serde_json::json!("two"));
    }

    #[test]
    fn a_form_starts_with_the_defaults_or_the_values_coming_back_from_the_preview() {
        let m = manifest();
        assert_eq!(initial_fields(&m, &[]), fields(&[("gpus", "1")]));
        let back = fields(&[("gpus", "2"), ("name", "ws"), ("lang", "en")]);
        assert_eq!(
            initial_fields(&m, &back),
            fields(&[("name", "ws"), ("gpus", "2")])
        );
    }
}
