//! The self-service operations, in one place for every caller: the JSON API
//! (`http::api::selfservice`) and the web UI's server functions call these and nothing below
//! them.
//!
//! Each operation takes the [`Principal`] making it and applies the object-level rules of
//! `mirante_domain::access` itself (who may use a template, see a request, decide or merge), so a new
//! caller cannot forget them. Results are plain serialisable types, the same ones the API
//! answers with.
//!
//! | operation | who | what |
//! |---|---|---|
//! | [`SelfService::templates_for`] | signed in | the templates the caller may use |
//! | [`SelfService::template_for`] | signed in | one of them with its parameters |
//! | [`SelfService::preview`] | signed in | render, check, and diff every file against the base branch |
//! | [`SelfService::submit`] | signed in | the same checks, then store the request and queue it |
//! | [`SelfService::list_requests`] | signed in | researchers: their own; admins: all |
//! | [`SelfService::request`] | owner or admin | state, timeline, files, pull request, last error |
//! | [`SelfService::proposed_change`] | owner or admin, local forge | what the request's branch proposes: its commits and each file's diff, open, merged or closed |
//! | [`SelfService::approve`] / [`SelfService::reject`] | admin | decide a request awaiting approval |
//! | [`SelfService::merge`] | admin, local forge | merge the pull request; reload the catalog |
//! | [`SelfService::resources`] / [`SelfService::resource`] | owner or admin | what the requests made, checked on the base branch |
//! | [`SelfService::ask_on_resource`] / [`SelfService::resource_now`] | owner or admin | update, extend or remove a resource: a request of its own on the same folder |
//! | [`SelfService::withdraw`] | author or admin | take back a request not yet proposed |
//! | [`SelfService::resubmit`] | author or admin | make an ended request (rejected, withdrawn, failed) again with changed values |
//! | [`SelfService::resource_detail`] / [`SelfService::template_updates`] | owner or admin / admin | the update a changed template offers a resource: its files rendered again, diffed against the base branch |
//! | [`SelfService::follow_webhook`] | a verified forge webhook | move a request to merged / closed |
//! | [`SelfService::preview_catalog_change`] / [`SelfService::submit_catalog_change`] | admin | an item's state, qualifier and evidence changed in its catalog file, proposed with no approval step |

mod catalog_change;
mod day_two;
mod diff;
mod dto;
mod error;
mod proposed;
mod resources;
mod templates;
mod upgrade;

pub use day_two::ResourceNow;
pub use diff::unified_diff;
pub use dto::*;
pub use error::ServiceError;
use error::forge_error;
use templates::Templates;
pub use templates::{MONOREPO_TEMPLATES_MAX_BYTES, MONOREPO_TEMPLATES_MAX_FILES};

use std::sync::Arc;

use chrono::{DateTime, Utc};
use mirante_domain::access::{self, Principal};
use mirante_domain::capacity::{Claim, Cluster, ClusterCapacity, OverAsk, Workspace, ledger};
use mirante_domain::selfservice::{CatalogContext, TemplateManifest};
use mirante_domain::{
    Diagnostic,
    request::{self, RequestEvent, RequestState},
    selfservice::Approval,
};
use serde_json::Value;

use crate::adapters::db::requests::Acting;
use crate::adapters::db::requests::Author;
use crate::adapters::db::requests::CapacityGuard;
use crate::adapters::db::requests::Change;
use crate::adapters::db::requests::Idempotency;
use crate::adapters::db::requests::NewRequest;
use crate::adapters::db::requests::RequestKind;
use crate::adapters::db::requests::RequestRecord;
use crate::adapters::db::requests::TransitionError;
use crate::adapters::forge::DirLimits;
use crate::adapters::forge::FileChange;
use crate::adapters::forge::Forge;
use crate::adapters::forge::ForgeKind;
use crate::adapters::forge::MergeStyle;
use crate::adapters::forge::WebhookEvent;
use crate::app::selfservice::capacity;
use crate::app::selfservice::deployments::Follower;
use crate::app::selfservice::template::RenderContext;
use crate::app::selfservice::template::RenderError;
use crate::app::selfservice::template::Rendered;
use crate::app::selfservice::template::Requester;
use crate::app::selfservice::template::TemplateSet;
use crate::app::selfservice::worker;
use crate::app::selfservice::worker::Worker;
use crate::{
    adapters::db::{Db, NewAuditEntry},
    app::catalog::{CatalogSource, CatalogStore, ReloadTrigger},
};

