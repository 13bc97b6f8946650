# Mirante — English

nav-label = Main navigation
nav-overview = Overview
nav-catalog = Catalog
nav-decisions = Decisions
lang-label = Language
skip-to-content = Skip to content
menu = Menu
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
items-range = ({ $from }–{ $to } on this page)
pager-label = Pages of the list
pager-previous = ← Previous
pager-next = Next →
pager-position = Page { $page } of { $pages }
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
site-kicker = Site
site-items = Items at this site
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

## Sign-in, profile and message pages (server-rendered)
auth-sign-in = Sign in
auth-intro = Mirante is the platform team’s catalogue and self-service portal: what the platform offers at each site and in what state, what is decided and what comes next, and the forms that turn a request for a GPU workspace or a database into a reviewed pull request.
auth-continue = Continue
auth-detail = Details:
auth-dev-banner = Development sign-in: no identity provider is configured (MIRANTE_OIDC_ISSUER is unset). Anyone who can reach this page can sign in as any demo user.
auth-sign-in-as = Sign in as { $name }
auth-demo-admin = admin (group { $group })
auth-profile = Profile
auth-username = Username
auth-email = E-mail
auth-role = Role
auth-groups = Groups
auth-new-token = New token “{ $name }”
auth-new-token-once = Copy it now: it is not shown again.
auth-api-tokens = API tokens
auth-api-tokens-help = For scripts and CI, send this header to the JSON API:
auth-token-name = Name
auth-token-already-made = This form was sent again: the token was made the first time, and its value was shown only then. Revoke it below if it was lost.
auth-token-created = Created
auth-token-status = Status
auth-token-revoke = Revoke
auth-token-create = Create token
auth-token-revoked-at = revoked { $when }
auth-token-last-used-at = last used { $when }
auth-token-never-used = never used
auth-token-expires = Expires
auth-token-no-expiry = no expiry (made before tokens expired)
auth-token-expired = expired
auth-token-days = Days until it expires
auth-back = Back to the portal
auth-msg-session-expired-title = Session expired
auth-msg-session-expired-text = Your session has reached its maximum lifetime. Please sign in again.
auth-msg-sign-in-required-title = Sign-in required
auth-msg-sign-in-required-text = Please sign in first.
auth-msg-degraded-title = The portal is degraded
auth-msg-degraded-text = The portal cannot reach its database at the moment. Nothing you did is lost; try again in a few seconds.
auth-msg-admins-only-title = Not allowed
auth-msg-admins-only-text = This page is for admins.
auth-msg-cross-origin-title = Request refused
auth-msg-cross-origin-text = This form was not sent from a page of the portal.
auth-msg-too-many-title = Too many attempts
auth-msg-too-many-text = Too many requests of this kind came from your address. Wait a minute, then try again.
auth-msg-no-provider-title = Not found
auth-msg-no-provider-text = No OpenID provider is configured.
auth-msg-provider-unreachable-title = Sign-in unavailable
auth-msg-provider-unreachable-text = The identity provider cannot be reached right now. Please try again in a moment.
auth-msg-dev-login-off-title = Not found
auth-msg-dev-login-off-text = The development sign-in is off.
auth-msg-unknown-demo-user-title = Unknown demo user
auth-msg-unknown-demo-user-text = Pick one of the demo users.
auth-msg-bad-csrf-title = Request refused
auth-msg-bad-csrf-text = This form has expired or was not sent from your session. Reload the page and try again.
auth-msg-no-such-token-title = No such token
auth-msg-no-such-token-text = That token does not exist or is already revoked.
auth-msg-not-found-title = Page not found
auth-msg-not-found-text = There is no page at this address.
auth-msg-wrong-method-title = Not allowed
auth-msg-wrong-method-text = This address does not take this kind of request.
auth-fail-no-attempt-title = Sign-in failed
auth-fail-no-attempt-text = Sign-in failed: no sign-in is in progress (it expired, or this link was already used).
auth-fail-provider-error-title = Sign-in failed
auth-fail-provider-error-text = Sign-in failed: the identity provider answered with an error.
auth-fail-no-code-title = Sign-in failed
auth-fail-no-code-text = Sign-in failed: the identity provider sent no code or state.
auth-fail-state-mismatch-title = Sign-in failed
auth-fail-state-mismatch-text = Sign-in failed: state mismatch (the answer does not belong to a sign-in started here).
auth-fail-rejected-title = Sign-in failed
auth-fail-rejected-text = Sign-in failed: the identity provider's answer could not be verified.

