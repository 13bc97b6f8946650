//! Day two: requests that act on a resource that exists — update its values, extend its
//! expiry, remove it — and taking a request back before it is proposed.
//!
//! A day-two request is a template request like the one that made the resource: the same
//! folder (`target`), the same journey (approval where asked, one branch and pull request,
//! followed to the merge). What differs is what its commit does: an update or an extension
//! writes the files rendered again from the resource's current values with the change; a
//! removal deletes every file of the folder. Each records the SHA-256 of the files it changes
//! or deletes as the base branch held them, and the worker refuses to propose it if one of
//! them changed since (someone edited the folder by hand): it fails with that reason instead
//! of overwriting their change.
//!
//! Approval (`TemplateManifest::needs_approval`): by default an update asks for it when the
//! template does (it may ask for more GPUs, memory or CPU); an extension stays within the
//! template's own bounds on `days` and a removal gives something back, so neither waits for an
//! admin. A template's `dayTwo` says otherwise per action, and can make extensions beyond a
//! number of days wait for an admin.

use std::collections::BTreeMap;

use mirante_domain::access::{self, Principal};
use mirante_domain::request::{Action, RequestEvent, RequestState};
use mirante_domain::resource::Resource;
use mirante_domain::selfservice::{ErrorCode, FieldError};
use serde_json::{Map, Value, json};

use super::diff::deletion_diff;
use super::error::forge_error;
use super::{
    Draft, RequestDetail, RequestInput, SelfService, ServiceError, Submitted, fingerprint,
    resubmittable,
};
use super::{FileStatus, Preview, PreviewFile, unified_diff};
use crate::adapters::db::requests::{Acting, Change, NewRequest, RequestKind, RequestRecord};
use crate::adapters::forge::FileChange;
use crate::app::catalog_change::{content_sha256, field_error};
use crate::app::selfservice::capacity;
use crate::app::selfservice::template::render::dns_label;

use mirante_api_types::selfservice::ResourceRequestInput;

/// Who the portal's own steps are recorded as made by.
const SYSTEM: &str = "system";

/// The parameter an extension changes.
const DAYS: &str = "days";

impl SelfService {
    /// Asks to update, extend or remove resource `id` (its owner, or an admin): checks the
    /// change, renders the files it writes or lists those it deletes, and stores it as a
    /// request of its own, answered as [`SelfService::submit`] answers.
    pub async fn ask_on_resource(
        &self,
        principal: &Principal,
        id: i64,
        input: &ResourceRequestInput,
        key: Option<&str>,
    ) -> Result<Submitted, ServiceError> {
        self.ask_on_resource_linked(principal, id, input, key, None)
            .await
    }

    /// [`SelfService::ask_on_resource`], recording the ended request it makes again.
    async fn ask_on_resource_linked(
        &self,
        principal: &Principal,
        id: i64,
        input: &ResourceRequestInput,
        key: Option<&str>,
        resubmits: Option<i64>,
    ) -> Result<Submitted, ServiceError> {
        let (resource, current, plan) = self.plan_on_resource(principal, id, input).await?;
        let action = input.kind;
        let values = Value::Object(plan.values);
        let slug = dns_label(&format!("{}-{}", action.as_str(), current.slug));
        let verb = match action {
            Action::Update => "Update",
            Action::Extend => "Extension",
            Action::Remove => "Removal",
            Action::Create => "Creation",
        };
        self.store(
            principal,
            Draft {
                kind: RequestKind::Template,
                template: &current.template,
                title: &current.template_title,
                values: &values,
                files: &plan.files,
                target: &resource.target,
                slug: &slug,
                needs_approval: plan.needs_approval,
                fingerprint: fingerprint(&json!({
                    "resource": id,
                    "kind": action,
                    "values": input.values,
                    "resubmits": resubmits,
                })),
                acting: Acting {
                    action,
                    resource: Some(id),
                    removed: &plan.removed,
                    base_files: &plan.base_files,
                    recorded_by: None,
                    resubmits,
                    template_version: plan.version.as_deref(),
                },
            },
            key,
            |record| {
                json!({
                    "action": action,
                    "resource": id,
                    "target": record.target,
                    "state": record.state,
                    "files": record.files.len(),
                    "removed": record.removed.len(),
                    "what": verb,
                    "resubmits": resubmits,
                })
            },
        )
        .await
    }