pub use crate::app::catalog_change::{
    CATALOG_CHANGE, CatalogChangeInput, CatalogChangePreview, ItemFields, content_sha256,
};

/// How far back a submission may pin its render time to a preview's.
const PREVIEW_VALID_FOR: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// The time to render a request for: the preview's `at` when recent, else now.
fn render_time(at: Option<DateTime<Utc>>) -> Result<DateTime<Utc>, ServiceError> {
    let now = Utc::now();
    match at {
        None => Ok(now),
        Some(at) if at <= now + chrono::TimeDelta::minutes(1) && now - at <= PREVIEW_VALID_FOR => {
            Ok(at)
        }
        Some(_) => Err(ServiceError::BadRequest(
            "`at` must be the time of a preview made in the last 24 hours; preview again"
                .to_owned(),
        )),
    }
}

/// A request about to be stored (see [`SelfService::store`]).
pub(crate) struct Draft<'a> {
    pub(crate) kind: RequestKind,
    pub(crate) template: &'a str,
    pub(crate) title: &'a str,
    pub(crate) values: &'a serde_json::Value,
    pub(crate) files: &'a [FileChange],
    pub(crate) target: &'a str,
    pub(crate) slug: &'a str,
    pub(crate) needs_approval: bool,
    /// What was asked, for the idempotency check (see [`fingerprint`]).
    pub(crate) fingerprint: String,
    /// What it does to its resource.
    pub(crate) acting: Acting<'a>,
}

/// What a creating call did: the request, and whether an earlier call with the same
/// `Idempotency-Key` made it (then nothing new was stored).
#[derive(Debug)]
pub struct Submitted {
    /// The request.
    pub detail: RequestDetail,
    /// Whether it was made by an earlier call.
    pub replayed: bool,
}

/// Whether `r` can be made again: a template request that ended without a merge.
pub(crate) fn resubmittable(r: &RequestRecord) -> bool {
    r.kind == RequestKind::Template
        && matches!(
            r.state,
            RequestState::Rejected | RequestState::Closed | RequestState::Failed
        )
}

/// The fingerprint of a creating call's input, kept with its idempotency key.
pub(crate) fn fingerprint(input: &serde_json::Value) -> String {
    crate::app::catalog_change::content_sha256(&input.to_string())
}

/// The self-service operations.
pub struct SelfService {
    db: Db,
    catalog: Arc<CatalogStore>,
    templates: Templates,
    worker: Arc<Worker>,
    base_branch: String,
    /// The catalog's folder in the monorepo, where catalog changes are proposed.
    catalog_folder: String,
    /// Follows merged resources in Argo CD, when it is configured.
    follower: Option<Arc<Follower>>,
    /// Whether an admin may approve and merge their own requests (the four-eyes rule off).
    self_approval: bool,
}

/// The most files the monorepo's catalog folder may hold when a hosted forge reads it.
pub const MONOREPO_CATALOG_MAX_FILES: usize = 2000;
/// The most bytes the monorepo's catalog folder may hold when a hosted forge reads it.
pub const MONOREPO_CATALOG_MAX_BYTES: u64 = 32 << 20;

impl std::fmt::Debug for SelfService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelfService")
            .field("templates", &self.last_template_set().templates().len())
            .field("worker", &self.worker)
            .finish_non_exhaustive()
    }
}

impl SelfService {
    /// The service over the database, the catalog in force, the templates and the worker
    /// (which holds the forge).
    pub fn new(
        db: Db,
        catalog: Arc<CatalogStore>,
        templates: Arc<TemplateSet>,
        worker: Arc<Worker>,
    ) -> Self {
        let base_branch = worker.settings().base_branch.clone();
        SelfService {
            db,
            catalog,
            templates: Templates::builtin(templates),
            worker,
            base_branch,
            catalog_folder: "catalog".to_owned(),
            follower: None,
            self_approval: false,
        }
    }

    /// Lets admins approve and merge their own requests (`MIRANTE_ALLOW_SELF_APPROVAL`).
    pub fn with_self_approval(mut self, allowed: bool) -> Self {
        self.self_approval = allowed;
        self
    }