## Roadmap, dependency graph and findings
nav-roadmap = Roadmap
nav-findings = Findings
roadmap-title = Roadmap
roadmap-lead = What is done, what is ready to start (everything it depends on is validated) and what is blocked, and by what. Progress counts items per state.
roadmap-graph-link = Dependency graph
roadmap-export-md = Markdown
roadmap-export-csv = CSV
roadmap-phases = Phases
roadmap-unphased = Not planned in a phase
roadmap-share = { $pct }% validated · { $validated } validated, { $declared } declared, { $desired } desired of { $total }
roadmap-progress-sites = Progress by site
roadmap-progress-layers = Progress by layer
roadmap-blocked-by = blocked by
roadmap-via = through { $name }
roadmap-tasks = Pending tasks
roadmap-tasks-lead = Critical and MVP first; a task is blocked while a task it comes after is pending or an item it waits for is not validated.
roadmap-col-priority = Priority
roadmap-col-task = Task
roadmap-col-status = Status
status-done = done
status-ready = ready
status-blocked = blocked
roadmap-graph-title = Dependency graph
graph-svg-title-to = Dependency graph, critical path to { $name }
roadmap-graph-lead = Items that depend on others, layered left to right: each column waits for the columns on its left. Click a node to see the critical path to it; the path lists each item with a link to its page.
roadmap-graph-to = Critical path to
roadmap-graph-none = (none)
roadmap-graph-show = Show
roadmap-graph-unknown = There is no item with that id; the graph is shown without a path.
roadmap-graph-path = Critical path:
roadmap-graph-legend-blocked = dashed border: blocked
roadmap-graph-legend-path = heavy orange: critical path
roadmap-graph-note = The same drawing as a file:

## Catalog history (from the monorepo's git history)
history-title = State changes
history-new = new
history-removed = removed
history-none = No state change of this item is recorded in the monorepo's history.
history-unavailable-directory = The catalog is read from a directory, which keeps no history: state changes come from the monorepo's git history.
history-unavailable-embedded = The catalog is the demo built into the portal, which keeps no history: state changes come from the monorepo's git history.
history-unavailable-unreadable = The monorepo's history could not be read right now.
history-col-date = Date
history-col-commit = Commit
burnup-title = Progress over time
burnup-lead = Items per state at each commit of the monorepo that changed the catalog: validated at the bottom, then declared, then desired.
burnup-chart-title = Items per state over time
burnup-desc = From { $from } to { $to }: validated { $validated_from } → { $validated_to }, declared { $declared_from } → { $declared_to }, desired { $desired_from } → { $desired_to }.
burnup-axis = items
burnup-empty = The catalog has no revision in the monorepo's history yet.
burnup-skipped = { $count ->
    [one] One commit whose catalog did not load is left out.
   *[other] { $count } commits whose catalog did not load are left out.
}
burnup-table = The same numbers as a table
findings-title = Findings
findings-lead = What the catalog claims and its evidence does not back. Errors make catalog check fail; warnings and information do not.
findings-none = No findings: every claim is backed.
severity-error = Errors
severity-warning = Warnings
severity-info = Information
finding-validated-without-evidence = Validated, but no evidence (probe, Argo CD application, attestation or reference).
finding-validated-only-free-text = Validated on free text only: add a probe, an Argo CD application, a dated attestation or an IaC reference.
finding-attestation-stale = Attestation by { $by } on { $date } is { $age } days old (limit { $days }).
finding-attestation-date-invalid = Attestation by { $by } has date “{ $date }”, not a past date (YYYY-MM-DD).
finding-declared-without-iac = Declared, but no IaC reference says where the code is.
finding-validated-depends-on-unvalidated = Validated, but depends on { $dependency }, which is { $state }.
finding-deferred-without-criterion = Deferred, but no criterion says when it is taken up.
finding-rejected-without-reason = Rejected, but no reason says why.
finding-iac-path-outside = IaC path { $path } is absolute or leaves the monorepo.
finding-iac-path-missing = IaC path { $path } does not exist in the monorepo.
finding-iac-key-missing = IaC key { $key } not found in { $path }.
finding-iac-unreadable = Cannot look up key { $key } in { $path }: { $error }
finding-declared-not-real = Declared in { $path }, but not validated in production.
finding-declared-not-real-key = Declared in { $path } (key { $key }), but not validated in production.
severity-one-error = error
severity-one-warning = warning
severity-one-info = info

