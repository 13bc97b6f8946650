//! The templates in force, built in or read from the monorepo through the forge, kept until
//! the folder changes.

use std::sync::Arc;

use mirante_domain::Diagnostic;

use crate::adapters::forge::{DirLimits, DirRead, Forge, ForgeError};
use crate::app::selfservice::template::TemplateSet;

/// The most files the monorepo's template folder may hold (templates, skeletons, READMEs).
pub const MONOREPO_TEMPLATES_MAX_FILES: usize = 1000;
/// The most bytes the monorepo's template folder may hold, all files together.
pub const MONOREPO_TEMPLATES_MAX_BYTES: u64 = 8 << 20;

/// The templates in force: the built-in ones and those of a folder of the monorepo's base
/// branch, read through the forge (any kind), which replace built-in ones with the same id. A
/// template merged into the monorepo is offered at once, with no redeploy: each use asks the
/// forge for the base branch's head (one cheap call); when it has moved, the folder's tree id
/// is compared with the one last read, and only when that changed are the files read again.
/// A forge that cannot be read keeps the last good set, and says why among the problems.
pub(super) struct Templates {
    pub(super) builtin: Arc<TemplateSet>,
    /// The monorepo folder templates are read from, when there is one.
    pub(super) folder: Option<String>,
    pub(super) limits: DirLimits,
    pub(super) current: arc_swap::ArcSwap<TemplatesRead>,
    /// One reader of the folder at a time; the others wait and then find it read.
    pub(super) reading: tokio::sync::Mutex<()>,
}

/// The templates as last read from the monorepo.
pub(super) struct TemplatesRead {
    /// The base branch's head when last read successfully.
    pub(super) head: Option<String>,
    /// The folder's tree id the set was read from.
    pub(super) tree: Option<String>,
    /// The built-in templates with the folder's.
    pub(super) set: Arc<TemplateSet>,
    /// Why the last attempt to read failed (the set is then the last good one).
    pub(super) failure: Option<Diagnostic>,
    /// The head at which reading failed for a reason that retrying will not change (a folder
    /// too large, a refused token): not read again until the branch moves.
    pub(super) failed_at: Option<String>,
}

impl Templates {
    pub(super) fn builtin(set: Arc<TemplateSet>) -> Self {
        Templates {
            current: arc_swap::ArcSwap::from_pointee(TemplatesRead {
                head: None,
                tree: None,
                set: Arc::clone(&set),
                failure: None,
                failed_at: None,
            }),
            builtin: set,
            folder: None,
            limits: DirLimits {
                max_files: MONOREPO_TEMPLATES_MAX_FILES,
                max_bytes: MONOREPO_TEMPLATES_MAX_BYTES,
            },
            reading: tokio::sync::Mutex::new(()),
        }
    }

    /// The set at the tip of the base branch `branch`, read again when the tip has moved.
    pub(super) async fn at_tip(&self, forge: &dyn Forge, branch: &str) -> Arc<TemplatesRead> {
        let Some(folder) = &self.folder else {
            return self.current.load_full();
        };
        let head = match forge.branch_head(branch).await {
            Ok(head) => head,
            Err(e) => return self.failed(folder, branch, None, &e),
        };
        let fresh = |read: &TemplatesRead| {
            head.is_some()
                && ((read.head == head && read.failure.is_none()) || read.failed_at == head)
        };
        let current = self.current.load_full();
        if fresh(current.as_ref()) {
            return current;
        }
        let _reading = self.reading.lock().await;
        let current = self.current.load_full();
        if fresh(current.as_ref()) {
            return current;
        }
        let Some(rev) = head.clone() else {
            // No base branch (yet): the built-in templates only.
            return self.store(TemplatesRead {
                head: None,
                tree: None,
                set: Arc::clone(&self.builtin),
                failure: None,
                failed_at: None,
            });
        };
        let known = current.tree.as_deref();
        match forge.read_dir(&rev, folder, known, self.limits).await {
            // The folder did not change: the branch moved for other files.
            Ok(DirRead { tree, files: None }) => self.store(TemplatesRead {
                head,
                tree: Some(tree),
                set: Arc::clone(&current.set),
                failure: None,
                failed_at: None,
            }),
            Ok(DirRead {
                tree,
                files: Some(files),
            }) => {
                let origin = format!("monorepo:{folder}");
                let set = (*self.builtin)
                    .clone()
                    .with_overrides(TemplateSet::from_files(&origin, files));
                for problem in set.problems() {
                    tracing::warn!(%problem, "a self-service template was left out");
                }
                self.store(TemplatesRead {
                    head,
                    tree: Some(tree),
                    set: Arc::new(set),
                    failure: None,
                    failed_at: None,
                })
            }
            // No such folder: the built-in templates only.
            Err(ForgeError::NotFound(_)) => self.store(TemplatesRead {
                head,
                tree: None,
                set: Arc::clone(&self.builtin),
                failure: None,
                failed_at: None,
            }),
            Err(e) => self.failed(folder, branch, Some(rev), &e),
        }
    }

    pub(super) fn store(&self, read: TemplatesRead) -> Arc<TemplatesRead> {
        let read = Arc::new(read);
        self.current.store(Arc::clone(&read));
        read
    }

    /// Keeps the last good set and records why it could not be read again at `head`.
    pub(super) fn failed(
        &self,
        folder: &str,
        branch: &str,
        head: Option<String>,
        error: &ForgeError,
    ) -> Arc<TemplatesRead> {
        let current = self.current.load_full();
        let kept = match &current.head {
            Some(head) => format!(
                "the templates read at commit {} are offered until it can be read",
                head.get(..12).unwrap_or(head)
            ),
            None => "only the built-in templates are offered until it can be read".to_owned(),
        };
        let failure = Diagnostic::new(
            folder,
            0,
            0,
            format!("cannot read this folder on `{branch}`: {error}; {kept}"),
        );
        if current.failure.as_ref() != Some(&failure) {
            tracing::warn!(error = %error, "cannot read the monorepo's self-service templates");
        }
        self.store(TemplatesRead {
            head: current.head.clone(),
            tree: current.tree.clone(),
            set: Arc::clone(&current.set),
            failure: Some(failure),
            failed_at: head.filter(|_| !error.is_retryable()),
        })
    }
}