    /// What asking `input` on resource `id` would commit, after every check a request makes
    /// (who may, the resource's state, the values, the capacity).
    async fn plan_on_resource(
        &self,
        principal: &Principal,
        id: i64,
        input: &ResourceRequestInput,
    ) -> Result<(Resource, RequestRecord, Plan), ServiceError> {
        let action = input.kind;
        if action == Action::Create {
            return Err(ServiceError::Invalid(vec![field_error(
                "kind",
                ErrorCode::NotInEnum,
                "a resource that exists can be updated, extended or removed".to_owned(),
                Map::from_iter([("allowed".to_owned(), json!(["update", "extend", "remove"]))]),
            )]));
        }
        let resource = self.resource(principal, id).await?;
        if !access::may_act_on_resource(principal, resource.owner_user_id) {
            return Err(ServiceError::Forbidden(
                "only the resource's owner or an admin may change it".to_owned(),
            ));
        }
        if !resource.state.has_files_on_base() {
            return Err(ServiceError::Conflict(format!(
                "resource {id} is {}: only a resource whose files are on `{}` can be changed",
                resource.state, self.base_branch
            )));
        }
        let current = self.current_request(&resource.target, id).await?;
        let plan = match action {
            Action::Remove => {
                let mut plan = self.plan_removal(&resource.target).await?;
                plan.needs_approval = self
                    .template_set()
                    .await
                    .get(&current.template)
                    .is_some_and(|t| t.manifest().needs_approval(Action::Remove, None));
                plan
            }
            Action::Extend | Action::Update => {
                self.plan_rerender(principal, &current, action, &input.values)
                    .await?
            }
            Action::Create => unreachable!("refused above"),
        };
        Ok((resource, current, plan))
    }

    /// What asking `input` on resource `id` would propose, without storing anything: every
    /// file it writes or deletes with its diff against the base branch, and whether an admin
    /// approves it first. Refused as [`SelfService::ask_on_resource`] would refuse it.
    pub async fn preview_on_resource(
        &self,
        principal: &Principal,
        id: i64,
        input: &ResourceRequestInput,
    ) -> Result<Preview, ServiceError> {
        let (_, current, plan) = self.plan_on_resource(principal, id, input).await?;
        let mut files: Vec<PreviewFile> = plan
            .files
            .iter()
            .map(|f| {
                let old = plan.old.get(&f.path);
                PreviewFile {
                    path: f.path.clone(),
                    content: f.content.clone(),
                    status: if old.is_some() {
                        FileStatus::Modified
                    } else {
                        FileStatus::Added
                    },
                    diff: unified_diff(&f.path, old.map(String::as_str), &f.content),
                }
            })
            .collect();
        for path in &plan.removed {
            let old = plan.old.get(path).map(String::as_str).unwrap_or_default();
            files.push(PreviewFile {
                path: path.clone(),
                content: String::new(),
                status: FileStatus::Deleted,
                diff: deletion_diff(path, old),
            });
        }
        Ok(Preview {
            template: current.template.clone(),
            target: current.target.clone(),
            slug: dns_label(&format!("{}-{}", input.kind.as_str(), current.slug)),
            values: plan.values,
            base: self.base_branch.clone(),
            needs_approval: plan.needs_approval,
            files,
            at: chrono::Utc::now(),
        })
    }