## Self-service: templates, forms, previews and requests
nav-self-service = Self-service
nav-requests = Requests
ss-title = Self-service
ss-intro = Ask for what you need through a form: the portal turns it into a pull request on the devops monorepo and follows it until it is merged.
ss-no-templates = No template is available to you.
ss-start = Start
ss-see-requests = See your requests
ss-problems-link = Templates that did not load
ss-needs-approval = Needs approval
ss-step-form = Form
ss-step-preview = Preview
ss-choose = Choose…
ss-capacity = { $count ->
    [one] { $count } GPU
   *[other] { $count } GPUs
}
ss-one-per-line = One per line.
ss-preview-button = Preview the files
ss-cancel = Cancel
ss-target = Target directory
ss-compared-with = Compared with
ss-approval = Approval
ss-approval-required = An admin approves it before the pull request is opened.
ss-approval-none = No approval needed: the pull request is opened right away.
ss-files-count = { $count ->
    [one] { $count } file
   *[other] { $count } files
}
ss-submit = Submit the request
ss-back-to-edit = Back to edit
ss-file-added = added
ss-file-modified = changed
ss-file-unchanged = unchanged
ss-problems-title = Template problems
ss-problems-intro = Templates with problems are left out of self-service; the others keep working. Fix the file and reload.
ss-problems-none = Every template loaded.
ss-problem-where = Where
ss-problem-what = Problem
ss-item = Item
ss-err-not_an_object = The values must be an object of parameter names to values.
ss-err-unknown_field = This template has no parameter { $field }.
ss-err-required = A value is required.
ss-err-wrong_type = Expected a { $expected }.
ss-err-too_small = Must be at least { $minimum }.
ss-err-too_large = Must be at most { $maximum }.
ss-err-too_short = At least { $min_length } characters.
ss-err-too_long = At most { $max_length } characters.
ss-err-not_in_enum = Must be one of: { $allowed }.
ss-err-pattern = Does not have the expected form ({ $pattern }).
ss-err-pattern-words = Does not have the expected form: { $words }
ss-err-not_dns_label = Lowercase letters, digits and hyphens only, starting and ending with a letter or digit, at most 63 characters.
ss-err-not_external_url = An http:// or https:// address of a service on the network; not this machine (localhost, 127.0.0.1) nor the cloud metadata service (169.254.x.x).
ss-err-forbidden_character = Contains the control or invisible character { $character }.
ss-err-not_an_option = Not one of the catalog's options: { $allowed }.
ss-err-exceeds_capacity = { $value } asked for, but { $option } has { $capacity } ({ $detail }).
ss-err-not_on_cluster = { $count ->
    [0] You have no workspace namespace on { $cluster } yet.
   *[other] Not on { $cluster }: yours there are { $allowed }.
}
ss-no-namespace = You have no GPU workspace on this cluster yet: a database runs in the namespace of one of your workspaces.
ss-no-namespace-any = You have no GPU workspace on any cluster yet: a database runs in the namespace of one of your workspaces.
ss-no-namespace-link = Ask for a GPU workspace
ss-err-exceeds_free_capacity = Asks { $value }, { $option } has { $capacity }, { $allocated } allocated to { $holders }.
ss-gpus-free = { $free } / { $total } GPUs free
ss-err-too_few_items = At least { $min_items }.
ss-err-too_many_items = At most { $max_items }.
ss-err-duplicate_item = Repeats an earlier item.
ss-err-unsafe_path = This value cannot be used in a file path.
ss-err-invalid_catalog = The catalog would be invalid: { $file }:{ $line }: { $problem }
ss-err-needs_verifiable_evidence = Validated needs evidence someone can check: a probe, an Argo CD application, a dated attestation (who, what, when) or the item's IaC reference. Free text is not enough.
req-state-submitted = submitted
req-state-awaiting_approval = awaiting approval
req-state-approved = approved
req-state-rejected = rejected
req-state-proposing = proposing
req-state-proposed = proposed
req-state-merged = merged
req-state-closed = closed
req-state-failed = failed
req-title = Requests
req-new = New request
req-all = Everyone's requests, those awaiting approval first.
req-mine = Your requests, newest first.
req-none = No requests yet.
req-col-template = Request
req-col-author = Author
req-col-state = State
req-col-created = Created
req-page-title = Request #{ $id }
req-last-error = Last error:
req-decide = Decision
req-four-eyes = You made this request: another admin approves and merges it.
req-comment-optional = Comment (optional)
req-overcommit-reason = Overcommit reason (only to approve more GPUs than the cluster has free)
req-overcommitted = Overcommitted:
req-comment-required = Why reject it? (required)
req-approve = Approve
req-reject = Reject
req-merge = Merge
req-merge-help = The pull request is on the portal's local monorepo: merge it here.
req-timeline = Timeline
req-branch = Branch
req-pull-request = Pull request
req-change-title = Proposed change
req-change-open = open
req-change-merged = merged
req-change-closed = closed
req-change-into = { $branch } into { $base }
req-change-commits = Commits
req-change-more-files = More files changed than are listed here.
req-no-pr = Not opened yet
req-values = Values
req-no-pr-rejected = None: the request was rejected
req-merge-open = Merge…
req-merge-confirm = Confirm the merge
req-merge-what = This merges branch { $branch } into the monorepo's main branch: { $count ->
    [one] one file
   *[other] { $count } files
} under { $target }. The portal cannot undo it.
req-next-heading = What happens next:
req-next-submitted = the portal checks the request and sends it for approval or straight to a pull request.
req-next-awaiting_approval = an admin reviews the request and approves or rejects it. You see their decision here, with their comment.
req-next-approved = the portal opens a branch and a pull request with exactly the files shown below, in a few seconds.
req-next-proposing = the branch and pull request are being opened; this page shows the pull request when it is there.
req-next-proposed = the pull request waits for its merge; once merged, Argo CD applies the files to the cluster.
req-next-merged = nothing: the files are on the main branch and Argo CD applies them. To change them, make a new request.
req-next-rejected = nothing: no branch was opened. Read the comment above, then ask again with changes if it still makes sense.
req-next-closed = nothing: the request was withdrawn, or its pull request closed without a merge. Ask again if it still makes sense.
req-next-failed = an admin looks at the error above; the portal retries what it can. Make a new request if it stays failed.

