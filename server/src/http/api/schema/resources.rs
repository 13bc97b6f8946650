//! Schemas of the resources that self-service requests made, with their deployment and
//! how to reach them.

// Fields are read only by the schema derive.
#![expect(
    dead_code,
    reason = "schema-only types: never constructed, only described"
)]

use utoipa::ToSchema;

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

/// A resource as `GET /api/v1/resources/{id}` answers it: the resource's fields, the version
/// of its template its files were rendered with, and the update its template offers since.
#[derive(ToSchema)]
pub(crate) struct ResourceDetail {
    /// The resource's fields.
    #[serde(flatten)]
    resource: Resource,
    /// The template version its files were rendered with: the manifest's `version`, else
    /// `sha256:` and 12 hex digits of the template's files; `null` when made before versions
    /// were recorded.
    template_version: Option<String>,
    /// `null` when the template is at the resource's version or renders the same files; else
    /// what its current version changes.
    update: Option<TemplateUpdate>,
}

/// What a template's current version changes in one resource's files.
#[derive(ToSchema)]
pub(crate) struct TemplateUpdate {
    /// The template's current version.
    version: String,
    /// Each file that changes, with its unified diff against the base branch.
    files: Vec<UpdateFile>,
    /// Parameters the new version asks for that the resource's values lack or no longer
    /// satisfy: given as `values` of the update request.
    needs: Vec<String>,
}

/// One file an update changes.
#[derive(ToSchema)]
pub(crate) struct UpdateFile {
    /// Its path in the monorepo.
    path: String,
    /// Its unified diff against the base branch.
    diff: String,
}
