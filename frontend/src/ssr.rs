//! What the UI needs from its host on the server side. The server crate implements
//! [`PortalData`] and [`SelfServiceData`] and provides them as Leptos context; server
//! functions read them from there.

use std::sync::Arc;

use http::request::Parts;
use mirante_domain::{
    Diagnostic, Snapshot,
    history::{CatalogHistory, NoHistory},
    lint::Finding,
};
use serde_json::Value;

use crate::api::dashboard::LiveChecks;
use crate::api::{
    catalog_change::CatalogChangePreview,
    selfservice::{
        GpuCapacity, Preview, RequestPageData, RequestSummary, ResourcePageData, SsError,
        TemplateForm, TemplateSummary, TemplateUpdates,
    },
};

/// Server-side data the UI reads.
pub trait PortalData: Send + Sync + 'static {
    /// The catalog snapshot in force now.
    fn snapshot(&self) -> Arc<Snapshot>;

    /// The consistency lint's findings on the catalog in force, errors first. May read the
    /// monorepo's files (IaC references), so server functions call it off the async runtime.
    fn findings(&self) -> Vec<Finding>;

    /// The catalog's history along the monorepo's base branch (cached by branch tip), or why
    /// there is none. Reads git when the branch moved, so server functions call it off the
    /// async runtime.
    fn history(&self) -> Result<Arc<CatalogHistory>, NoHistory>;
    /// The live checks' last run: how many, when, and those failing now.
    fn live_checks(&self) -> LiveChecks;
    /// Whether the request being served (`caller`) may call the server function at `path`
    /// (`/_fn/<endpoint>`), by the server's one access policy.
    fn may_call(&self, caller: &Parts, path: &str) -> bool;
}

/// Refuses unless the server's access policy lets the request being served call the server
/// function `endpoint`. Every server function asks this before it answers: while a page is
/// rendered on the server they run in-process, where no middleware sees them, so a page
/// reached under a weaker rule can never get data its viewer may not have.
pub fn authorize(endpoint: &str) -> Result<(), leptos::prelude::ServerFnError> {
    use leptos::prelude::{ServerFnError, use_context};
    let portal = use_context::<PortalHandle>()
        .ok_or_else(|| ServerFnError::new("portal data is not available"))?;
    let caller = use_context::<Parts>()
        .ok_or_else(|| ServerFnError::new("the request being served is not available"))?;
    if portal.may_call(&caller, &format!("/_fn/{endpoint}")) {
        Ok(())
    } else {
        crate::api::selfservice::refuse_with(http::StatusCode::FORBIDDEN);
        Err(ServerFnError::new(format!(
            "not allowed: /_fn/{endpoint} is not open to this viewer"
        )))
    }
}

/// The handle the server puts in Leptos context.
pub type PortalHandle = Arc<dyn PortalData>;

