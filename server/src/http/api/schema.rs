//! OpenAPI schemas of the catalog types the API returns.
//!
//! The API serializes the domain types themselves (one name for one thing: YAML, Rust and
//! JSON agree). The domain crate stays free of HTTP concerns, so their schemas are described
//! here, field for field; a test serializes fully populated domain values and checks that the
//! properties match exactly, so a field added to the model and not here fails the build's
//! tests rather than going undocumented.

// Fields are read only by the schema derive.
#![expect(
    dead_code,
    reason = "schema-only types: never constructed, only described"
)]

use utoipa::ToSchema;

/// The three states every claim about the infrastructure falls into.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum State {
    /// Works in production with real traffic or data.
    Validated,
    /// Exists in IaC but is not applied or validated.
    Declared,
    /// An architectural decision on the roadmap, with no code and no validation.
    Desired,
}

/// Refines a state.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum Qualifier {
    /// Works for part of its scope only.
    Partial,
    /// Work is under way.
    InProgress,
    /// Postponed until a criterion is met.
    Deferred,
    /// Considered and turned down.
    Rejected,
    /// Beyond the current roadmap.
    Future,
}

/// What a catalog item is.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum ItemKind {
    /// A piece of the platform stack.
    Component,
    /// An application, job or platform running on top of the stack.
    Workload,
    /// Part of a cross-cutting capability.
    Capability,
}

/// An ordered layer or a cross-cutting capability.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum LayerKind {
    /// An ordered layer (0–8).
    Layer,
    /// A capability that crosses every layer.
    Capability,
}

/// Priority of a task or layer.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum Priority {
    /// Before anything else in its area.
    Critical,
    /// Part of the minimum viable platform.
    Mvp,
    /// Planned for later phases.
    Later,
    /// Worth doing, no date.
    Normal,
}

/// Whether a pending entry is work to do or a decision still to take.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum TaskKind {
    /// Work to be done.
    Task,
    /// A decision not taken yet.
    Decision,
}

/// A titled list of free-text entries.
#[derive(ToSchema)]
pub(crate) struct Section {
    /// Heading.
    title: String,
    /// Entries, in order.
    entries: Vec<String>,
}

/// A GPU model and how many of it.
#[derive(ToSchema)]
pub(crate) struct Gpu {
    /// Model name.
    model: String,
    /// Number of cards.
    count: u32,
}

/// A group of physical hosts sharing a naming pattern and a role.
#[derive(ToSchema)]
pub(crate) struct HostGroup {
    /// Identifier.
    id: String,
    /// Display name.
    name: String,
    /// Host-name pattern (`pve-labri-*`).
    pattern: String,
    /// Number of hosts.
    count: Option<u32>,
    /// Free notes.
    notes: String,
}

/// A physical host or container host.
#[derive(ToSchema)]
pub(crate) struct Host {
    /// Host name.
    id: String,
    /// Site the host is in.
    site: String,
    /// Host group.
    group: Option<String>,
    /// Hardware tier (`1`, `2A`, `3`).
    tier: Option<String>,
    /// What the host does.
    roles: Vec<String>,
    /// GPUs installed.
    gpus: Vec<Gpu>,
    /// Free notes.
    notes: String,
}

/// A site with its hosts.
#[derive(ToSchema)]
pub(crate) struct Site {
    /// Short identifier (`franca`, `sp`).
    id: String,
    /// Display name.
    name: String,
    /// Where it is.
    location: String,
    /// Free notes.
    notes: String,
    /// Groups of physical hosts.
    host_groups: Vec<HostGroup>,
    /// Hosts at the site (from the catalog's `hosts`).
    hosts: Vec<Host>,
}

/// A layer (0–8, with sub-layers) or a cross-cutting capability.
#[derive(ToSchema)]
pub(crate) struct Layer {
    /// Identifier (`l0`, `l8b`, `secrets`).
    id: String,
    /// Ordered layer or capability.
    kind: LayerKind,
    /// Label shown before the name (`0`, `8b`).
    number: String,
    /// Display name.
    name: String,
    /// Enclosing layer, for sub-layers.
    parent: Option<String>,
    /// Its role in the platform.
    role: String,
    /// Components, as the architecture names them.
    components: Vec<String>,
    /// Why it sits where it sits.
    rationale: String,
    /// Priority of the layer as a whole.
    priority: Option<Priority>,
    /// Free notes.
    notes: String,
    /// Further prose.
    sections: Vec<Section>,
}

