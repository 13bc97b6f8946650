//! The change a request's pull request proposes, for the forge that has no pull request page of
//! its own: with the local forge, the portal is where its pull requests are read.

use mirante_domain::access::Principal;

use super::{SelfService, ServiceError, forge_error};
use crate::adapters::forge::{ForgeKind, PullRequestState};
use crate::adapters::git::change::FileChangeKind;
use mirante_api_types::selfservice::{ChangeCommit, ChangeFile, FileStatus, ProposedChange};

impl SelfService {
    /// What request `id`'s branch proposes against the base branch — its commits and each
    /// file's diff, and whether it is open, merged or closed — for whoever may see the request.
    /// Refused (409) before the request has a pull request, and with a hosted forge, whose own
    /// page shows it (the message gives its address).
    pub async fn proposed_change(
        &self,
        principal: &Principal,
        id: i64,
    ) -> Result<ProposedChange, ServiceError> {
        let r = self.visible(principal, id).await?;
        let number = r
            .pr_number
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| {
                ServiceError::Conflict(format!("request {id} has no pull request yet"))
            })?;
        let forge = self.forge();
        if forge.kind() != ForgeKind::Local {
            return Err(ServiceError::Conflict(format!(
                "the pull request of request {id} is read on the forge: {}",
                r.pr_url
                    .as_deref()
                    .unwrap_or("its address is not known yet")
            )));
        }
        let pr = forge.pull_request(number).await.map_err(forge_error)?;
        let merge = match pr.state {
            PullRequestState::Merged => forge.merge_commit(number).await.map_err(forge_error)?,
            _ => None,
        };
        let change = forge
            .branch_change(&self.base_branch, &r.branch, merge.as_deref())
            .await
            .map_err(forge_error)?
            .ok_or_else(|| {
                ServiceError::NotFound(format!(
                    "branch `{}` is no longer in the monorepo",
                    r.branch
                ))
            })?;
        Ok(ProposedChange {
            request: r.id,
            branch: r.branch.clone(),
            base: self.base_branch.clone(),
            state: match pr.state {
                PullRequestState::Open => "open",
                PullRequestState::Merged => "merged",
                PullRequestState::Closed => "closed",
            }
            .to_owned(),
            from: change.from,
            to: change.to,
            commits: change
                .commits
                .into_iter()
                .map(|c| ChangeCommit {
                    id: c.id,
                    summary: c.summary,
                    author: c.author,
                    at: c.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                })
                .collect(),
            files: change
                .files
                .into_iter()
                .map(|f| ChangeFile {
                    path: f.path,
                    status: match f.kind {
                        FileChangeKind::Added => FileStatus::Added,
                        FileChangeKind::Modified => FileStatus::Modified,
                        FileChangeKind::Deleted => FileStatus::Deleted,
                    },
                    diff: f.diff,
                })
                .collect(),
            more_files: change.more_files,
        })
    }
}