    /// Follows merged resources past the merge with `follower` (Argo CD is configured).
    pub fn with_follower(mut self, follower: Arc<Follower>) -> Self {
        self.follower = Some(follower);
        self
    }

    /// Proposes catalog changes against the monorepo's folder `folder` (default `catalog`).
    pub fn with_catalog_folder(mut self, folder: String) -> Self {
        self.catalog_folder = folder;
        self
    }

    /// Also offers the templates of the monorepo's folder `folder` on the base branch, read
    /// through the forge again whenever the branch moves.
    pub fn with_monorepo_templates(mut self, folder: String) -> Self {
        self.templates.folder = Some(folder);
        self
    }

    /// Changes how much the monorepo's template folder may hold.
    pub fn with_monorepo_template_limits(mut self, limits: DirLimits) -> Self {
        self.templates.limits = limits;
        self
    }

    /// The forge requests are proposed on.
    pub fn forge(&self) -> &Arc<dyn Forge> {
        self.worker.forge()
    }

    /// The proposing worker.
    pub fn worker(&self) -> &Arc<Worker> {
        &self.worker
    }

    /// The templates loaded (and, through [`TemplateSet::problems`], those that did not), as
    /// they stand on the base branch now.
    pub async fn template_set(&self) -> Arc<TemplateSet> {
        let read = self
            .templates
            .at_tip(self.forge().as_ref(), &self.base_branch)
            .await;
        Arc::clone(&read.set)
    }

    /// The templates as last read, without asking the forge (for ordering a request's values).
    pub fn last_template_set(&self) -> Arc<TemplateSet> {
        Arc::clone(&self.templates.current.load().set)
    }

    /// What keeps templates from being offered: every template left out, with file, line and
    /// column, and first, when the monorepo's folder could not be read, why (the last good
    /// templates are offered meanwhile).
    pub async fn template_problems(&self) -> Vec<Diagnostic> {
        let read = self
            .templates
            .at_tip(self.forge().as_ref(), &self.base_branch)
            .await;
        read.failure
            .iter()
            .chain(read.set.problems())
            .cloned()
            .collect()
    }

    /// The templates `principal` may use, by id.
    pub async fn templates_for(&self, principal: &Principal) -> Vec<TemplateSummary> {
        self.template_set()
            .await
            .templates()
            .iter()
            .map(|t| t.manifest())
            .filter(|m| access::may_use_template(&principal.viewer, &m.access))
            .map(TemplateSummary::of)
            .collect()
    }

    /// One template `principal` may use; a template they may not use does not exist for them.
    pub async fn template_for(
        &self,
        principal: &Principal,
        id: &str,
    ) -> Result<TemplateDetail, ServiceError> {
        let set = self.template_set().await;
        let template = set
            .get(id)
            .filter(|t| access::may_use_template(&principal.viewer, &t.manifest().access))
            .ok_or_else(|| ServiceError::NotFound(format!("no template `{id}`")))?;
        Ok(TemplateDetail {
            summary: TemplateSummary::of(template.manifest()),
            manifest: template.manifest().clone(),
        })
    }

    /// Validates and renders `values` with template `id` (one `principal` may use) for `at`;
    /// the rendered files and the template's manifest.
    pub(crate) async fn render_values(
        &self,
        principal: &Principal,
        id: &str,
        values: &Value,
        at: DateTime<Utc>,
    ) -> Result<(Rendered, TemplateManifest), ServiceError> {
        self.render_values_for(principal, None, id, values, at)
            .await
    }

    /// [`SelfService::render_values`], with `requester` (the person a resource's files name,
    /// when not the caller: its owner, for an admin's update) in the files' requester fields.
    pub(crate) async fn render_values_for(
        &self,
        principal: &Principal,
        requester: Option<&Author>,
        id: &str,
        values: &Value,
        at: DateTime<Utc>,
    ) -> Result<(Rendered, TemplateManifest), ServiceError> {
        let set = self.template_set().await;
        let template = set
            .get(id)
            .filter(|t| access::may_use_template(&principal.viewer, &t.manifest().access))
            .ok_or_else(|| ServiceError::NotFound(format!("no template `{id}`")))?;
        let snapshot = self.catalog.current().snapshot.clone();
        let viewer = &principal.viewer;
        let ctx = RenderContext {
            catalog: &snapshot,
            requester: match requester {
                Some(a) => Requester {
                    username: a.username.clone(),
                    name: a.name.clone(),
                    email: a.email.clone(),
                },
                None => Requester {
                    username: viewer.username.clone(),
                    name: viewer.name.clone(),
                    email: viewer.email.clone(),
                },
            },
            now: at,
            namespaces: if uses_own_namespaces(template.manifest()) {
                self.own_namespaces(principal).await?
            } else {
                None
            },
        };
        let rendered = template.render(values, &ctx).map_err(|e| match e {
            RenderError::Invalid(fields) => ServiceError::Invalid(fields),
            RenderError::Template(m) => {
                ServiceError::Internal(anyhow::anyhow!("template `{id}` is broken: {m}"))
            }
        })?;
        Ok((rendered, template.manifest().clone()))
    }

