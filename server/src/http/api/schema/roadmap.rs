//! Schemas of the roadmap (phases, progress, what blocks what) and of the consistency lint's
//! findings.

// Fields are read only by the schema derive.
#![expect(
    dead_code,
    reason = "schema-only types: never constructed, only described"
)]

use utoipa::ToSchema;

use super::catalog::{Priority, Qualifier, State, StateCounts, TaskKind};

/// Where an item or task stands on the roadmap.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum Status {
    /// Validated in production.
    Done,
    /// Everything it depends on is done; work can start.
    Ready,
    /// Waits for something that is not done.
    Blocked,
}

/// What a blocker is.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum BlockerKind {
    /// A catalog item that is not validated.
    Item,
    /// A pending task.
    Task,
}

/// Something not done that stands in the way, directly or through others.
#[derive(ToSchema)]
pub(crate) struct Blocker {
    /// Id of the blocking item or task.
    id: String,
    /// Item or task.
    kind: BlockerKind,
    /// The blocker's state, for items.
    state: Option<State>,
    /// The direct dependency (or `after` entry) through which it blocks; equal to `id` for a
    /// direct one.
    via: String,
}

/// One item on the roadmap.
#[derive(ToSchema)]
pub(crate) struct RoadmapItem {
    /// Item id.
    id: String,
    /// Item name.
    name: String,
    /// Its state.
    state: State,
    /// Its qualifier.
    qualifier: Option<Qualifier>,
    /// Its layer.
    layer: String,
    /// Its sites (empty: platform-wide).
    sites: Vec<String>,
    /// Its phase.
    phase: Option<String>,
    /// Done, ready or blocked.
    status: Status,
    /// Validated.
    done: bool,
    /// Not validated, and every dependency is.
    ready: bool,
    /// Direct dependencies.
    depends_on: Vec<String>,
    /// Every item not done in its way, directly or transitively, nearest first.
    blocked_by: Vec<Blocker>,
}

/// One pending task on the roadmap.
#[derive(ToSchema)]
pub(crate) struct RoadmapTask {
    /// Task id.
    id: String,
    /// What is to be done or decided.
    title: String,
    /// Task or open decision.
    kind: TaskKind,
    /// Layer or capability.
    layer: String,
    /// Sites it concerns.
    sites: Vec<String>,
    /// How urgent.
    priority: Option<Priority>,
    /// Items it moves forward.
    items: Vec<String>,
    /// Ready or blocked.
    status: Status,
    /// Every pending task and unvalidated item in its way, nearest first.
    blocked_by: Vec<Blocker>,
}

/// Counts per state of a group of items.
#[derive(ToSchema)]
pub(crate) struct Progress {
    /// Site or layer id (empty: platform-wide items).
    id: String,
    /// Display name.
    name: String,
    /// Items per state.
    counts: StateCounts,
}

/// A phase with its items.
#[derive(ToSchema)]
pub(crate) struct RoadmapPhase {
    /// Phase id (empty: items planned in no phase).
    id: String,
    /// Display name.
    name: String,
    /// What the phase delivers.
    description: String,
    /// Items per state.
    counts: StateCounts,
    /// Its item ids, in catalog order.
    items: Vec<String>,
}

/// Progress per site and per layer.
#[derive(ToSchema)]
pub(crate) struct RoadmapProgress {
    /// Per site, then platform-wide items (empty id).
    sites: Vec<Progress>,
    /// Per top-level layer, then per capability.
    layers: Vec<Progress>,
    /// Over the whole catalog.
    totals: StateCounts,
}

/// The roadmap of the catalog in force.
#[derive(ToSchema)]
pub(crate) struct Roadmap {
    /// Phases in order, then items planned in no phase (empty id).
    phases: Vec<RoadmapPhase>,
    /// Every item, in catalog order.
    items: Vec<RoadmapItem>,
    /// Pending tasks, critical first, then MVP, later, normal, unprioritised.
    tasks: Vec<RoadmapTask>,
    /// Progress per site and layer.
    progress: RoadmapProgress,
}

/// How serious a finding is.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum Severity {
    /// A contradiction: `catalog check` exits 1.
    Error,
    /// A claim without the backing it should have.
    Warning,
    /// Worth knowing.
    Info,
}

/// What a finding is about (see docs/catalog-format.md, "Consistency lint").
#[derive(ToSchema)]
#[schema(rename_all = "kebab-case")]
pub(crate) enum FindingCode {
    /// Validated, no evidence.
    ValidatedWithoutEvidence,
    /// Validated on free-text references only.
    ValidatedOnlyFreeText,
    /// An attestation older than the allowed age.
    AttestationStale,
    /// An attestation date that is not a past ISO date.
    AttestationDateInvalid,
    /// Declared, no `iac`.
    DeclaredWithoutIac,
    /// Declared: in code, not in production.
    DeclaredNotReal,
    /// Validated, depending on an unvalidated item.
    ValidatedDependsOnUnvalidated,
    /// Deferred, no criterion.
    DeferredWithoutCriterion,
    /// Rejected, no reason.
    RejectedWithoutReason,
    /// An IaC path outside the monorepo.
    IacPathOutside,
    /// An IaC path the monorepo does not have.
    IacPathMissing,
    /// An IaC key the file does not have.
    IacKeyMissing,
    /// An IaC file that cannot be parsed.
    IacUnreadable,
    /// A probe whose last run failed.
    ProbeFailing,
    /// An Argo CD application not Healthy and Synced, or unreadable.
    ArgocdUnhealthy,
}

/// One finding of the consistency lint.
#[derive(ToSchema)]
pub(crate) struct Finding {
    /// How serious.
    severity: Severity,
    /// What kind of problem.
    code: FindingCode,
    /// The item it is about.
    item: String,
    /// One line in English.
    message: String,
    /// The values the message names (`dependency`, `path`, `key`, `date`, `days`, ...).
    #[schema(value_type = Object, additional_properties)]
    args: std::collections::BTreeMap<String, String>,
    /// The item's page.
    link: String,
}

/// Number of findings per severity.
#[derive(ToSchema)]
pub(crate) struct SeverityCounts {
    /// Errors.
    error: usize,
    /// Warnings.
    warning: usize,
    /// Information.
    info: usize,
}