/// Where a claim is declared in the devops monorepo.
#[derive(ToSchema)]
pub(crate) struct IacRef {
    /// Path relative to the monorepo root.
    path: String,
    /// Dotted key inside the file.
    key: Option<String>,
}

/// Why a claim is believed.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[serde(tag = "kind")]
pub(crate) enum Evidence {
    /// A person checked it.
    Attestation {
        /// Who checked.
        by: String,
        /// When (ISO date).
        date: String,
        /// What was checked.
        what: String,
    },
    /// An HTTP endpoint the portal can probe.
    Probe {
        /// URL to request.
        url: String,
        /// Expected status code.
        expect_status: u16,
    },
    /// An Argo CD application backing the claim.
    Argocd {
        /// Application name.
        app: String,
        /// Argo CD instance.
        instance: Option<String>,
    },
    /// A document, pull request or page that records it.
    Reference {
        /// What it shows.
        text: String,
        /// Where it is.
        url: Option<String>,
    },
}

/// Anything the catalog tracks a state for.
#[derive(ToSchema)]
pub(crate) struct Item {
    /// Identifier (`linstor-sp-ssd`).
    id: String,
    /// Display name.
    name: String,
    /// Component, workload or capability item.
    kind: ItemKind,
    /// Layer or capability it belongs to.
    layer: String,
    /// Sites it concerns; empty means platform-wide.
    sites: Vec<String>,
    /// Hosts it runs on.
    hosts: Vec<String>,
    /// Validated, declared or desired.
    state: State,
    /// Refinement of the state.
    qualifier: Option<Qualifier>,
    /// Free notes.
    notes: String,
    /// Why the state is believed.
    evidence: Vec<Evidence>,
    /// Where it is declared in the monorepo.
    iac: Option<IacRef>,
    /// Why it was rejected.
    reason: Option<String>,
    /// What must happen before it is taken up.
    criterion: Option<String>,
    /// Items that must work before this one can.
    depends_on: Vec<String>,
    /// Decisions that shape it.
    decisions: Vec<String>,
    /// Roadmap phase.
    phase: Option<String>,
    /// GPUs it offers to workloads.
    gpus: Vec<Gpu>,
    /// How researchers reach it, for a Kubernetes cluster.
    kubernetes: Option<KubernetesAccess>,
    /// Where the monorepo holds what self-service deploys to it, for a Kubernetes cluster.
    gitops: Option<Gitops>,
    /// Free labels.
    tags: Vec<String>,
}

/// A cluster's folder in the monorepo's Argo CD layout.
#[derive(ToSchema)]
pub(crate) struct Gitops {
    /// The folder, relative to the monorepo's root (`apps/sp/gpu-sp-01`); its Argo CD turns
    /// each subfolder into an Application.
    folder: String,
}

/// How to reach a Kubernetes cluster with kubectl.
#[derive(ToSchema)]
pub(crate) struct KubernetesAccess {
    /// The API server's address (http(s)).
    api: String,
    /// The PEM certificate of the CA that signs the API server's certificate.
    ca: Option<String>,
    /// The OpenID sign-in the API server accepts.
    oidc: KubernetesOidc,
}

/// A Kubernetes API server's OpenID settings (its `--oidc-*` flags).
#[derive(ToSchema)]
pub(crate) struct KubernetesOidc {
    /// The issuer (http(s)).
    issuer: String,
    /// The public OpenID client kubectl signs in with.
    client_id: String,
    /// What is put before `preferred_username` to make the Kubernetes user name (`oidc:`).
    username_prefix: String,
    /// What is put before each group of the `groups` claim (`oidc:`).
    groups_prefix: String,
}