    /// Validates and renders, then checks against the monorepo: the target directory must
    /// not exist on the base branch.
    async fn render(
        &self,
        principal: &Principal,
        input: &RequestInput,
    ) -> Result<(Rendered, bool, String), ServiceError> {
        let (rendered, manifest) = self
            .render_values(
                principal,
                &input.template,
                &input.values,
                render_time(input.at)?,
            )
            .await?;
        if self
            .forge()
            .path_exists(&self.base_branch, &rendered.target)
            .await
            .map_err(forge_error)?
        {
            return Err(ServiceError::Conflict(format!(
                "the target directory `{}` already exists on `{}`",
                rendered.target, self.base_branch
            )));
        }
        if let Some((cluster, gpus)) = capacity::gpu_parameters(&manifest)
            && let (Some(Value::String(id)), Some(asked)) = (
                rendered.values.get(cluster),
                rendered.values.get(gpus).and_then(Value::as_u64),
            )
        {
            let ledger = self.capacity().await?;
            if let Some(c) = ledger.iter().find(|c| c.id == *id)
                && let Err(refused) = c.check(asked)
            {
                return Err(ServiceError::Invalid(vec![refused.field_error(gpus)]));
            }
        }
        Ok((
            rendered,
            manifest.approval == Approval::Required,
            manifest.title.en.clone(),
        ))
    }

    /// The GPU capacity ledger of every GPU cluster of the catalog in force (anyone signed in):
    /// workspaces on the base branch, read from their files, plus the requests not merged.
    pub async fn capacity(&self) -> Result<Vec<ClusterCapacity>, ServiceError> {
        let (clusters, workspaces) = self.capacity_on_base().await?;
        let set = self.template_set().await;
        let open = self.db.open_requests().await?;
        let mut claims: Vec<Claim> = open
            .iter()
            .filter_map(|r| capacity::claim_of(r, &set))
            .collect();
        claims.extend(self.removing_claims(&open, &set).await?);
        Ok(ledger(&clusters, &workspaces, &claims))
    }

    /// The GPUs of resources whose removal is merged while Argo CD still has the Application
    /// that runs them (or has not been asked yet): each as the claim of the request that last
    /// wrote the folder, held by the removal at stage `removing`. None when deployments are
    /// not followed: then a merged removal frees its GPUs at once.
    async fn removing_claims(
        &self,
        open: &[RequestRecord],
        set: &TemplateSet,
    ) -> Result<Vec<Claim>, ServiceError> {
        if self.follower.is_none() {
            return Ok(Vec::new());
        }
        let removals: Vec<&RequestRecord> = open
            .iter()
            .filter(|r| r.state == RequestState::Merged && r.action == request::Action::Remove)
            .collect();
        if removals.is_empty() {
            return Ok(Vec::new());
        }
        let removed: std::collections::HashSet<i64> = self
            .db
            .deployments(None)
            .await?
            .into_iter()
            .filter(|d| d.removal && d.state == mirante_domain::resource::ResourceState::Removed)
            .map(|d| d.request_id)
            .collect();
        Ok(capacity::removing_claims(&removals, open, set, |id| {
            removed.contains(&id)
        }))
    }

    /// The GPU clusters of the catalog in force and their workspaces on the base branch.
    async fn capacity_on_base(&self) -> Result<(Vec<Cluster>, Vec<Workspace>), ServiceError> {
        let snapshot = self.catalog.current().snapshot.clone();
        let context = CatalogContext::from_snapshot(&snapshot);
        let clusters = capacity::clusters(&context);
        let mut workspaces = Vec::new();
        if clusters.is_empty() {
            return Ok((clusters, workspaces));
        }
        let Some(head) = self
            .forge()
            .branch_head(&self.base_branch)
            .await
            .map_err(forge_error)?
        else {
            return Ok((clusters, workspaces));
        };
        for cluster in &context.gpu_clusters {
            workspaces.extend(
                capacity::workspaces_on(self.forge().as_ref(), &head, cluster)
                    .await
                    .map_err(forge_error)?,
            );
        }
        Ok((clusters, workspaces))
    }

