//! Template upgrades: a resource records the version of its template its files were rendered
//! with; when the template changes, the resource's values are rendered again with the new
//! version — as its owner, at the time its current files were rendered, so dates and names
//! stay — and where files differ from the base branch, the resource is offered the update.
//! Proposing it is an update request with no changed values (`day_two`), reviewed like any.

use mirante_domain::access::{Principal, Role, Viewer};
use mirante_domain::resource::{Resource, ResourceDetail, TemplateUpdate, UpdateFile};
use serde_json::Value;

use super::day_two::current_of;
use super::error::forge_error;
use super::{SelfService, ServiceError, unified_diff};
use crate::adapters::db::requests::RequestRecord;

impl SelfService {
    /// Resource `id` with its template version and the update its template offers.
    pub async fn resource_detail(
        &self,
        principal: &Principal,
        id: i64,
    ) -> Result<ResourceDetail, ServiceError> {
        let resource = self.resource(principal, id).await?;
        let group = self.template_requests(Some(&resource.target)).await?;
        let current = current_of(&group, id)
            .ok_or_else(|| ServiceError::NotFound(format!("no resource {id}")))?;
        let update = self.update_for(principal, current, &resource).await?;
        Ok(ResourceDetail {
            template_version: current.template_version.clone(),
            update,
            resource,
        })
    }

    /// The resources made from template `template` that its current version would change
    /// (admins), newest first.
    pub async fn template_updates(
        &self,
        principal: &Principal,
        template: &str,
    ) -> Result<Vec<ResourceDetail>, ServiceError> {
        if principal.viewer.role != Role::Admin {
            return Err(ServiceError::Forbidden(
                "the updates of a template's resources are for admins".to_owned(),
            ));
        }
        if self.template_set().await.get(template).is_none() {
            return Err(ServiceError::NotFound(format!("no template `{template}`")));
        }
        let rows = self.template_requests(None).await?;
        let mut out = Vec::new();
        for resource in self.all_resources().await? {
            if resource.template != template {
                continue;
            }
            let group: Vec<RequestRecord> = rows
                .iter()
                .filter(|r| r.target == resource.target)
                .cloned()
                .collect();
            let Some(current) = current_of(&group, resource.id) else {
                continue;
            };
            if let Some(update) = self.update_for(principal, current, &resource).await? {
                out.push(ResourceDetail {
                    template_version: current.template_version.clone(),
                    update: Some(update),
                    resource,
                });
            }
        }
        Ok(out)
    }

    /// The update `resource`'s template offers it, as its owner would be offered it (the
    /// expiry sweep's view, which tells them).
    pub(crate) async fn update_for_owner(
        &self,
        resource: &Resource,
    ) -> Result<Option<TemplateUpdate>, ServiceError> {
        if !resource.state.has_files_on_base() {
            return Ok(None);
        }
        let group = self.template_requests(Some(&resource.target)).await?;
        let Some(current) = current_of(&group, resource.id) else {
            return Ok(None);
        };
        let owner = Principal {
            user_id: current.author.user_id,
            viewer: Viewer {
                username: current.author.username.clone(),
                name: current.author.name.clone(),
                email: current.author.email.clone(),
                groups: Vec::new(),
                role: Role::Researcher,
                csrf_token: String::new(),
                dev_login: false,
            },
            via_token: false,
        };
        self.update_for(&owner, current, resource).await
    }

    /// What the template of `resource` renders differently now from its files on the base
    /// branch; `current` is the request whose files it holds.
    pub(super) async fn update_for(
        &self,
        principal: &Principal,
        current: &RequestRecord,
        resource: &Resource,
    ) -> Result<Option<TemplateUpdate>, ServiceError> {
        if !resource.state.has_files_on_base() {
            return Ok(None);
        }
        let set = self.template_set().await;
        let Some(template) = set.get(&current.template) else {
            return Ok(None);
        };
        let version = template.version().to_owned();
        if current.template_version.as_deref() == Some(version.as_str()) {
            return Ok(None);
        }
        let mut values = current.values.as_object().cloned().unwrap_or_default();
        values.retain(|_, v| !v.is_null());
        let rendered = match self
            .render_values_for(
                principal,
                Some(&current.author),
                &current.template,
                &Value::Object(values),
                current.created_at,
            )
            .await
        {
            Ok((rendered, _)) => rendered,
            // The new version asks for what the values lack: the update needs them first.
            Err(ServiceError::Invalid(fields)) => {
                let mut needs: Vec<String> = fields.into_iter().map(|f| f.field).collect();
                needs.dedup();
                return Ok(Some(TemplateUpdate {
                    version,
                    files: Vec::new(),
                    needs,
                }));
            }
            // The caller may no longer use the template: nothing to offer them.
            Err(ServiceError::NotFound(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        if rendered.target != current.target {
            // The new version would move the folder: not an update of this resource.
            return Ok(None);
        }
        let mut files = Vec::new();
        for file in &rendered.files {
            let old = self
                .forge()
                .read_file(&self.base_branch, &file.path)
                .await
                .map_err(forge_error)?;
            if old.as_deref() != Some(file.content.as_str()) {
                files.push(UpdateFile {
                    path: file.path.clone(),
                    diff: unified_diff(&file.path, old.as_deref(), &file.content),
                });
            }
        }
        Ok((!files.is_empty()).then(|| TemplateUpdate {
            version,
            files,
            needs: Vec::new(),
        }))
    }
}