## Live evidence checks (probes and Argo CD)
finding-probe-failing = Probe of { $url } fails: { $reason }
finding-argocd-unhealthy = Argo CD application { $app }: { $reason }

## Home dashboard (admins)
dash-title = Needs attention
dash-findings = Lint findings
dash-findings-link = All findings →
dash-checks = Live checks failing now
dash-checks-summary = { $failing } of { $total } checks failing · last run { $when }
dash-checks-never = The live checks have not run yet.
dash-checks-none = The catalog has no live checks (probes or Argo CD applications).
dash-checks-link = Findings from the live checks →
dash-check-probe = probe
dash-check-argocd = Argo CD
dash-tasks = Pending tasks
dash-tasks-summary = { $count ->
    [one] One pending task
   *[other] { $count } pending tasks
}, most urgent first
dash-tasks-by-priority = By priority
dash-tasks-by-site = By site
dash-tasks-platform-wide = platform-wide
dash-tasks-link = Roadmap →
priority-none = no priority
dash-approvals = Requests awaiting approval
dash-approvals-summary = { $count ->
    [0] No request awaits a decision.
    [one] One request awaits a decision.
   *[other] { $count } requests await a decision.
}
dash-approvals-by = { $target } by { $author }
dash-approvals-link = Requests awaiting approval →
dash-resources = Resources per cluster
dash-resources-none = none yet
dash-resources-link = All resources →
dash-changes = Recent state changes
dash-changes-unavailable = History not available: the catalog is not read from the monorepo's git history.
dash-changes-none = No state changes recorded.
dash-change-new = new
dash-changes-link = Roadmap →

## The roadmap as Markdown (/roadmap.md)
md-title = Roadmap — { $platform }
md-catalog = Catalog { $hash }.
md-catalog-at = Catalog { $hash } at revision { $revision }.
md-legend = Status: **done** = validated; **ready** = every dependency validated; **blocked** = waits for something not done.
md-overall = Overall: { $share }
md-col-status = status
md-col-item = item
md-col-state = state
md-col-blocked-by = blocked by
md-col-priority = priority
md-col-task = task
md-col-sites = sites
md-col-progress = progress

