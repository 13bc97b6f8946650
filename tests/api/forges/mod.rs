//! The hosted forge clients (GitHub, GitLab, Gitea/Forgejo) against fakes that check every
//! request against each forge's documented API, and webhook verification with GitHub's real
//! example payloads.

mod catalog_changes;
mod contract;
mod enforced;
mod fake;
mod following;
mod gitea;
mod github;
mod gitlab;
mod merges;
mod replicas;
mod scenarios;
mod templates;
mod webhooks;

/// Runs every scenario of [`scenarios`] against one forge's fake.
macro_rules! forge_scenarios {
    ($module:ident, $model:ty) => {
        mod $module {
            use super::scenarios;

            #[tokio::test]
            async fn proposing_makes_one_commit_on_a_new_branch_and_opens_one_pull_request() {
                scenarios::proposing_makes_one_commit_on_a_new_branch_and_opens_one_pull_request::<
                    $model,
                >()
                .await
            }

            #[tokio::test]
            async fn a_branch_that_deletes_files_holds_none_of_them_and_is_reused_when_made_again() {
                scenarios::a_branch_that_deletes_files_holds_none_of_them_and_is_reused_when_made_again::<
                    $model,
                >()
                .await
            }

            #[tokio::test]
            async fn a_withdrawn_request_s_pull_request_is_closed_with_a_comment_and_a_merged_one_is_not() {
                scenarios::a_withdrawn_request_s_pull_request_is_closed_with_a_comment_and_a_merged_one_is_not::<
                    $model,
                >()
                .await
            }

            #[tokio::test]
            async fn files_and_directories_are_read_from_a_branch() {
                scenarios::files_and_directories_are_read_from_a_branch::<$model>().await
            }

            #[tokio::test]
            async fn a_folder_is_read_whole_and_not_again_while_its_tree_is_unchanged() {
                scenarios::a_folder_is_read_once_per_tree::<$model>().await
            }

            #[tokio::test]
            async fn a_folder_that_is_not_there_is_not_found() {
                scenarios::a_folder_that_is_not_there_is_not_found::<$model>().await
            }

            #[tokio::test]
            async fn a_folder_beyond_the_limits_is_refused_clearly() {
                scenarios::a_folder_beyond_the_limits_is_refused_clearly::<$model>().await
            }

            #[tokio::test]
            async fn a_resumed_proposal_reuses_the_branch_and_the_pull_request() {
                scenarios::a_resumed_proposal_reuses_the_branch_and_the_pull_request::<$model>()
                    .await
            }

            #[tokio::test]
            async fn a_pull_request_the_forge_says_already_exists_is_reused() {
                scenarios::a_pull_request_the_forge_says_already_exists_is_reused::<$model>().await
            }

            #[tokio::test]
            async fn a_branch_holding_other_content_is_a_conflict() {
                scenarios::a_branch_holding_other_content_is_a_conflict::<$model>().await
            }

            #[tokio::test]
            async fn merged_and_closed_pull_requests_are_reported_so() {
                scenarios::merged_and_closed_pull_requests_are_reported_so::<$model>().await
            }

            #[tokio::test]
            async fn a_refused_token_is_unauthorized_and_not_retried() {
                scenarios::a_refused_token_is_unauthorized_and_not_retried::<$model>().await
            }

            #[tokio::test]
            async fn a_server_error_is_unavailable_and_the_retry_completes() {
                scenarios::a_server_error_is_unavailable_and_the_retry_completes::<$model>().await
            }

            #[tokio::test]
            async fn a_rate_limited_forge_is_not_called_again_before_the_time_it_names() {
                scenarios::a_rate_limited_forge_is_not_called_again_before_the_time_it_names::<$model>().await
            }

            #[tokio::test]
            async fn a_forge_too_slow_to_answer_is_unavailable() {
                scenarios::a_forge_too_slow_to_answer_is_unavailable::<$model>().await
            }

            #[tokio::test]
            async fn a_dead_port_is_unavailable_and_retried() {
                scenarios::a_dead_port_is_unavailable_and_retried::<$model>().await
            }
        }
    };
}

forge_scenarios!(on_github, super::github::GitHubModel);
forge_scenarios!(on_gitlab, super::gitlab::GitLabModel);
forge_scenarios!(on_gitea, super::gitea::GiteaModel);

#[tokio::test]
async fn a_gitlab_folder_listed_over_several_pages_is_read_whole() {
    scenarios::a_folder_listed_over_several_pages_is_read_whole::<gitlab::GitLabModel>().await
}

#[tokio::test]
async fn a_gitea_folder_listed_over_several_pages_is_read_whole() {
    scenarios::a_folder_listed_over_several_pages_is_read_whole::<gitea::GiteaModel>().await
}

#[tokio::test]
async fn a_github_listing_truncated_at_its_limit_is_refused_clearly() {
    scenarios::a_truncated_listing_is_refused_clearly::<github::GitHubModel>().await
}