    /// Takes back request `id` (its author, or an admin) before it is merged: closed, with who
    /// withdrew it on its timeline. A proposed request's pull request is closed on the forge
    /// first, with a comment saying so.
    pub async fn withdraw(
        &self,
        principal: &Principal,
        id: i64,
    ) -> Result<RequestDetail, ServiceError> {
        let request = self.visible(principal, id).await?;
        if !access::may_withdraw_request(principal, request.author.user_id) {
            return Err(ServiceError::Forbidden(
                "only the request's author or an admin may withdraw it".to_owned(),
            ));
        }
        let username = &principal.viewer.username;
        let change = Change {
            actor: username,
            comment: Some("withdrawn"),
            ..Change::default()
        };
        let event = match (request.state, request.pr_number) {
            (RequestState::Proposed, Some(number)) => {
                let number = u64::try_from(number).map_err(|_| {
                    ServiceError::Conflict(format!("request {id} names no pull request"))
                })?;
                let comment = format!(
                    "Withdrawn in Mirante by {} ({username}): request #{id} was taken back, so \
                     this pull request is closed without a merge.",
                    principal.viewer.name
                );
                self.forge()
                    .close_pull_request(number, &comment)
                    .await
                    .map_err(forge_error)?;
                RequestEvent::Close
            }
            _ => RequestEvent::Withdraw,
        };
        let done = self
            .db
            .transition_request(id, event, &change, chrono::Utc::now())
            .await
            .map_err(|e| match e {
                crate::adapters::db::requests::TransitionError::Illegal(i) => {
                    ServiceError::Conflict(format!(
                        "request {id} is {}: only a request not yet merged, and not being \
                         proposed at this moment, can be withdrawn",
                        i.from
                    ))
                }
                other => other.into(),
            })?;
        self.audit(
            username,
            "request.withdraw",
            id,
            json!({"target": done.target, "pull_request": done.pr_number}),
        )
        .await;
        self.detail(principal, done).await
    }

    /// Makes request `id` again (its author, or an admin) after it ended without a merge —
    /// rejected, withdrawn or failed — with `change` over its values: a new request of the same
    /// kind (a creation, or the same day-two action on the same resource) through every check
    /// a first one passes, recorded as resubmitting the old one. Answered as
    /// [`SelfService::submit`] answers.
    pub async fn resubmit(
        &self,
        principal: &Principal,
        id: i64,
        change: &Value,
        key: Option<&str>,
    ) -> Result<Submitted, ServiceError> {
        let old = self.ended(principal, id).await?;
        let change = changed_values(change)?;
        let mut values = old.values.as_object().cloned().unwrap_or_default();
        values.retain(|_, v| !v.is_null());
        match old.action {
            Action::Create => {
                values.extend(change.clone());
                let input = RequestInput {
                    template: old.template.clone(),
                    values: Value::Object(values),
                    at: None,
                };
                self.submit_linked(principal, &input, key, Some(id)).await
            }
            action => {
                let resource = old.resource.ok_or_else(|| {
                    ServiceError::Conflict(format!("request {id} names no resource"))
                })?;
                let mut asked = match action {
                    Action::Remove => Map::new(),
                    Action::Extend => values
                        .remove(DAYS)
                        .map(|d| Map::from_iter([(DAYS.to_owned(), d)]))
                        .unwrap_or_default(),
                    _ => values,
                };
                asked.extend(change.clone());
                let input = ResourceRequestInput {
                    kind: action,
                    values: Value::Object(asked),
                };
                self.ask_on_resource_linked(principal, resource, &input, key, Some(id))
                    .await
            }
        }
    }

    /// Makes the ended creation `id` again with the values of `input` (the form filled again,
    /// previewed and submitted): [`SelfService::submit`] for the same template, recorded as
    /// resubmitting `id`, which the caller must be allowed to resubmit.
    pub async fn submit_again(
        &self,
        principal: &Principal,
        id: i64,
        input: &RequestInput,
        key: Option<&str>,
    ) -> Result<Submitted, ServiceError> {
        let old = self.ended(principal, id).await?;
        if old.action != Action::Create || old.template != input.template {
            return Err(ServiceError::Conflict(format!(
                "request {id} asked `{}` of template `{}`: a resubmission asks the same",
                old.action.as_str(),
                old.template
            )));
        }
        self.submit_linked(principal, input, key, Some(id)).await
    }