## An admin's change of a catalog item
change-title = Propose a change
change-lead = The change becomes a pull request on the devops monorepo: only the item's state, qualifier and evidence lines change in its catalog file.
change-state = State
change-qualifier = Qualifier
change-qualifier-none = none
change-evidence = Evidence
change-keep-help = Entries left unchecked are removed.
change-add-attestation = Add an attestation
change-by = Checked by
change-date = On
change-what = What was checked
change-attestation-help = Leave the three fields empty to add none.
change-iac-kept = kept: an IaC reference is edited in the catalog file
change-add-other = Add a probe, an Argo CD application or a reference
change-probe-url = Probe address (http or https)
change-probe-status = Expected status
change-argocd-app = Argo CD application
change-argocd-instance = Argo CD instance (site), if not the default
change-ref-text = Reference: what it shows
change-ref-url = Reference address (http or https), if any
change-other-help = Each is added when its first field is filled in.
change-reason = Reason
change-reason-help = Why the item changes; shown on the request and in the pull request.
change-preview = Preview the change
change-file = Catalog file
change-evidence-same = unchanged
change-no-approval = none in the portal: the pull request is reviewed on the forge
change-propose = Propose the change
change-back = Back to the item

## Resources: what the requests made
nav-resources = Resources
res-title = Resources
res-mine = What your requests made: where it is, its state, when it expires and how to reach it.
res-all = Everyone's resources, per cluster.
res-none = No resources yet. A request you make becomes one here.
res-no-cluster = No cluster
res-template = Template
res-owner = Owner
res-cluster = Cluster
res-folder = Folder in the monorepo
res-expires = Expires
res-requests = Requests
res-access = How to reach it
res-readme = Instructions in the folder's
res-host = Inside the cluster at
res-secret = Credentials in the Secret
res-kubeconfig = Kubeconfig for this namespace
res-kubeconfig-help = Save it as ~/.kube/config or point KUBECONFIG at it; kubectl signs you in through the portal's identity provider with the oidc-login plugin (kubectl krew install oidc-login). It holds no password.
res-state-pending = pending
res-state-proposed = proposed
res-state-merged = merged
res-state-syncing = syncing
res-state-live = live
res-state-degraded = degraded
res-state-removing = removing
res-state-removed = removed
res-next-pending = Waiting for an admin's approval or for its pull request to open.
res-next-proposed = Its pull request is open; it exists once merged.
res-next-merged = Merged; how to reach it shows here.
res-next-removing = Its removal is merged; Argo CD still runs it and its GPUs stay held until Argo CD deletes its application.
res-next-removed = Its folder is no longer in the monorepo.
res-deploy-not-followed = Argo CD is not configured for this portal, so it cannot tell whether the files are applied on the cluster: the resource stays "merged".
res-deploy-waiting = Waiting for Argo CD's first answer about this folder.
res-deploy-app = Argo CD application
res-deploy-at = at revision
res-deploy-says = Argo CD says:
res-deploy-error = Argo CD cannot tell right now, so the state shown is the last one it gave. Last error:

## Notifications: e-mail and webhook texts, the profile's e-mail choice
notify-subject-awaits-approval = [Mirante] Request #{ $id } awaits your approval: { $title }
notify-subject-approved = [Mirante] Request #{ $id } approved: { $title }
notify-subject-rejected = [Mirante] Request #{ $id } rejected: { $title }
notify-subject-proposed = [Mirante] Request #{ $id } proposed: { $title }
notify-subject-merged = [Mirante] Request #{ $id } merged: { $title }
notify-subject-live = [Mirante] Request #{ $id } is live: { $title }
notify-subject-degraded = [Mirante] Request #{ $id } is degraded: { $title }
notify-subject-failed = [Mirante] Request #{ $id } failed: { $title }
notify-headline-awaits-approval = { $requester } asks for "{ $title }" (request #{ $id }, { $target }); it waits for an admin's approval.
notify-headline-approved = { $actor } approved your request #{ $id } "{ $title }"; its pull request is opened next.
notify-headline-rejected = { $actor } rejected your request #{ $id } "{ $title }".
notify-headline-proposed = The pull request of your request #{ $id } "{ $title }" is open.
notify-headline-merged = The pull request of your request #{ $id } "{ $title }" was merged.
notify-headline-live = Argo CD reports your request #{ $id } "{ $title }" live.
notify-headline-degraded = Argo CD reports your request #{ $id } "{ $title }" degraded.
notify-headline-failed = Your request #{ $id } "{ $title }" failed.
notify-subject-expires-soon = [Mirante] Resource #{ $id } expires soon: { $title } ({ $target })
notify-subject-removal-opened = [Mirante] { $title } expired: removal proposed (request #{ $id })
notify-headline-expires-soon = Your resource "{ $title }" ({ $target }) expires soon. Extend it from its page, or it is removed after it expires.
notify-headline-removal-opened = Your resource "{ $title }" ({ $target }) expired; Mirante opened its removal, request #{ $id }. Its GPUs are freed once it is merged.
notify-subject-removed = [Mirante] Request #{ $id } removed { $title } ({ $target })
notify-subject-update-available = [Mirante] Resource #{ $id } has a template update: { $title } ({ $target })
notify-headline-removed = The removal of "{ $title }" ({ $target }), request #{ $id }, was merged: its folder is gone from the monorepo and its GPUs are free once Argo CD no longer runs it.
notify-headline-update-available = The template of your resource "{ $title }" ({ $target }) has changed. Its page shows what the new version changes in its files; propose the update from there.
notify-comment = Comment
notify-pull-request = Pull request
notify-detail = Details
notify-open = Open the request
notify-footer = Mirante sent this because of a request you made or decide on. You can turn these e-mails off on your profile: { $profile }
auth-notifications = Notifications
auth-notify-email = E-mail me about my requests (and, for admins, requests awaiting approval)
auth-notify-on = E-mail is on.
auth-notify-off = E-mail is off.
auth-notify-save = Save

## Day two: a resource's page and the requests that change it
res-page-title = Resource #{ $id }
res-open-request = A request on this resource is on its way; no other change is taken until it is merged, rejected or withdrawn:
res-change = Change this resource
res-change-help = Each change is a request of its own, with its own pull request on the monorepo, followed until it is applied. You can withdraw it before it is proposed.
res-extend = Extend
res-extend-days = New duration, in days from today (at most { $max })
res-extend-help = An extension within the template's limit needs no approval: its pull request is opened at once.
res-extend-button = Ask for the extension
res-update = Change its size
res-update-approval = An admin approves the change before its pull request is opened. More GPUs are checked against the cluster's free ones.
res-update-no-approval = The change needs no approval: its pull request is opened at once.
res-update-button = Ask for the change
res-remove = Remove
res-remove-open = Remove…
res-remove-what = This opens a pull request that deletes every file under { $target }. Once it is merged and Argo CD no longer runs it, the resource is removed and its GPUs are free again.
res-remove-button = Remove this resource
req-action-update = Update
req-action-extend = Extension
req-action-remove = Removal
req-withdraw = Withdraw this request
req-withdraw-help = It has not been proposed yet: withdrawing closes it, and nothing reaches the monorepo.
req-removed-files = { $count ->
    [one] One file deleted
   *[other] { $count } files deleted
}
req-file-deleted = (deleted)
req-resubmit = Ask again with changes
req-resubmit-help = This request ended without a merge. You can ask again: the form opens with its values, to change what the comment above asks for; the new request links to this one.
req-resubmitted-as = This request was made again as
req-resubmits = Makes again
ss-resubmitting = This request makes #{ $id } again: change what needs changing, preview and submit.
res-update-available = Update available
res-update-versions = Its template has changed since its files were rendered (version { $from }, now { $to }). These are the changes the new version makes to its files:
res-upgrade-needs = The new version asks for these values first:
res-upgrade-button = Propose this update
ss-updates-title = Updates for existing resources
ss-updates-none = Every resource is at its template's current version.
ss-problems-heading = Templates that did not load
res-back = Back to the resource
res-extend-help-over = Extensions of up to { $days } days need no approval: the pull request is opened at once. Longer ones wait for an admin.
ss-file-deleted = deleted
req-withdraw-help-proposed = Its pull request is open: withdrawing closes it on the forge with a comment saying so, and nothing is merged.
req-catalog-change-title = Catalog change: { $name }
sites-gpu-uncounted = { $model } (count not recorded)
search-title = Search
search-label = Search the portal
header-search-placeholder = Search…
search-go = Search
search-empty = Type a word: items, decisions, tasks, templates and requests are searched, without regard to case or accents.
search-count = { $count ->
    [0] Nothing matches “{ $q }”.
    [one] One match for “{ $q }”.
   *[other] { $count } matches for “{ $q }”.
}
search-items = Catalog items ({ $count })
search-decisions = Decisions ({ $count })
search-tasks = Pending tasks ({ $count })
search-templates = Self-service templates ({ $count })
search-requests = Requests ({ $count })
search-more = { $count } more
