//! What the self-service operations take and answer. The bodies are `mirante_api_types`'
//! (one set for the JSON API and the UI); this module makes them from the database's records.

pub use mirante_api_types::selfservice::{
    FileStatus, Preview, PreviewFile, RequestDetail, RequestFile, RequestInput, RequestSummary,
    TemplateDetail, TemplateSummary, TimelineEntry, WebhookOutcome,
};

use crate::adapters::db::requests::{RequestRecord, TransitionRecord};

pub(super) fn request_summary(r: &RequestRecord) -> RequestSummary {
    RequestSummary {
        action: r.action,
        id: r.id,
        template: r.template.clone(),
        template_title: r.template_title.clone(),
        target: r.target.clone(),
        state: r.state,
        author: r.author.username.clone(),
        author_name: r.author.name.clone(),
        pr_number: r.pr_number,
        pr_url: r.pr_url.clone(),
        created_at: r.created_at,
        updated_at: r.updated_at,
        resubmits: r.resubmits,
    }
}

pub(super) fn timeline_entry(t: TransitionRecord) -> TimelineEntry {
    TimelineEntry {
        from: t.from,
        to: t.to,
        at: t.at,
        actor: t.actor,
        comment: t.comment,
        overcommit_reason: t.overcommit_reason,
        deployment: t.deployment,
    }
}