    /// Request `id`, when the caller (its author, or an admin) may make it again: it ended
    /// without a merge.
    async fn ended(&self, principal: &Principal, id: i64) -> Result<RequestRecord, ServiceError> {
        let old = self.visible(principal, id).await?;
        if !access::may_withdraw_request(principal, old.author.user_id) {
            return Err(ServiceError::Forbidden(
                "only the request's author or an admin may resubmit it".to_owned(),
            ));
        }
        if !resubmittable(&old) {
            return Err(ServiceError::Conflict(format!(
                "request {id} is {}: only a template request that ended without a merge \
                 (rejected, withdrawn or failed) can be resubmitted",
                old.state
            )));
        }
        Ok(old)
    }

    /// Opens the removal of an expired `resource` on its owner's behalf, recorded as made by
    /// the portal (`system`); it waits for an admin when `needs_approval`, else the worker
    /// proposes it at once. Answers the new request's id; an open request on the folder (an
    /// extension asked for, say) refuses it with [`ServiceError::Duplicate`].
    pub(crate) async fn open_expiry_removal(
        &self,
        resource: &Resource,
        needs_approval: bool,
    ) -> Result<i64, ServiceError> {
        let creating = self
            .db
            .request(resource.id)
            .await?
            .ok_or_else(|| ServiceError::NotFound(format!("no resource {}", resource.id)))?;
        let current = self.current_request(&resource.target, resource.id).await?;
        let plan = self.plan_removal(&resource.target).await?;
        let slug = dns_label(&format!("expired-{}", current.slug));
        let values = Value::Object(Map::new());
        let created = self
            .db
            .create_request_acting(
                RequestKind::Template,
                Acting {
                    action: Action::Remove,
                    resource: Some(resource.id),
                    removed: &plan.removed,
                    base_files: &plan.base_files,
                    recorded_by: Some(SYSTEM),
                    resubmits: None,
                    template_version: None,
                },
                &NewRequest {
                    template: &current.template,
                    template_title: &current.template_title,
                    values: &values,
                    files: &[],
                    target: &resource.target,
                    slug: &slug,
                    author: &creating.author,
                    needs_approval,
                    at: chrono::Utc::now(),
                    idempotency: None,
                },
            )
            .await?;
        let id = created.request.id;
        self.audit(
            SYSTEM,
            "request.expiry_removal",
            id,
            json!({
                "resource": resource.id,
                "target": resource.target,
                "expires": resource.expires,
                "removed": plan.removed.len(),
            }),
        )
        .await;
        if !needs_approval {
            self.worker.wake();
        }
        Ok(id)
    }

    /// The request whose files the resource holds now: the latest merged one that is not a
    /// removal, else the one that made it.
    async fn current_request(
        &self,
        target: &str,
        resource: i64,
    ) -> Result<RequestRecord, ServiceError> {
        let group = self.template_requests(Some(target)).await?;
        current_of(&group, resource)
            .cloned()
            .ok_or_else(|| ServiceError::NotFound(format!("no resource {resource}")))
    }