/// An architectural decision.
#[derive(ToSchema)]
pub(crate) struct Decision {
    /// Identifier.
    id: String,
    /// What it is about.
    topic: String,
    /// What was decided.
    decision: String,
    /// The alternative turned down.
    rejected: String,
    /// Why.
    reason: String,
    /// ADR documents that record it.
    adrs: Vec<String>,
    /// Other documents it refers to.
    refs: Vec<String>,
    /// Layers it concerns.
    layers: Vec<String>,
    /// Items it concerns.
    items: Vec<String>,
}

/// Where a resource stands.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum ResourceState {
    /// Asked for: awaiting approval, approved, or being proposed.
    Pending,
    /// Its pull request is open.
    Proposed,
    /// Its files are on the monorepo's base branch.
    Merged,
    /// The deployment is applying the merged files.
    Syncing,
    /// Applied and healthy: ready to use.
    Live,
    /// Applied but not healthy.
    Degraded,
    /// Its folder is no longer on the base branch.
    Removed,
}

/// What a self-service request made: a folder of the monorepo (a GPU workspace, a PostgreSQL
/// cluster), with its owner and state.
#[derive(ToSchema)]
pub(crate) struct Resource {
    /// Its id: the id of the request that created it.
    id: i64,
    /// The template it was made from.
    template: String,
    /// Who asked for it (username).
    owner: String,
    /// The cluster it runs on, when the template names one.
    cluster: Option<String>,
    /// Its Kubernetes namespace, when its files name one.
    namespace: Option<String>,
    /// Its folder in the monorepo.
    target: String,
    /// Where it stands.
    state: ResourceState,
    /// The requests that made and changed it, oldest first.
    requests: Vec<i64>,
    /// When it expires (`YYYY-MM-DD`), when its template sets a date.
    expires: Option<String>,
    /// How to reach it, once merged.
    access: Option<ResourceAccess>,
    /// Why the state may be out of date or cannot say more, in one English sentence: the base
    /// branch could not be read; Argo CD is not configured (the resource stays `merged`);
    /// Argo CD cannot be reached or has no Application for the folder (the last error); what
    /// Argo CD says while it is syncing or degraded.
    note: Option<String>,
    /// Its deployment after the merge (set once merged).
    deployment: Option<ResourceDeployment>,
    /// When it was first asked for.
    created_at: String,
}

/// A merged resource's deployment, as followed in Argo CD (`MIRANTE_ARGOCD_URL`).
#[derive(ToSchema)]
pub(crate) struct ResourceDeployment {
    /// Whether the portal follows it: `false` when Argo CD is not configured, and the
    /// resource then stays `merged`.
    followed: bool,
    /// The Argo CD Application whose `spec.source.path` (or one of `spec.sources[].path`) is
    /// the resource's folder, once found.
    #[schema(example = "ws-nlp")]
    application: Option<String>,
    /// The commit of the base branch that must be deployed: the merge commit, or where the
    /// forge does not tell it, the base branch's head when the merge was first followed.
    merge_commit: Option<String>,
    /// The revision Argo CD last reported for the Application (`status.sync.revision`).
    revision: Option<String>,
    /// What Argo CD said: why it is degraded (`status.health.message`, a condition's or the
    /// last operation's message) or why it is still syncing.
    message: Option<String>,
    /// The last error asking Argo CD (down, refusing the token, no Application for the
    /// folder); cleared by its next good answer. The state stays the last one Argo CD gave.
    error: Option<String>,
    /// When Argo CD was last asked (RFC 3339, UTC).
    checked_at: Option<String>,
}

/// How to reach a resource.
#[derive(ToSchema)]
pub(crate) struct ResourceAccess {
    /// The file of its folder that explains how to use it (its README), if any.
    readme: Option<String>,
    /// Shell commands to copy, in order. Never a secret: a database password is read from
    /// the cluster by its owner.
    commands: Vec<String>,
    /// A kubeconfig for the resource's namespace that signs in through `kubectl oidc-login`,
    /// when the catalog records how to reach its cluster (no credential in it).
    kubeconfig: Option<String>,
    /// Where a database is reached inside the cluster (`appdb-rw.ws-nlp.svc:5432`).
    host: Option<String>,
    /// The Kubernetes Secret that holds a database's credentials (its name, never its value).
    secret: Option<String>,
}