/// Runs what a forge tells of a merge ([`merges`]) against one forge's fake.
macro_rules! merge_tests {
    ($module:ident, $model:ty) => {
        mod $module {
            use super::merges;

            #[tokio::test]
            async fn a_merged_pull_request_names_its_merge_commit() {
                merges::a_merged_pull_request_names_its_merge_commit::<$model>().await
            }

            #[tokio::test]
            async fn a_squashed_pull_request_names_the_commit_squashed_onto_its_base() {
                merges::a_squashed_pull_request_names_the_commit_squashed_onto_its_base::<$model>()
                    .await
            }

            #[tokio::test]
            async fn a_closed_or_unknown_pull_request_names_no_merge_commit() {
                merges::a_closed_or_unknown_pull_request_names_no_merge_commit::<$model>().await
            }

            #[tokio::test]
            async fn the_forge_tells_whether_a_revision_contains_the_merge() {
                merges::the_forge_tells_whether_a_revision_contains_the_merge::<$model>().await
            }

            #[tokio::test]
            async fn an_unknown_commit_is_answered_cannot_tell() {
                merges::an_unknown_commit_is_answered_cannot_tell::<$model>().await
            }

            #[tokio::test]
            async fn a_revision_that_is_not_a_commit_id_is_answered_cannot_tell_without_asking() {
                merges::a_revision_that_is_not_a_commit_id_is_answered_cannot_tell_without_asking::<
                    $model,
                >()
                .await
            }

            #[tokio::test]
            async fn a_forge_failing_to_compare_is_unavailable_and_retried() {
                merges::a_forge_failing_to_compare_is_unavailable_and_retried::<$model>().await
            }
        }
    };
}

merge_tests!(merges_on_github, super::github::GitHubModel);
merge_tests!(merges_on_gitlab, super::gitlab::GitLabModel);
merge_tests!(merges_on_gitea, super::gitea::GiteaModel);

#[tokio::test]
async fn a_gitlab_merge_request_merged_by_fast_forward_names_no_merge_commit() {
    merges::a_fast_forward_merge_names_no_merge_commit::<gitlab::GitLabModel>().await
}

#[tokio::test]
async fn a_gitea_whose_compare_takes_no_commit_ids_cannot_tell() {
    merges::a_compare_that_takes_no_commit_ids_cannot_tell::<gitea::GiteaModel>().await
}

#[tokio::test]
async fn a_request_merged_on_github_is_live_at_a_later_revision_that_contains_it() {
    following::a_request_merged_on_the_forge_is_live_at_a_later_revision_that_contains_it::<
        github::GitHubModel,
    >()
    .await
}

#[tokio::test]
async fn a_request_merged_on_gitlab_is_live_at_a_later_revision_that_contains_it() {
    following::a_request_merged_on_the_forge_is_live_at_a_later_revision_that_contains_it::<
        gitlab::GitLabModel,
    >()
    .await
}

#[tokio::test]
async fn a_request_merged_on_gitea_is_live_at_a_later_revision_that_contains_it() {
    following::a_request_merged_on_the_forge_is_live_at_a_later_revision_that_contains_it::<
        gitea::GiteaModel,
    >()
    .await
}

/// Runs the portal's monorepo template tests against one forge's fake.
macro_rules! template_tests {
    ($module:ident, $model:ty) => {
        mod $module {
            use super::templates;

            #[tokio::test]
            async fn a_template_added_to_the_base_branch_is_offered_without_a_redeploy() {
                templates::offered_without_a_redeploy::<$model>().await
            }

            #[tokio::test]
            async fn a_forge_that_is_down_keeps_the_templates_read_last() {
                templates::kept_while_the_forge_is_down::<$model>().await
            }

            #[tokio::test]
            async fn an_oversized_template_folder_is_refused_clearly_and_the_last_templates_stay() {
                templates::oversized_folder_refused::<$model>().await
            }
        }
    };
}

template_tests!(templates_on_github, super::github::GitHubModel);
template_tests!(templates_on_gitlab, super::gitlab::GitLabModel);
template_tests!(templates_on_gitea, super::gitea::GiteaModel);

/// Runs the portal's catalog change tests against one forge's fake.
macro_rules! catalog_change_tests {
    ($module:ident, $model:ty) => {
        mod $module {
            use super::catalog_changes;

            #[tokio::test]
            async fn an_admins_state_change_arrives_as_a_pull_request_changing_only_the_items_lines() {
                catalog_changes::proposed_as_a_pull_request::<$model>().await
            }

            #[tokio::test]
            async fn a_catalog_change_without_a_catalog_on_the_base_branch_is_refused_and_nothing_is_made() {
                catalog_changes::refused_without_a_catalog_on_the_base_branch::<$model>().await
            }
        }
    };
}

catalog_change_tests!(catalog_changes_on_github, super::github::GitHubModel);
catalog_change_tests!(catalog_changes_on_gitlab, super::gitlab::GitLabModel);
catalog_change_tests!(catalog_changes_on_gitea, super::gitea::GiteaModel);

#[tokio::test]
async fn a_spent_github_budget_pauses_calls_until_its_reset() {
    scenarios::a_spent_budget_pauses_calls_until_its_reset::<github::GitHubModel>().await
}

#[tokio::test]
async fn replicas_share_the_open_pull_requests_and_read_each_once_per_interval() {
    replicas::replicas_share_the_open_pull_requests_and_read_each_once_per_interval::<
        github::GitHubModel,
    >()
    .await
}

#[tokio::test]
async fn a_proposal_slower_than_the_lease_is_worked_by_one_replica_only() {
    replicas::a_proposal_slower_than_the_lease_is_worked_by_one_replica_only::<github::GitHubModel>(
    )
    .await
}

#[tokio::test]
async fn a_pull_request_the_forge_could_not_be_read_for_keeps_its_turn() {
    replicas::a_pull_request_the_forge_could_not_be_read_for_keeps_its_turn::<github::GitHubModel>(
    )
    .await;
}