    /// Resource `id` as its page shows it: the values its files hold now, the request on its
    /// folder still on its way (if any), and whether `principal` may ask to change it now.
    pub async fn resource_now(
        &self,
        principal: &Principal,
        id: i64,
    ) -> Result<ResourceNow, ServiceError> {
        let resource = self.resource(principal, id).await?;
        let group = self.template_requests(Some(&resource.target)).await?;
        let current = current_of(&group, id)
            .ok_or_else(|| ServiceError::NotFound(format!("no resource {id}")))?;
        let open_request = group
            .iter()
            .rev()
            .find(|r| !r.state.is_final())
            .map(|r| r.id);
        let may_change = access::may_act_on_resource(principal, resource.owner_user_id)
            && resource.state.has_files_on_base()
            && open_request.is_none();
        let update = self.update_for(principal, current, &resource).await?;
        Ok(ResourceNow {
            values: current.values.clone(),
            template: current.template.clone(),
            template_version: current.template_version.clone(),
            update,
            open_request,
            may_change,
            resource,
        })
    }

    /// A removal: every file of the folder on the base branch, deleted.
    async fn plan_removal(&self, target: &str) -> Result<Plan, ServiceError> {
        let read = self
            .forge()
            .read_dir(&self.base_branch, target, None, self.templates.limits)
            .await
            .map_err(forge_error)?;
        let files = read.files.unwrap_or_default();
        if files.is_empty() {
            return Err(ServiceError::Conflict(format!(
                "`{target}` holds no file on `{}`: there is nothing to remove",
                self.base_branch
            )));
        }
        let mut removed = Vec::with_capacity(files.len());
        let mut base_files = BTreeMap::new();
        let mut old = BTreeMap::new();
        for (path, content) in files {
            let path = format!("{target}/{path}");
            let content = String::from_utf8_lossy(&content).into_owned();
            base_files.insert(path.clone(), content_sha256(&content));
            old.insert(path.clone(), content);
            removed.push(path);
        }
        Ok(Plan {
            values: Map::new(),
            files: Vec::new(),
            removed,
            base_files,
            needs_approval: false,
            version: None,
            old,
        })
    }

    /// An update or an extension: the current values with the change, rendered again; the
    /// files that differ from the base branch.
    async fn plan_rerender(
        &self,
        principal: &Principal,
        current: &RequestRecord,
        action: Action,
        change: &Value,
    ) -> Result<Plan, ServiceError> {
        let change = changed_values(change)?;
        if action == Action::Extend {
            let unknown: Vec<FieldError> = change
                .keys()
                .filter(|k| k.as_str() != DAYS)
                .map(|k| {
                    field_error(
                        k,
                        ErrorCode::UnknownField,
                        format!("an extension changes only `{DAYS}`"),
                        Map::new(),
                    )
                })
                .collect();
            if !unknown.is_empty() {
                return Err(ServiceError::Invalid(unknown));
            }
            if !change.contains_key(DAYS) {
                return Err(ServiceError::Invalid(vec![field_error(
                    DAYS,
                    ErrorCode::Required,
                    "an extension needs the new number of days, counted from today".to_owned(),
                    Map::new(),
                )]));
            }
        }
        let mut values = current.values.as_object().cloned().unwrap_or_default();
        // The stored values include nulls for parameters not given; a null is "not given".
        values.retain(|_, v| !v.is_null());
        for (k, v) in change {
            values.insert(k.clone(), v.clone());
        }
        // An extension counts its days from today; any other change keeps the dates the files
        // hold (rendered as when the current files were), and the files keep naming the
        // resource's owner whoever asks.
        let at = if action == Action::Extend {
            chrono::Utc::now()
        } else {
            current.created_at
        };
        let (rendered, manifest) = self
            .render_values_for(
                principal,
                Some(&current.author),
                &current.template,
                &Value::Object(values),
                at,
            )
            .await?;
        if action == Action::Extend && !manifest.parameters.iter().any(|p| p.name == DAYS) {
            return Err(ServiceError::Conflict(format!(
                "template `{}` sets no expiry (`{DAYS}`): there is nothing to extend",
                current.template
            )));
        }
        if rendered.target != current.target {
            return Err(ServiceError::Invalid(vec![field_error(
                "values",
                ErrorCode::Pattern,
                format!(
                    "these values would move the resource to `{}`; its name and cluster stay \
                     as they are (`{}`)",
                    rendered.target, current.target
                ),
                Map::new(),
            )]));
        }
        // More GPUs than it holds now: the difference must be free on its cluster.
        if let Some((cluster, gpus)) = capacity::gpu_parameters(&manifest)
            && let (Some(Value::String(cluster_id)), Some(asked)) = (
                rendered.values.get(cluster),
                rendered.values.get(gpus).and_then(Value::as_u64),
            )
        {
            let held = current
                .values
                .get(gpus)
                .and_then(Value::as_u64)
                .unwrap_or(0);
            if asked > held {
                let ledger = self.capacity().await?;
                if let Some(c) = ledger.iter().find(|c| c.id == *cluster_id)
                    && let Err(refused) = c.check(asked - held)
                {
                    return Err(ServiceError::Invalid(vec![refused.field_error(gpus)]));
                }
            }
        }
        let mut files = Vec::new();
        let mut base_files = BTreeMap::new();
        let mut before = BTreeMap::new();
        for file in rendered.files {
            let old = self
                .forge()
                .read_file(&self.base_branch, &file.path)
                .await
                .map_err(forge_error)?;
            if old.as_deref() == Some(file.content.as_str()) {
                continue;
            }
            if let Some(old) = old {
                base_files.insert(file.path.clone(), content_sha256(&old));
                before.insert(file.path.clone(), old);
            }
            files.push(FileChange {
                path: file.path,
                content: file.content,
            });
        }
        if files.is_empty() {
            return Err(ServiceError::Invalid(vec![field_error(
                "values",
                ErrorCode::Required,
                "these values change no file of the resource".to_owned(),
                Map::new(),
            )]));
        }
        let needs_approval =
            manifest.needs_approval(action, rendered.values.get(DAYS).and_then(Value::as_u64));
        Ok(Plan {
            values: rendered.values,
            files,
            removed: Vec::new(),
            base_files,
            needs_approval,
            version: Some(rendered.version),
            old: before,
        })
    }
}