/// Self-service as the UI uses it: the server implements this on its self-service layer,
/// which applies every rule of who may see or do what. `caller` is the request being served;
/// the server finds who is asking in its extensions.
#[async_trait::async_trait]
pub trait SelfServiceData: Send + Sync + 'static {
    /// The templates the caller may use.
    async fn templates(&self, caller: &Parts) -> Result<Vec<TemplateSummary>, SsError>;
    /// A template the caller may use, with its form's parameters and catalog choices.
    async fn template(&self, caller: &Parts, id: &str) -> Result<TemplateForm, SsError>;
    /// What a request with these values would propose.
    async fn preview(
        &self,
        caller: &Parts,
        template: &str,
        values: Value,
    ) -> Result<Preview, SsError>;
    /// Stores a request with these values, rendered as the preview made `at` (RFC 3339) did;
    /// answers its id. A `key` used before by the caller with the same values answers the
    /// request it made. With `resubmits`, it makes that ended request again.
    async fn submit(
        &self,
        caller: &Parts,
        template: &str,
        values: Value,
        at: Option<&str>,
        key: Option<&str>,
        resubmits: Option<i64>,
    ) -> Result<i64, SsError>;
    /// A fresh idempotency key for a submit or propose form.
    fn request_key(&self) -> String;
    /// The requests the caller may see, newest first.
    async fn requests(&self, caller: &Parts) -> Result<Vec<RequestSummary>, SsError>;
    /// A request the caller may see, with its values as its page lists them and its
    /// template's words when the caller may still see the template; the session's token is
    /// left for the server function to fill in.
    async fn request(&self, caller: &Parts, id: i64) -> Result<RequestPageData, SsError>;
    /// What request `id`'s pull request proposes (its commits and each file's diff), for a
    /// caller who may see the request; refused with a hosted forge, whose page shows it.
    async fn proposed_change(
        &self,
        caller: &Parts,
        id: i64,
    ) -> Result<mirante_api_types::selfservice::ProposedChange, SsError>;
    /// The resources the caller may see (their own; an admin's all), newest first.
    async fn resources(
        &self,
        caller: &Parts,
    ) -> Result<Vec<mirante_domain::resource::Resource>, SsError>;
    /// A resource the caller may see, with what its page's forms need (the session's token
    /// and the idempotency key are left for the server function to fill in).
    async fn resource(&self, caller: &Parts, id: i64) -> Result<ResourcePageData, SsError>;
    /// Asks to update, extend or remove resource `id` with the form's `fields` (the values
    /// that change, by parameter name); answers the new request's id. `key` as for
    /// [`SelfServiceData::submit`].
    async fn ask_on_resource(
        &self,
        caller: &Parts,
        id: i64,
        action: mirante_domain::request::Action,
        fields: Vec<(String, String)>,
        key: Option<&str>,
    ) -> Result<i64, SsError>;
    /// What asking to update, extend or remove resource `id` with the form's `fields` would
    /// propose.
    async fn preview_on_resource(
        &self,
        caller: &Parts,
        id: i64,
        action: mirante_domain::request::Action,
        fields: Vec<(String, String)>,
    ) -> Result<Preview, SsError>;
    /// Withdraws a request not yet proposed (its author, or an admin).
    async fn withdraw(&self, caller: &Parts, id: i64) -> Result<(), SsError>;
    /// Approves a request awaiting approval; with `overcommit_reason`, also beyond the free
    /// GPUs of its cluster.
    async fn approve(
        &self,
        caller: &Parts,
        id: i64,
        comment: Option<String>,
        overcommit_reason: Option<String>,
    ) -> Result<(), SsError>;
    /// Rejects a request awaiting approval, with a comment.
    async fn reject(&self, caller: &Parts, id: i64, comment: String) -> Result<(), SsError>;
    /// Merges a proposed request's pull request (local forge).
    async fn merge(&self, caller: &Parts, id: i64) -> Result<(), SsError>;
    /// Every GPU cluster's GPUs, total and free now.
    async fn gpu_capacity(&self, caller: &Parts) -> Result<Vec<GpuCapacity>, SsError>;
    /// Each template whose current version would change resources, with them (admins).
    async fn template_updates(&self, caller: &Parts) -> Result<Vec<TemplateUpdates>, SsError>;
    /// Templates that did not load, with file and line.
    async fn template_problems(&self, caller: &Parts) -> Result<Vec<Diagnostic>, SsError>;
    /// What a change of item `item` (the API's JSON input) would propose (admins).
    async fn preview_catalog_change(
        &self,
        caller: &Parts,
        item: &str,
        input: Value,
    ) -> Result<CatalogChangePreview, SsError>;
    /// Proposes a change of item `item` (admins); answers the request's id; `key` as for
    /// [`SelfServiceData::submit`].
    async fn submit_catalog_change(
        &self,
        caller: &Parts,
        item: &str,
        input: Value,
        key: Option<&str>,
    ) -> Result<i64, SsError>;
}

/// The self-service handle the server puts in Leptos context.
pub type SelfServiceHandle = Arc<dyn SelfServiceData>;