/// A pending task or an open decision.
#[derive(ToSchema)]
pub(crate) struct Task {
    /// Identifier.
    id: String,
    /// What is to be done or decided.
    title: String,
    /// Task or open decision.
    kind: TaskKind,
    /// Layer or capability.
    layer: String,
    /// Items it moves forward.
    items: Vec<String>,
    /// Sites it concerns.
    sites: Vec<String>,
    /// How urgent.
    priority: Option<Priority>,
    /// Tasks or items that must be done first.
    after: Vec<String>,
    /// Free notes.
    notes: String,
}

/// Counts of items per state.
#[derive(ToSchema)]
pub(crate) struct StateCounts {
    /// Validated items.
    validated: u32,
    /// Declared items.
    declared: u32,
    /// Desired items.
    desired: u32,
}

/// One row of the overview matrix.
#[derive(ToSchema)]
pub(crate) struct OverviewRow {
    /// Layer id.
    layer: String,
    /// Label.
    number: String,
    /// Layer name.
    name: String,
    /// Ordered layer or capability.
    kind: LayerKind,
    /// Counts per site, in the order of `sites`.
    per_site: Vec<StateCounts>,
    /// Counts of platform-wide items.
    platform_wide: StateCounts,
    /// Counts over the row.
    total: StateCounts,
}

/// The layers × sites matrix with counts per state.
#[derive(ToSchema)]
pub(crate) struct Overview {
    /// Columns: `[site id, site name]` pairs.
    #[schema(value_type = Vec<Vec<String>>, example = json!([["franca", "Franca"], ["sp", "São Paulo"]]))]
    sites: Vec<(String, String)>,
    /// One row per top-level layer, then per capability.
    rows: Vec<OverviewRow>,
    /// Counts over the whole catalog.
    totals: StateCounts,
}

/// A problem in the catalog, with its position.
#[derive(ToSchema)]
pub(crate) struct Diagnostic {
    /// File relative to the catalog root.
    file: String,
    /// 1-based line; 0 when the problem has no position in a file.
    line: u64,
    /// 1-based column in characters.
    column: u64,
    /// What is wrong.
    message: String,
}

/// Where the catalog is read from.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[serde(tag = "kind")]
pub(crate) enum CatalogSource {
    /// The demo catalog built into the binary.
    Embedded,
    /// A directory of YAML files.
    Dir {
        /// The directory: its whole path for admins, its last component for everyone else.
        path: String,
    },
    /// A folder of a branch of a git repository (the local monorepo).
    Git {
        /// The repository's directory: its whole path for admins, its last component for
        /// everyone else.
        repo: String,
        /// The branch.
        branch: String,
        /// The folder in the repository (`catalog`).
        dir: String,
    },
}

/// What caused a reload.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[serde(tag = "kind")]
pub(crate) enum ReloadTrigger {
    /// The first load at start-up.
    Startup,
    /// SIGHUP.
    Signal,
    /// The refresh timer.
    Timer,
    /// `POST /api/v1/catalog/reload`.
    Api {
        /// The signed-in admin (username) who asked.
        user: String,
        /// The caller's address.
        peer: String,
    },
    /// An admin merged a request's pull request into the local monorepo.
    Merge {
        /// The admin (username).
        user: String,
        /// The request.
        request: i64,
    },
    /// Another replica was asked to reload, and this one followed.
    Peer,
}

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

#[cfg(test)]
mod tests {
    use mirante_domain::{
        Decision, Evidence, Gitops, Gpu, Host, HostGroup, IacRef, Item, ItemKind, KubernetesAccess,
        KubernetesOidc, Layer, LayerKind, Priority, Qualifier, Section, Site, State, Task,
        TaskKind,
    };
    use serde_json::Value;
    use utoipa::{
        PartialSchema,
        openapi::{RefOr, Schema},
    };

    /// The property names of an object schema.
    fn properties<T: PartialSchema>() -> Vec<String> {
        match T::schema() {
            RefOr::T(Schema::Object(o)) => {
                let mut p: Vec<String> = o.properties.keys().cloned().collect();
                p.sort();
                p
            }
            _ => panic!("not an object schema"),
        }
    }