    /// Every file a submission would propose, with a diff against the base branch.
    pub async fn preview(
        &self,
        principal: &Principal,
        input: &RequestInput,
    ) -> Result<Preview, ServiceError> {
        let at = render_time(input.at)?;
        let input = &RequestInput {
            at: Some(at),
            ..input.clone()
        };
        let (rendered, needs_approval, _) = self.render(principal, input).await?;
        let mut files = Vec::with_capacity(rendered.files.len());
        for file in &rendered.files {
            let old = self
                .forge()
                .read_file(&self.base_branch, &file.path)
                .await
                .map_err(forge_error)?;
            let status = match &old {
                None => FileStatus::Added,
                Some(o) if *o == file.content => FileStatus::Unchanged,
                Some(_) => FileStatus::Modified,
            };
            files.push(PreviewFile {
                path: file.path.clone(),
                content: file.content.clone(),
                status,
                diff: unified_diff(&file.path, old.as_deref(), &file.content),
            });
        }
        Ok(Preview {
            template: rendered.template,
            target: rendered.target,
            slug: rendered.slug,
            values: rendered.values,
            base: self.base_branch.clone(),
            needs_approval,
            files,
            at,
        })
    }

    /// Renders and checks as [`Self::preview`] does, then stores the request (awaiting
    /// approval, or queued for the worker) and audits `request.submit`.
    pub async fn submit(
        &self,
        principal: &Principal,
        input: &RequestInput,
        key: Option<&str>,
    ) -> Result<Submitted, ServiceError> {
        self.submit_linked(principal, input, key, None).await
    }

    /// [`SelfService::submit`], recording the ended request it makes again (`resubmits`).
    pub(crate) async fn submit_linked(
        &self,
        principal: &Principal,
        input: &RequestInput,
        key: Option<&str>,
        resubmits: Option<i64>,
    ) -> Result<Submitted, ServiceError> {
        let (rendered, needs_approval, title) = self.render(principal, input).await?;
        let mut asked = serde_json::json!({
            "template": input.template,
            "values": input.values,
        });
        if let Some(old) = resubmits {
            asked["resubmits"] = old.into();
        }
        let values = serde_json::Value::Object(rendered.values.clone());
        self.store(
            principal,
            Draft {
                kind: RequestKind::Template,
                template: &rendered.template,
                title: &title,
                values: &values,
                files: &rendered.files,
                target: &rendered.target,
                slug: &rendered.slug,
                needs_approval,
                fingerprint: fingerprint(&asked),
                acting: Acting {
                    resubmits,
                    template_version: Some(&rendered.version),
                    ..Acting::CREATE
                },
            },
            key,
            |record| {
                serde_json::json!({
                    "template": record.template,
                    "target": record.target,
                    "state": record.state,
                    "files": record.files.len(),
                    "resubmits": record.resubmits,
                })
            },
        )
        .await
    }

    /// Stores `draft` as a request of `principal`'s — or answers the request an earlier POST
    /// with the same idempotency `key` made — then audits `request.submit` with `audit`'s
    /// details and wakes the worker when nothing waits for an admin. Every kind of request is
    /// stored through here.
    pub(crate) async fn store(
        &self,
        principal: &Principal,
        draft: Draft<'_>,
        key: Option<&str>,
        audit: impl FnOnce(&RequestRecord) -> serde_json::Value,
    ) -> Result<Submitted, ServiceError> {
        let viewer = &principal.viewer;
        let author = Author {
            user_id: principal.user_id,
            username: viewer.username.clone(),
            name: viewer.name.clone(),
            email: viewer.email.clone(),
        };
        let created = self
            .db
            .create_request_acting(
                draft.kind,
                draft.acting,
                &NewRequest {
                    template: draft.template,
                    template_title: draft.title,
                    values: draft.values,
                    files: draft.files,
                    target: draft.target,
                    slug: draft.slug,
                    author: &author,
                    needs_approval: draft.needs_approval,
                    at: Utc::now(),
                    idempotency: key.map(|key| Idempotency {
                        key,
                        fingerprint: &draft.fingerprint,
                    }),
                },
            )
            .await?;
        let record = created.request;
        if !created.replayed {
            self.audit(
                &viewer.username,
                "request.submit",
                record.id,
                audit(&record),
            )
            .await;
            if !draft.needs_approval {
                self.worker.wake();
            }
        }
        Ok(Submitted {
            detail: self.detail(principal, record).await?,
            replayed: created.replayed,
        })
    }

