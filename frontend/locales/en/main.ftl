# Mirante — English

nav-label = Main navigation
nav-overview = Overview
nav-catalog = Catalog
nav-decisions = Decisions
lang-label = Language
footer-text = Mirante reads the catalog from the devops monorepo; change it there, through a pull request.

loading = Loading…
error-loading = Could not load this page.
none = None.
not-found-title = Not found
not-found-text = Nothing in the catalog has this address.

state-validated = Validated
state-declared = Declared
state-desired = Desired
state-validated-help = Works in production today, with real traffic or data.
state-declared-help = Exists in the infrastructure code but is not applied or validated in production.
state-desired-help = An architectural decision on the roadmap, with no code and no validation yet.

qualifier-partial = partial
qualifier-in_progress = in progress
qualifier-deferred = deferred
qualifier-rejected = rejected
qualifier-future = future

priority-critical = critical
priority-mvp = MVP
priority-later = phase 2–3
priority-normal = normal

totals-label = Totals per state
tasks-pending = Pending tasks
matrix-title = Layers × sites
matrix-layer = Layer
matrix-platform-wide = Platform-wide
matrix-total = Total
matrix-note = Each cell counts the items of a layer at a site, by state. Click a number to see those items.

catalog-title = Catalog
filters-label = Filters
filter-any = Any
filter-state = State
filter-qualifier = Qualifier
filter-site = Site
filter-layer = Layer
search-placeholder = Search the catalog…
search-button = Search
items-count = { $count ->
    [one] 1 item
   *[other] { $count } items
}
items-shown = (showing the first { $shown })
items-none = No item matches these filters.
col-item = Item
col-state = State
col-layer = Layer
col-sites = Sites
platform-wide = platform-wide

layer-heading = Layer { $number } — { $name }
layer-kind-layer = Layer
layer-kind-capability = Cross-cutting capability
layer-role = Role
layer-rationale = Why here
layer-components = Components
layer-children = Sub-layers
layer-items = Items

item-evidence = Evidence
item-no-evidence = Marked validated but no evidence is recorded.
item-no-iac = Marked declared but no infrastructure-code reference is recorded.
item-desired-nothing = Desired: nothing is built yet, so there is no evidence to show.
item-iac = IaC
item-reason = Rejected because:
item-criterion = Deferred until:
item-depends-on = Depends on
item-dependents = Needed by
item-hosts = Hosts
item-gpus = GPUs
item-phase = Roadmap phase
item-tags = Tags

evidence-reference = reference
evidence-attestation = attestation
evidence-probe = probe
evidence-argocd = Argo CD

task-kind-decision = open decision
task-after = only after:

decisions-title = Architectural decisions
decisions-lead = What was decided, what was turned down, and why.
decision-topic = Topic
decision-decision = Decision
decision-rejected = Rejected alternative
decision-reason = Reason
decision-adr = ADR

sign-in = Sign in
sign-out = Sign out
role-admin = admin
role-researcher = researcher
dev-login-banner = development sign-in
dev-login-help = This portal runs without an identity provider: anyone on this machine can pick a demo user.

nav-sites = Sites
sites-title = Sites
sites-host-groups = Proxmox host groups
sites-hosts-count = { $count ->
    [one] 1 host
   *[other] { $count } hosts
}
sites-named-hosts = Hosts named in the catalog
sites-host = Host
sites-tier = Tier
sites-roles = Roles
sites-gpu-clusters = GPU clusters
principles-title = Principles