    fn keys(v: &Value) -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    }

    fn item() -> Item {
        Item {
            id: "i".into(),
            name: "I".into(),
            kind: ItemKind::Component,
            layer: "l0".into(),
            sites: vec!["sp".into()],
            hosts: vec!["h".into()],
            state: State::Validated,
            qualifier: Some(Qualifier::Partial),
            notes: "n".into(),
            evidence: vec![Evidence::Reference {
                text: "t".into(),
                url: Some("u".into()),
            }],
            iac: Some(IacRef {
                path: "p".into(),
                key: Some("k".into()),
            }),
            reason: Some("r".into()),
            criterion: Some("c".into()),
            depends_on: vec!["d".into()],
            decisions: vec!["x".into()],
            phase: Some("mvp".into()),
            gpus: vec![Gpu {
                model: "A5000".into(),
                count: 1,
            }],
            kubernetes: Some(KubernetesAccess {
                api: "https://k".into(),
                ca: None,
                oidc: KubernetesOidc {
                    issuer: "https://i".into(),
                    client_id: "c".into(),
                    username_prefix: "oidc:".into(),
                    groups_prefix: "oidc:".into(),
                },
            }),
            gitops: Some(Gitops {
                folder: "apps/sp/k".into(),
            }),
            tags: vec!["t".into()],
        }
    }

    #[test]
    fn kubernetes_access_schemas_match_what_the_catalog_serializes() {
        let item = serde_json::to_value(item()).unwrap();
        assert_eq!(
            keys(&item["kubernetes"]),
            properties::<super::KubernetesAccess>()
        );
        assert_eq!(
            keys(&item["kubernetes"]["oidc"]),
            properties::<super::KubernetesOidc>()
        );
        assert_eq!(keys(&item["gitops"]), properties::<super::Gitops>());
    }

    #[test]
    fn roadmap_schemas_match_what_the_roadmap_serializes() {
        let catalog = mirante_domain::load_files(vec![(
            "c.yaml".to_owned(),
            "layers: [{id: l0, kind: layer, number: '0', name: L}]\n\
             phases: [{id: mvp, name: MVP, order: 1}]\n\
             items:\n\
             - {id: a, name: A, kind: component, layer: l0, state: desired}\n\
             - {id: b, name: B, kind: component, layer: l0, state: desired, depends_on: [a],\n\
                phase: mvp, sites: []}\n\
             tasks: [{id: t, title: T, layer: l0, after: [a]}]\n"
                .to_owned(),
        )])
        .unwrap()
        .into_snapshot(None);
        let r = mirante_domain::roadmap::Roadmap::of(&catalog);
        let json = serde_json::to_value(&r).unwrap();

        assert_eq!(keys(&json), properties::<super::Roadmap>());
        assert_eq!(keys(&json["items"][1]), properties::<super::RoadmapItem>());
        assert_eq!(
            keys(&json["items"][1]["blocked_by"][0]),
            properties::<super::Blocker>()
        );
        assert_eq!(keys(&json["tasks"][0]), properties::<super::RoadmapTask>());
        assert_eq!(
            keys(&json["phases"][0]),
            properties::<super::RoadmapPhase>()
        );
        assert_eq!(
            keys(&json["progress"]),
            properties::<super::RoadmapProgress>()
        );
        assert_eq!(
            keys(&json["progress"]["layers"][0]),
            properties::<super::Progress>()
        );
    }

    #[test]
    fn the_finding_schema_is_the_finding_plus_its_link() {
        let item = item();
        let catalog = mirante_domain::Catalog {
            items: vec![Item {
                state: State::Declared,
                iac: None,
                ..item
            }],
            ..Default::default()
        };
        let options = mirante_domain::lint::LintOptions {
            today: "2026-01-01".parse().unwrap(),
            stale_after_days: 1,
        };
        let finding = mirante_domain::lint::lint(&catalog, &options).remove(0);
        let view = crate::http::api::roadmap::FindingView {
            link: "/items/i".into(),
            finding,
        };

        assert_eq!(
            keys(&serde_json::to_value(view).unwrap()),
            properties::<super::Finding>()
        );
    }

    #[test]
    fn item_schema_lists_exactly_the_fields_an_item_serializes() {
        let json = serde_json::to_value(item()).unwrap();

        assert_eq!(keys(&json), properties::<super::Item>());
    }

    #[test]
    fn layer_decision_and_task_schemas_match_their_serialized_fields() {
        let layer = Layer {
            id: "l0".into(),
            kind: LayerKind::Layer,
            number: "0".into(),
            name: "L".into(),
            parent: Some("p".into()),
            role: "r".into(),
            components: vec!["c".into()],
            rationale: "r".into(),
            priority: Some(Priority::Mvp),
            notes: "n".into(),
            sections: vec![Section {
                title: "t".into(),
                entries: vec!["e".into()],
            }],
        };
        let decision = Decision {
            id: "d".into(),
            topic: "t".into(),
            decision: "d".into(),
            rejected: "r".into(),
            reason: "r".into(),
            adrs: vec!["ADR-001".into()],
            refs: vec!["Tiers".into()],
            layers: vec!["l0".into()],
            items: vec!["i".into()],
        };
        let task = Task {
            id: "t".into(),
            title: "T".into(),
            kind: TaskKind::Task,
            layer: "l0".into(),
            items: vec!["i".into()],
            sites: vec!["sp".into()],
            priority: Some(Priority::Critical),
            after: vec!["x".into()],
            notes: "n".into(),
        };

        assert_eq!(
            keys(&serde_json::to_value(layer).unwrap()),
            properties::<super::Layer>()
        );
        assert_eq!(
            keys(&serde_json::to_value(decision).unwrap()),
            properties::<super::Decision>()
        );
        assert_eq!(
            keys(&serde_json::to_value(task).unwrap()),
            properties::<super::Task>()
        );
    }

    #[test]
    fn resource_schema_lists_every_field_a_resource_serializes() {
        use mirante_domain::resource::{Access, Deployment, Resource, ResourceState};
        let resource = Resource {
            id: 1,
            template: "gpu-workspace".into(),
            owner: "rui".into(),
            owner_user_id: 7,
            cluster: Some("gpu-sp-01".into()),
            namespace: Some("ws-llm".into()),
            target: "clusters/gpu-sp-01/workspaces/llm".into(),
            state: ResourceState::Merged,
            requests: vec![1],
            expires: Some("2027-01-01".into()),
            access: Some(Access {
                readme: Some("README.md".into()),
                commands: vec!["kubectl -n ws-llm get pods".into()],
                kubeconfig: Some("apiVersion: v1".into()),
                host: None,
                secret: None,
            }),
            note: Some("n".into()),
            deployment: Some(Deployment {
                followed: true,
                application: Some("ws-llm".into()),
                ..Deployment::default()
            }),
            created_at: "2026-12-03T10:00:00Z".into(),
        };
        let json = serde_json::to_value(&resource).unwrap();
        assert_eq!(keys(&json), properties::<super::Resource>());
        assert_eq!(keys(&json["access"]), properties::<super::ResourceAccess>());
        assert_eq!(
            keys(&json["deployment"]),
            properties::<super::ResourceDeployment>()
        );
    }

    #[test]
    fn site_schema_is_the_site_plus_its_hosts() {
        let site = Site {
            id: "sp".into(),
            name: "São Paulo".into(),
            location: "l".into(),
            notes: "n".into(),
            host_groups: vec![HostGroup {
                id: "g".into(),
                name: "G".into(),
                pattern: "p-*".into(),
                count: Some(2),
                notes: "n".into(),
            }],
        };
        let host = Host {
            id: "h".into(),
            site: "sp".into(),
            group: Some("g".into()),
            tier: Some("1".into()),
            roles: vec!["r".into()],
            gpus: vec![],
            notes: "n".into(),
        };
        let mut site_keys = keys(&serde_json::to_value(site).unwrap());
        site_keys.push("hosts".into());
        site_keys.sort();

        assert_eq!(site_keys, properties::<super::Site>());
        assert_eq!(
            keys(&serde_json::to_value(host).unwrap()),
            properties::<super::Host>()
        );
    }
}