    /// Requests the caller may see, newest first: researchers their own, admins everyone's.
    pub async fn list_requests(
        &self,
        principal: &Principal,
    ) -> Result<Vec<RequestSummary>, ServiceError> {
        let author = (!access::sees_all_requests(&principal.viewer)).then_some(principal.user_id);
        let rows = self.db.list_requests(author, 500).await?;
        Ok(rows.iter().map(request_summary).collect())
    }

    async fn visible(&self, principal: &Principal, id: i64) -> Result<RequestRecord, ServiceError> {
        self.db
            .request(id)
            .await?
            .filter(|r| {
                access::may_view_request(principal.user_id, &principal.viewer, r.author.user_id)
            })
            .ok_or_else(|| ServiceError::NotFound(format!("no request {id}")))
    }

    async fn detail(
        &self,
        principal: &Principal,
        r: RequestRecord,
    ) -> Result<RequestDetail, ServiceError> {
        let timeline = self.db.transitions(r.id).await?;
        let resource = self.resource_of_request(&r).await?;
        let resubmitted_as = if resubmittable(&r) {
            self.db.resubmission_of(r.id).await?
        } else {
            None
        };
        let viewer = &principal.viewer;
        let own_allowed =
            access::four_eyes_allow(principal.user_id, r.author.user_id, self.self_approval);
        Ok(RequestDetail {
            summary: request_summary(&r),
            values: r.values.clone(),
            files: r
                .files
                .iter()
                .map(|f| RequestFile {
                    path: f.path.clone(),
                    content: f.content.clone(),
                })
                .collect(),
            removed: r.removed.clone(),
            branch: r.branch.clone(),
            needs_approval: r.needs_approval,
            decided_by: r.decided_by.clone(),
            decision_comment: r.decision_comment.clone(),
            overcommit_reason: r.overcommit_reason.clone(),
            last_error: r.last_error.clone(),
            attempts: r.attempts,
            timeline: timeline.into_iter().map(timeline_entry).collect(),
            can_decide: access::may_decide_request(viewer)
                && own_allowed
                && mirante_domain::request::awaits_decision(r.state),
            can_merge: access::may_merge_request(viewer)
                && own_allowed
                && r.state == RequestState::Proposed
                && self.forge().kind() == ForgeKind::Local,
            can_withdraw: access::may_withdraw_request(principal, r.author.user_id)
                && (request::transition(r.state, RequestEvent::Withdraw).is_ok()
                    || (r.state == RequestState::Proposed && r.pr_number.is_some())),
            can_resubmit: access::may_withdraw_request(principal, r.author.user_id)
                && resubmittable(&r)
                && resubmitted_as.is_none(),
            resubmitted_as,
            another_admin_decides: access::may_decide_request(viewer)
                && !own_allowed
                && (mirante_domain::request::awaits_decision(r.state)
                    || (r.state == RequestState::Proposed
                        && self.forge().kind() == ForgeKind::Local)),
            resource,
        })
    }

    /// A request with its timeline; others' requests do not exist for a researcher.
    pub async fn request(
        &self,
        principal: &Principal,
        id: i64,
    ) -> Result<RequestDetail, ServiceError> {
        let r = self.visible(principal, id).await?;
        self.detail(principal, r).await
    }

    /// Approves a request awaiting approval (admins); the worker proposes it next.
    ///
    /// A request asking for GPUs is checked against its cluster's free GPUs again, in the
    /// transaction of the approval (see [`Db::transition_request_guarded`]), so two approvals
    /// can never hand out the same GPU; with an `overcommit_reason` the admin approves beyond
    /// them, and the reason goes to the timeline and the pull request.
    pub async fn approve(
        &self,
        principal: &Principal,
        id: i64,
        comment: Option<&str>,
        overcommit_reason: Option<&str>,
    ) -> Result<RequestDetail, ServiceError> {
        let comment = comment.map(str::trim).filter(|c| !c.is_empty());
        let overcommit_reason = overcommit_reason.map(str::trim).filter(|c| !c.is_empty());
        self.decide(
            principal,
            id,
            RequestEvent::Approve,
            comment,
            overcommit_reason,
        )
        .await
    }

