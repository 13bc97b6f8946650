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
//! Approval: an update asks for it when the template does (it may ask for more GPUs, memory or
//! CPU); an extension stays within the template's own bounds on `days` and a removal gives
//! something back, so neither waits for an admin.

use std::collections::BTreeMap;

use mirante_domain::access::{self, Principal};
use mirante_domain::request::{Action, RequestEvent, RequestState};
use mirante_domain::resource::{Resource, ResourceState};
use mirante_domain::selfservice::{Approval, ErrorCode, FieldError};
use serde_json::{Map, Value, json};

use super::error::forge_error;
use super::{Draft, RequestDetail, SelfService, ServiceError, Submitted, fingerprint};
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
        if !matches!(
            resource.state,
            ResourceState::Merged
                | ResourceState::Syncing
                | ResourceState::Live
                | ResourceState::Degraded
        ) {
            return Err(ServiceError::Conflict(format!(
                "resource {id} is {}: only a resource whose files are on `{}` can be changed",
                resource.state, self.base_branch
            )));
        }
        let current = self.current_request(&resource.target, id).await?;
        let plan = match action {
            Action::Remove => self.plan_removal(&resource.target).await?,
            Action::Extend | Action::Update => {
                self.plan_rerender(principal, &current, action, &input.values)
                    .await?
            }
            Action::Create => unreachable!("refused above"),
        };
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
                })),
                acting: Acting {
                    action,
                    resource: Some(id),
                    removed: &plan.removed,
                    base_files: &plan.base_files,
                    recorded_by: None,
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
                })
            },
        )
        .await
    }

    /// Takes back request `id` (its author, or an admin) before the worker starts proposing
    /// it: it is closed, with who withdrew it on its timeline.
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
        let done = self
            .db
            .transition_request(
                id,
                RequestEvent::Withdraw,
                &Change {
                    actor: username,
                    comment: Some("withdrawn"),
                    ..Change::default()
                },
                chrono::Utc::now(),
            )
            .await
            .map_err(|e| match e {
                crate::adapters::db::requests::TransitionError::Illegal(i) => {
                    ServiceError::Conflict(format!(
                        "request {id} is {}: only a request not yet proposed can be withdrawn; \
                         a proposed one is withdrawn by closing its pull request",
                        i.from
                    ))
                }
                other => other.into(),
            })?;
        self.audit(
            username,
            "request.withdraw",
            id,
            json!({"target": done.target}),
        )
        .await;
        self.detail(principal, done).await
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
        let group = self
            .db
            .requests_of_kind(RequestKind::Template, Some(target), 10_000)
            .await?;
        group
            .iter()
            .rev()
            .find(|r| r.state == RequestState::Merged && r.action != Action::Remove)
            .or_else(|| group.iter().find(|r| r.id == resource))
            .cloned()
            .ok_or_else(|| ServiceError::NotFound(format!("no resource {resource}")))
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
        for (path, content) in files {
            let path = format!("{target}/{path}");
            base_files.insert(
                path.clone(),
                content_sha256(&String::from_utf8_lossy(&content)),
            );
            removed.push(path);
        }
        Ok(Plan {
            values: Map::new(),
            files: Vec::new(),
            removed,
            base_files,
            needs_approval: false,
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
        let Some(change) = change.as_object() else {
            return Err(ServiceError::Invalid(vec![field_error(
                "values",
                ErrorCode::NotAnObject,
                "`values` must be an object of the parameters that change".to_owned(),
                Map::new(),
            )]));
        };
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
        let (rendered, manifest) = self
            .render_values(
                principal,
                &current.template,
                &Value::Object(values),
                chrono::Utc::now(),
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
        Ok(Plan {
            values: rendered.values,
            files,
            removed: Vec::new(),
            base_files,
            needs_approval: action == Action::Update && manifest.approval == Approval::Required,
        })
    }
}

/// What a day-two request will commit.
struct Plan {
    values: Map<String, Value>,
    files: Vec<FileChange>,
    removed: Vec<String>,
    base_files: BTreeMap<String, String>,
    needs_approval: bool,
}