/// The `values` of a day-two request or a resubmission: an object of the parameters that
/// change; anything else is refused on the `values` field.
fn changed_values(change: &Value) -> Result<&Map<String, Value>, ServiceError> {
    change.as_object().ok_or_else(|| {
        ServiceError::Invalid(vec![field_error(
            "values",
            ErrorCode::NotAnObject,
            "`values` must be an object of the parameters that change".to_owned(),
            Map::new(),
        )])
    })
}

/// The request among `group` (one folder's template requests, oldest first) whose files
/// resource `resource` holds now.
pub(super) fn current_of(group: &[RequestRecord], resource: i64) -> Option<&RequestRecord> {
    group
        .iter()
        .rev()
        .find(|r| r.state == RequestState::Merged && r.action != Action::Remove)
        .or_else(|| group.iter().find(|r| r.id == resource))
}

/// A resource as its page shows it.
#[derive(Debug, Clone)]
pub struct ResourceNow {
    /// The resource.
    pub resource: Resource,
    /// The template it was made from.
    pub template: String,
    /// The values its files hold now.
    pub values: Value,
    /// The template version its files were rendered with.
    pub template_version: Option<String>,
    /// What its template renders differently now, if anything.
    pub update: Option<mirante_domain::resource::TemplateUpdate>,
    /// A request on its folder still on its way.
    pub open_request: Option<i64>,
    /// Whether the viewer may ask to update, extend or remove it now.
    pub may_change: bool,
}

/// What a day-two request will commit.
struct Plan {
    values: Map<String, Value>,
    files: Vec<FileChange>,
    removed: Vec<String>,
    base_files: BTreeMap<String, String>,
    needs_approval: bool,
    /// The template version an update or extension was rendered with.
    version: Option<String>,
    /// The base branch's content of each file it changes or deletes (for the preview's diffs).
    old: BTreeMap<String, String>,
}