    /// Rejects a request awaiting approval (admins), with a comment saying why.
    pub async fn reject(
        &self,
        principal: &Principal,
        id: i64,
        comment: &str,
    ) -> Result<RequestDetail, ServiceError> {
        let comment = comment.trim();
        if comment.is_empty() {
            return Err(ServiceError::BadRequest(
                "a rejection needs a comment saying why".to_owned(),
            ));
        }
        self.decide(principal, id, RequestEvent::Reject, Some(comment), None)
            .await
    }

    async fn decide(
        &self,
        principal: &Principal,
        id: i64,
        event: RequestEvent,
        comment: Option<&str>,
        overcommit_reason: Option<&str>,
    ) -> Result<RequestDetail, ServiceError> {
        let r = self.visible(principal, id).await?;
        if !access::may_decide_request(&principal.viewer) {
            return Err(ServiceError::Forbidden(
                "only admins approve or reject requests".to_owned(),
            ));
        }
        if event == RequestEvent::Approve
            && !access::four_eyes_allow(principal.user_id, r.author.user_id, self.self_approval)
        {
            return Err(ServiceError::Forbidden(
                access::FOUR_EYES_REFUSAL.to_owned(),
            ));
        }
        let comment = comment.map(|c| c.chars().take(2000).collect::<String>());
        let overcommit_reason = overcommit_reason.map(|c| c.chars().take(2000).collect::<String>());
        let actor = principal.viewer.username.clone();
        let set = self.template_set().await;
        // The capacity check, unless the admin overcommits on purpose: the workspaces on the
        // base branch are read first, the requests inside the approval's transaction.
        let claim = capacity::claim_of(&r, &set).filter(|_| event == RequestEvent::Approve);
        let guarded = match (&claim, &overcommit_reason) {
            (Some(claim), None) => {
                let (clusters, workspaces) = self.capacity_on_base().await?;
                // Removals only ever finish: read before the transaction, they hold at least
                // what they hold when it runs.
                let open = self.db.open_requests().await?;
                let removing = self.removing_claims(&open, &set).await?;
                Some((claim.clone(), clusters, workspaces, removing))
            }
            _ => None,
        };
        let check = |open: &[RequestRecord]| -> Result<(), OverAsk> {
            let Some((claim, clusters, workspaces, removing)) = &guarded else {
                return Ok(());
            };
            let claims: Vec<Claim> = open
                .iter()
                .filter(|o| o.id != claim.request)
                .filter_map(|o| capacity::claim_of(o, &set))
                .chain(removing.iter().cloned())
                .collect();
            // A request on a resource that exists (an update) asks only for what it adds to
            // the GPUs its folder holds on the base branch.
            let held: u64 = workspaces
                .iter()
                .filter(|w| w.target == claim.target)
                .map(|w| w.gpus)
                .sum();
            let more = claim.gpus.saturating_sub(held);
            if more == 0 {
                return Ok(());
            }
            ledger(clusters, workspaces, &claims)
                .iter()
                .find(|c| c.id == claim.cluster)
                .map_or(Ok(()), |c| c.check(more))
        };
        let guard = guarded.as_ref().map(|(claim, ..)| CapacityGuard {
            lock: &claim.cluster,
            check: &check,
        });
        let updated = self
            .db
            .transition_request_guarded(
                r.id,
                event,
                &Change {
                    actor: &actor,
                    comment: comment.as_deref(),
                    overcommit_reason: overcommit_reason
                        .as_deref()
                        .filter(|_| event == RequestEvent::Approve),
                    ..Change::default()
                },
                Utc::now(),
                guard.as_ref(),
            )
            .await?;
        let action = if event == RequestEvent::Approve {
            "request.approve"
        } else {
            "request.reject"
        };
        self.audit(
            &actor,
            action,
            r.id,
            serde_json::json!({
                "comment": comment,
                "template": r.template,
                "overcommit_reason": overcommit_reason,
            }),
        )
        .await;
        if updated.state == RequestState::Approved {
            self.worker.wake();
        }
        self.detail(principal, updated).await
    }

