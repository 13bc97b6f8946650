//! The catalog-change operations of the self-service service: the item's file read from the
//! base branch, edited, validated with the whole catalog, previewed and stored as a request
//! (the values and their checks are [`crate::app::catalog_change`]).

use mirante_domain::access::{self, Principal};
use mirante_domain::selfservice::ErrorCode;
use serde_json::{Map, json};

use super::{Draft, SelfService, ServiceError, Submitted, fingerprint, unified_diff};
use crate::{
    adapters::{
        db::requests::{Acting, RequestKind},
        forge::{DirLimits, FileChange, ForgeError, ForgeKind},
    },
    app::{
        catalog::CatalogSource,
        catalog_change::{
            CATALOG_CHANGE, CatalogChangeInput, CatalogChangePreview, ItemFields, content_sha256,
            field_error, parse_input,
        },
        selfservice::{
            catalog_edit::{EditError, edit_item},
            template::render::dns_label,
        },
    },
};

/// A checked change, ready to preview or store.
struct Plan {
    preview: CatalogChangePreview,
    content: String,
    base_sha256: String,
}

impl SelfService {
    /// The catalog folder of the monorepo and its files on the base branch, where the change
    /// is computed. With the catalog read from the local monorepo, its own folder there; with
    /// a hosted forge, `MIRANTE_MONOREPO_CATALOG` on the base branch, read through the forge
    /// (the portal may serve a checkout of it, but the change is made against the branch).
    async fn catalog_at_base(&self) -> Result<(String, Vec<(String, Vec<u8>)>), ServiceError> {
        if let CatalogSource::Git { repo, dir, .. } = self.catalog.source().clone() {
            let base = self.base_branch.clone();
            let folder = dir.clone();
            let (_, files) = tokio::task::spawn_blocking(move || {
                crate::adapters::git::read_dir_at(&repo, &base, &folder)
            })
            .await
            .map_err(|e| ServiceError::Internal(e.into()))?
            .map_err(|e| super::forge_error(e.into()))?;
            return Ok((dir, files));
        }
        let forge = self.forge();
        if forge.kind() == ForgeKind::Local {
            return Err(ServiceError::Conflict(
                "catalog changes with the local forge need the catalog read from its monorepo \
                 (MIRANTE_CATALOG unset)"
                    .to_owned(),
            ));
        }
        let dir = self.catalog_folder.clone();
        let head = forge
            .branch_head(&self.base_branch)
            .await
            .map_err(super::forge_error)?
            .ok_or_else(|| {
                ServiceError::Conflict(format!(
                    "the base branch `{}` is not on the forge",
                    self.base_branch
                ))
            })?;
        let limits = DirLimits {
            max_files: super::MONOREPO_CATALOG_MAX_FILES,
            max_bytes: super::MONOREPO_CATALOG_MAX_BYTES,
        };
        let no_catalog = || {
            ServiceError::Conflict(format!(
                "the monorepo has no catalog in `{dir}/` on `{}` (MIRANTE_MONOREPO_CATALOG)",
                self.base_branch
            ))
        };
        let files = match forge.read_dir(&head, &dir, None, limits).await {
            Ok(read) => read.files.unwrap_or_default(),
            Err(ForgeError::NotFound(_)) => return Err(no_catalog()),
            Err(e) => return Err(super::forge_error(e)),
        };
        if files.is_empty() {
            return Err(no_catalog());
        }
        Ok((dir, files))
    }