    /// Merges a proposed request's pull request on the local forge (admins); the request
    /// becomes `merged`, and a catalog read from the monorepo is reloaded.
    pub async fn merge(
        &self,
        principal: &Principal,
        id: i64,
        style: MergeStyle,
    ) -> Result<RequestDetail, ServiceError> {
        let r = self.visible(principal, id).await?;
        if !access::may_merge_request(&principal.viewer) {
            return Err(ServiceError::Forbidden(
                "only admins merge requests".to_owned(),
            ));
        }
        if !access::four_eyes_allow(principal.user_id, r.author.user_id, self.self_approval) {
            return Err(ServiceError::Forbidden(
                access::FOUR_EYES_REFUSAL.to_owned(),
            ));
        }
        if self.forge().kind() != ForgeKind::Local {
            return Err(ServiceError::Conflict(format!(
                "pull requests on {} are merged on the forge",
                self.forge().kind()
            )));
        }
        let number = match (r.state, r.pr_number) {
            (RequestState::Proposed, Some(n)) => u64::try_from(n)
                .map_err(|_| ServiceError::Internal(anyhow::anyhow!("bad pull request number")))?,
            (state, _) => {
                return Err(ServiceError::Conflict(format!(
                    "the request is {state}; only a proposed request can be merged"
                )));
            }
        };
        let actor = principal.viewer.username.clone();
        let pr = self
            .forge()
            .merge(number, style)
            .await
            .map_err(forge_error)?;
        let updated = worker::follow(&self.db, r.id, pr.state, &actor)
            .await?
            .unwrap_or_else(|| r.clone());
        self.audit(
            &actor,
            "request.merge",
            r.id,
            serde_json::json!({ "pull_request": number, "style": style }),
        )
        .await;
        if matches!(self.catalog.source(), CatalogSource::Git { .. }) {
            // Errors are logged and kept as the catalog's last error; the merge stands.
            if let Err(error) = self
                .catalog
                .reload(ReloadTrigger::Merge {
                    user: actor.clone(),
                    request: r.id,
                })
                .await
            {
                tracing::warn!(request.id = r.id, %error, "the catalog did not reload after a merge");
            }
        }
        if let Some(follower) = &self.follower {
            follower.wake();
        }
        let updated = self.db.request(updated.id).await?.unwrap_or(updated);
        self.detail(principal, updated).await
    }

    /// Moves the request whose pull request a verified webhook is about.
    pub async fn follow_webhook(
        &self,
        event: &WebhookEvent,
    ) -> Result<WebhookOutcome, ServiceError> {
        let Some(r) = self.db.request_by_branch(&event.branch).await? else {
            return Ok(WebhookOutcome::Ignored);
        };
        if r.pr_number
            .is_some_and(|n| u64::try_from(n).ok() != Some(event.number))
        {
            return Ok(WebhookOutcome::Ignored);
        }
        let actor = format!("forge:{}", event.forge);
        match worker::follow(&self.db, r.id, event.state, &actor).await {
            Ok(Some(updated)) => Ok(WebhookOutcome::Updated {
                request: r.id,
                state: updated.state,
            }),
            Ok(None) => Ok(WebhookOutcome::Unchanged { request: r.id }),
            // Still proposing: the worker records the pull request's state when it finishes.
            Err(TransitionError::Illegal(_)) => Ok(WebhookOutcome::Unchanged { request: r.id }),
            Err(e) => Err(e.into()),
        }
    }

    async fn audit(&self, actor: &str, action: &str, id: i64, detail: serde_json::Value) {
        let target = format!("request:{id}");
        let entry = NewAuditEntry {
            at: Utc::now(),
            actor,
            action,
            target: &target,
            detail,
        };
        if let Err(error) = self.db.append_audit(&entry).await {
            tracing::error!(%error, audit.action = action, "cannot write the audit entry");
        }
    }
}

/// Whether a parameter of `manifest` takes one of the requester's own namespaces.
pub(crate) fn uses_own_namespaces(
    manifest: &mirante_domain::selfservice::TemplateManifest,
) -> bool {
    manifest
        .parameters
        .iter()
        .any(|p| p.options == Some(mirante_domain::selfservice::OptionSource::OwnNamespaces))
}