    /// Checks the change and computes the edited file; nothing is stored.
    async fn plan_catalog_change(
        &self,
        principal: &Principal,
        id: &str,
        input: &CatalogChangeInput,
    ) -> Result<Plan, ServiceError> {
        if !access::may_change_catalog(&principal.viewer) {
            return Err(ServiceError::Forbidden(
                "only admins propose catalog changes".to_owned(),
            ));
        }
        let (edit, reason) = parse_input(input).map_err(ServiceError::Invalid)?;
        let (dir, files) = self.catalog_at_base().await?;
        let base = mirante_domain::load_bytes(files.clone()).map_err(|d| {
            ServiceError::Conflict(format!(
                "the catalog on `{}` is invalid, fix it first: {d}",
                self.base_branch
            ))
        })?;
        let item = base
            .catalog
            .items
            .iter()
            .find(|i| i.id == id)
            .ok_or_else(|| ServiceError::NotFound(format!("no item `{id}`")))?;
        let from = ItemFields::of(item);
        let to = ItemFields {
            state: edit.state,
            qualifier: edit.qualifier,
            evidence: edit.evidence.clone(),
        };
        if from == to {
            return Err(ServiceError::BadRequest(
                "the change changes nothing: the item already has these values".to_owned(),
            ));
        }
        if edit.state == mirante_domain::State::Validated
            && !mirante_domain::has_verifiable_evidence(&edit.evidence, item.iac.as_ref())
        {
            return Err(ServiceError::Invalid(vec![field_error(
                "evidence",
                ErrorCode::NeedsVerifiableEvidence,
                "validated needs a probe, an Argo CD application, a dated attestation or the \
                 item's IaC reference; free text is not enough"
                    .into(),
                Map::new(),
            )]));
        }
        // The file holding the item: the one the edit finds it in.
        let mut found = None;
        for (path, bytes) in &files {
            if !mirante_domain::load::is_catalog_path(path) {
                continue;
            }
            let Ok(text) = std::str::from_utf8(bytes) else {
                continue;
            };
            if !text.contains(id) {
                continue;
            }
            match edit_item(text, id, &edit) {
                Ok(new) => {
                    found = Some((path.clone(), text.to_owned(), new));
                    break;
                }
                Err(EditError::NoItem(_)) => {}
                Err(e @ (EditError::Unsupported(_) | EditError::Parse(_))) => {
                    return Err(ServiceError::Conflict(format!("{path}: {e}")));
                }
                Err(e @ EditError::Mismatch(_)) => {
                    return Err(ServiceError::Internal(anyhow::anyhow!("{path}: {e}")));
                }
            }
        }
        let (path, old, new) =
            found.ok_or_else(|| ServiceError::NotFound(format!("no item `{id}` in a file")))?;
        // The whole catalog with the edited file must load as a reload would.
        let edited: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|(p, b)| {
                if *p == path {
                    (p.clone(), new.clone().into_bytes())
                } else {
                    (p.clone(), b.clone())
                }
            })
            .collect();
        if let Err(diagnostics) = mirante_domain::load_bytes(edited) {
            let errors = diagnostics
                .0
                .iter()
                .map(|d| {
                    let mut args = Map::new();
                    args.insert("file".into(), json!(format!("{dir}/{}", d.file)));
                    args.insert("line".into(), json!(d.line));
                    args.insert("column".into(), json!(d.column));
                    args.insert("problem".into(), json!(d.message));
                    field_error(
                        "catalog",
                        ErrorCode::InvalidCatalog,
                        format!("{dir}/{}:{}:{}: {}", d.file, d.line, d.column, d.message),
                        args,
                    )
                })
                .collect();
            return Err(ServiceError::Invalid(errors));
        }
        let file = format!("{dir}/{path}");
        Ok(Plan {
            preview: CatalogChangePreview {
                item: item.id.to_string(),
                name: item.name.to_string(),
                diff: unified_diff(&file, Some(&old), &new),
                file,
                base: self.base_branch.clone(),
                from,
                to,
                reason,
            },
            base_sha256: content_sha256(&old),
            content: new,
        })
    }

    /// What a change of item `id` would propose: the edited file's diff against the base
    /// branch (admins).
    pub async fn preview_catalog_change(
        &self,
        principal: &Principal,
        id: &str,
        input: &CatalogChangeInput,
    ) -> Result<CatalogChangePreview, ServiceError> {
        Ok(self
            .plan_catalog_change(principal, id, input)
            .await?
            .preview)
    }

    /// Checks the change as [`Self::preview_catalog_change`] does, then stores it as a
    /// request queued for the worker (no approval step) and audits `request.submit`.
    pub async fn submit_catalog_change(
        &self,
        principal: &Principal,
        id: &str,
        input: &CatalogChangeInput,
        key: Option<&str>,
    ) -> Result<Submitted, ServiceError> {
        let plan = self.plan_catalog_change(principal, id, input).await?;
        let p = &plan.preview;
        let values = json!({
            "item": p.item,
            "name": p.name,
            "file": p.file,
            "from": p.from,
            "to": p.to,
            "reason": p.reason,
            "base_sha256": plan.base_sha256,
        });
        let files = [FileChange {
            path: p.file.clone(),
            content: plan.content.clone(),
        }];
        let slug = dns_label(&format!("{}-state", p.item));
        let title = format!("Catalog change: {}", p.name);
        self.store(
            principal,
            Draft {
                kind: RequestKind::CatalogChange,
                template: CATALOG_CHANGE,
                title: &title,
                values: &values,
                files: &files,
                target: &p.file,
                slug: &slug,
                needs_approval: false,
                fingerprint: fingerprint(&json!({"item": id, "change": input})),
                acting: Acting::CREATE,
            },
            key,
            |_| {
                json!({
                    "kind": RequestKind::CatalogChange,
                    "item": p.item,
                    "file": p.file,
                    "state": {"from": p.from.state, "to": p.to.state},
                })
            },
        )
        .await
    }
}
