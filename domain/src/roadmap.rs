//! The roadmap: what is done, what is ready to start and what is blocked (and by what), for
//! items and pending tasks, with progress per phase, site and layer, and the dependency graph
//! laid out for drawing.
//!
//! An item is **done** when validated, **ready** when every item it depends on is validated,
//! and **blocked** otherwise. A pending task is never done (done tasks leave the catalog); it is
//! ready when every task it waits for has left the catalog and every item it waits for is
//! validated. Blockers are followed transitively through what is not done: a validated
//! dependency is solid ground, and what lies under it is the lint's business (a validated item
//! depending on an unvalidated one is a finding there).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::model::{Item, LayerKind, Priority, Qualifier, SmolStr, State, TaskKind};
use crate::snapshot::{Snapshot, StateCounts};

/// Where an item or task stands on the roadmap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Validated in production.
    Done,
    /// Everything it depends on is done; work can start.
    Ready,
    /// Waits for something that is not done.
    Blocked,
}

impl Status {
    /// The identifier used in JSON, CSV and CSS classes.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Ready => "ready",
            Status::Blocked => "blocked",
        }
    }
}

/// What a blocker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockerKind {
    /// A catalog item that is not validated.
    Item,
    /// A pending task.
    Task,
}

/// Something that is not done and stands, directly or through others, in the way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocker {
    /// Id of the blocking item or task.
    pub id: String,
    /// Item or task.
    pub kind: BlockerKind,
    /// The blocker's state, for items.
    pub state: Option<State>,
    /// The direct dependency (or `after` entry) through which it blocks; equal to `id` when
    /// the blocker is itself a direct dependency.
    pub via: String,
}

/// One item on the roadmap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoadmapItem {
    /// Item id.
    pub id: String,
    /// Item name.
    pub name: String,
    /// Its state.
    pub state: State,
    /// Its qualifier.
    pub qualifier: Option<Qualifier>,
    /// Its layer.
    pub layer: String,
    /// Its sites (empty: platform-wide).
    pub sites: Vec<String>,
    /// Its phase.
    pub phase: Option<String>,
    /// Done, ready or blocked.
    pub status: Status,
    /// Whether it is validated (`status == done`), spelled out for API clients.
    pub done: bool,
    /// Whether every dependency is validated and the item itself is not.
    pub ready: bool,
    /// Its direct dependencies.
    pub depends_on: Vec<String>,
    /// Every item not done that blocks it, directly or transitively, nearest first.
    pub blocked_by: Vec<Blocker>,
}

/// One pending task on the roadmap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoadmapTask {
    /// Task id.
    pub id: String,
    /// What is to be done or decided.
    pub title: String,
    /// Task or open decision.
    pub kind: TaskKind,
    /// Layer or capability.
    pub layer: String,
    /// Sites it concerns.
    pub sites: Vec<String>,
    /// How urgent.
    pub priority: Option<Priority>,
    /// Items it moves forward.
    pub items: Vec<String>,
    /// Ready or blocked (never done: a done task leaves the catalog).
    pub status: Status,
    /// Every pending task and unvalidated item in its way, nearest first.
    pub blocked_by: Vec<Blocker>,
}

/// Counts per state of a group of items; the shares follow from them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Group id (a phase, site or layer id; empty for "none").
    pub id: String,
    /// Display name.
    pub name: String,
    /// Items per state.
    pub counts: StateCounts,
}

impl Progress {
    fn new(id: &str, name: &str) -> Self {
        Progress {
            id: id.to_owned(),
            name: name.to_owned(),
            counts: StateCounts::default(),
        }
    }

    /// The share of items in `state`, 0–100, rounded down (0 for an empty group).
    pub fn percent(&self, state: State) -> u32 {
        percent(self.counts.get(state), self.counts.total())
    }
}

/// `part` of `whole` in whole percent, rounded down; 0 when `whole` is 0.
pub fn percent(part: u32, whole: u32) -> u32 {
    if whole == 0 {
        0
    } else {
        (u64::from(part) * 100 / u64::from(whole)) as u32
    }
}

/// A phase with its items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoadmapPhase {
    /// Phase id (empty for the items planned in no phase).
    pub id: String,
    /// Display name (empty for the items planned in no phase).
    pub name: String,
    /// What the phase delivers.
    pub description: String,
    /// Items per state.
    pub counts: StateCounts,
    /// Its items, in catalog order.
    pub items: Vec<String>,
}

/// The roadmap of a catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Roadmap {
    /// Phases in order, then (when some items have none) a last group with an empty id.
    pub phases: Vec<RoadmapPhase>,
    /// Every item, in catalog order.
    pub items: Vec<RoadmapItem>,
    /// Every pending task: critical first, then MVP, later, normal, unprioritised; catalog
    /// order within a priority.
    pub tasks: Vec<RoadmapTask>,
    /// Progress per site and layer, and over the whole catalog.
    pub progress: RoadmapProgress,
}

/// Progress per site and per layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoadmapProgress {
    /// Per site, in catalog order, then platform-wide items (empty id) if there are any.
    pub sites: Vec<Progress>,
    /// Per top-level layer (sub-layers roll up), then per capability.
    pub layers: Vec<Progress>,
    /// Over the whole catalog.
    pub totals: StateCounts,
}

/// A node of the combined item + task graph.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Node {
    Item(usize),
    Task(usize),
}

struct Graph<'a> {
    snap: &'a Snapshot,
    task_index: HashMap<&'a str, usize>,
}

impl<'a> Graph<'a> {
    fn new(snap: &'a Snapshot) -> Self {
        let task_index = snap
            .catalog()
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.as_str(), i))
            .collect();
        Graph { snap, task_index }
    }

    fn item_node(&self, id: &str) -> Option<Node> {
        self.snap.item_position(id).map(Node::Item)
    }

    /// What a node waits for, in catalog order. A task's `after` names a task first, as the
    /// validator resolves it.
    fn edges(&self, n: Node) -> Vec<Node> {
        let c = self.snap.catalog();
        match n {
            Node::Item(i) => c.items[i]
                .depends_on
                .iter()
                .filter_map(|d| self.item_node(d))
                .collect(),
            Node::Task(t) => c.tasks[t]
                .after
                .iter()
                .filter_map(|a| {
                    self.task_index
                        .get(a.as_str())
                        .map(|&x| Node::Task(x))
                        .or_else(|| self.item_node(a))
                })
                .collect(),
        }
    }

    fn done(&self, n: Node) -> bool {
        match n {
            Node::Item(i) => self.snap.catalog().items[i].state == State::Validated,
            Node::Task(_) => false,
        }
    }

    fn blocker(&self, n: Node, via: Node) -> Blocker {
        let c = self.snap.catalog();
        let id_of = |n: Node| match n {
            Node::Item(i) => c.items[i].id.to_string(),
            Node::Task(t) => c.tasks[t].id.clone(),
        };
        let (kind, state) = match n {
            Node::Item(i) => (BlockerKind::Item, Some(c.items[i].state)),
            Node::Task(_) => (BlockerKind::Task, None),
        };
        Blocker {
            id: id_of(n),
            kind,
            state,
            via: id_of(via),
        }
    }

    /// Every node not done reachable from `start` through nodes not done, breadth first (so
    /// nearest first), each with the direct dependency it was first reached through.
    fn blockers(&self, start: Node) -> Vec<Blocker> {
        let mut seen: std::collections::HashSet<Node> = std::collections::HashSet::from([start]);
        let mut queue: std::collections::VecDeque<(Node, Node)> =
            self.edges(start).into_iter().map(|n| (n, n)).collect();
        let mut out = Vec::new();
        while let Some((n, via)) = queue.pop_front() {
            if self.done(n) || !seen.insert(n) {
                continue;
            }
            out.push(self.blocker(n, via));
            queue.extend(self.edges(n).into_iter().map(|m| (m, via)));
        }
        out
    }
}

fn priority_rank(p: Option<Priority>) -> u8 {
    match p {
        Some(Priority::Critical) => 0,
        Some(Priority::Mvp) => 1,
        Some(Priority::Later) => 2,
        Some(Priority::Normal) => 3,
        None => 4,
    }
}

impl Roadmap {
    /// Computes the roadmap of a snapshot.
    pub fn of(snap: &Snapshot) -> Roadmap {
        let c = snap.catalog();
        let g = Graph::new(snap);
        let items: Vec<RoadmapItem> = c
            .items
            .iter()
            .enumerate()
            .map(|(i, it)| {
                let blocked_by = if it.state == State::Validated {
                    Vec::new()
                } else {
                    g.blockers(Node::Item(i))
                };
                let status = if it.state == State::Validated {
                    Status::Done
                } else if blocked_by.is_empty() {
                    Status::Ready
                } else {
                    Status::Blocked
                };
                RoadmapItem {
                    id: it.id.to_string(),
                    name: it.name.to_string(),
                    state: it.state,
                    qualifier: it.qualifier,
                    layer: it.layer.to_string(),
                    sites: it.sites.iter().map(SmolStr::to_string).collect(),
                    phase: it.phase.as_ref().map(SmolStr::to_string),
                    status,
                    done: status == Status::Done,
                    ready: status == Status::Ready,
                    depends_on: it.depends_on.iter().map(SmolStr::to_string).collect(),
                    blocked_by,
                }
            })
            .collect();

        let mut tasks: Vec<RoadmapTask> = c
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let blocked_by = g.blockers(Node::Task(i));
                RoadmapTask {
                    id: t.id.clone(),
                    title: t.title.clone(),
                    kind: t.kind,
                    layer: t.layer.clone(),
                    sites: t.sites.clone(),
                    priority: t.priority,
                    items: t.items.clone(),
                    status: if blocked_by.is_empty() {
                        Status::Ready
                    } else {
                        Status::Blocked
                    },
                    blocked_by,
                }
            })
            .collect();
        // Stable: catalog order within a priority.
        tasks.sort_by_key(|t| priority_rank(t.priority));

        let mut phases: Vec<RoadmapPhase> = {
            let mut ps: Vec<_> = c.phases.iter().collect();
            ps.sort_by_key(|p| p.order);
            ps.into_iter()
                .map(|p| RoadmapPhase {
                    id: p.id.clone(),
                    name: p.name.clone(),
                    description: p.description.clone(),
                    counts: StateCounts::default(),
                    items: Vec::new(),
                })
                .collect()
        };
        let mut unphased = RoadmapPhase {
            id: String::new(),
            name: String::new(),
            description: String::new(),
            counts: StateCounts::default(),
            items: Vec::new(),
        };
        let mut sites: Vec<Progress> = c
            .sites
            .iter()
            .map(|s| Progress::new(&s.id, &s.name))
            .collect();
        let mut platform_wide = Progress::new("", "");
        let mut layers: Vec<Progress> = [LayerKind::Layer, LayerKind::Capability]
            .into_iter()
            .flat_map(|k| {
                c.layers
                    .iter()
                    .filter(move |l| l.kind == k && l.parent.is_none())
            })
            .map(|l| Progress::new(&l.id, &crate::model::layer_label(&l.number, &l.name)))
            .collect();
        let mut totals = StateCounts::default();
        for it in &c.items {
            totals.add(it.state);
            let phase = it
                .phase
                .as_deref()
                .and_then(|p| phases.iter_mut().find(|x| x.id == p))
                .unwrap_or(&mut unphased);
            phase.counts.add(it.state);
            phase.items.push(it.id.to_string());
            if it.sites.is_empty() {
                platform_wide.counts.add(it.state);
            }
            for s in &it.sites {
                if let Some(p) = sites.iter_mut().find(|p| &p.id == s) {
                    p.counts.add(it.state);
                }
            }
            let top = snap.top_layer(&it.layer);
            if let Some(p) = layers.iter_mut().find(|p| p.id == top) {
                p.counts.add(it.state);
            }
        }
        if !unphased.items.is_empty() {
            phases.push(unphased);
        }
        if platform_wide.counts.total() > 0 {
            sites.push(platform_wide);
        }
        Roadmap {
            phases,
            items,
            tasks,
            progress: RoadmapProgress {
                sites,
                layers,
                totals,
            },
        }
    }

    /// An item's roadmap entry.
    pub fn item(&self, id: &str) -> Option<&RoadmapItem> {
        self.items.iter().find(|i| i.id == id)
    }

    /// A task's roadmap entry.
    pub fn task(&self, id: &str) -> Option<&RoadmapTask> {
        self.tasks.iter().find(|t| t.id == id)
    }
}

/// The longest chain of dependencies ending at `id`: item ids from the first dependency to
/// `id` itself. Ties go to the dependency listed first. `None` for an unknown id.
pub fn critical_path(snap: &Snapshot, id: &str) -> Option<Vec<String>> {
    let target = snap.item_position(id)?;
    let items = &snap.catalog().items;
    let depth = depths(snap);
    let mut path = vec![target];
    let mut cur = target;
    // Each step goes to a strictly shallower node, so this ends.
    loop {
        let next = items[cur]
            .depends_on
            .iter()
            .filter_map(|d| snap.item_position(d))
            .filter(|&d| depth[d] + 1 == depth[cur])
            .min_by_key(|&d| items[cur].depends_on.iter().position(|x| *x == items[d].id));
        match next {
            Some(n) => {
                path.push(n);
                cur = n;
            }
            None => break,
        }
    }
    path.reverse();
    Some(path.into_iter().map(|i| items[i].id.to_string()).collect())
}

/// For every item (by position), the length of the longest chain of dependencies below it:
/// 0 with no dependencies. Dependencies are acyclic (validated), so a topological pass works;
/// should one slip through, the nodes on it keep depth 0 instead of looping.
pub fn depths(snap: &Snapshot) -> Vec<usize> {
    let items = &snap.catalog().items;
    let n = items.len();
    let deps: Vec<Vec<usize>> = items
        .iter()
        .map(|it| {
            it.depends_on
                .iter()
                .filter_map(|d| snap.item_position(d))
                .collect()
        })
        .collect();
    let mut pending: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            dependents[d].push(i);
        }
    }
    let mut depth = vec![0usize; n];
    let mut queue: Vec<usize> = (0..n).filter(|&i| pending[i] == 0).collect();
    while let Some(i) = queue.pop() {
        for &j in &dependents[i] {
            depth[j] = depth[j].max(depth[i] + 1);
            pending[j] -= 1;
            if pending[j] == 0 {
                queue.push(j);
            }
        }
    }
    depth
}

/// A node of the laid-out dependency graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphNode {
    /// Item id.
    pub id: String,
    /// Item name.
    pub name: String,
    /// Its state.
    pub state: State,
    /// Its roadmap status.
    pub status: Status,
    /// Column: the length of the longest dependency chain below it.
    pub column: usize,
    /// Row within the column, from the top.
    pub row: usize,
    /// Whether it lies on the highlighted critical path.
    pub on_path: bool,
}

/// An edge from a dependency to the item that depends on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphEdge {
    /// Index in `nodes` of the dependency (drawn on the left).
    pub from: usize,
    /// Index in `nodes` of the dependent item (drawn on the right).
    pub to: usize,
    /// Whether both ends are consecutive on the highlighted critical path.
    pub on_path: bool,
}

/// The dependency graph, layered left to right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayeredGraph {
    /// Nodes.
    pub nodes: Vec<GraphNode>,
    /// Edges.
    pub edges: Vec<GraphEdge>,
    /// Number of columns.
    pub columns: usize,
    /// Number of rows of the tallest column.
    pub rows: usize,
}

/// Rounds of barycentre ordering (sweeping right, then left): enough to settle small graphs.
const ORDERING_SWEEPS: usize = 4;

/// Lays out the items that take part in a dependency (plus `highlight`, if given), each in the
/// column of its longest dependency chain, ordered within columns by the barycentre of their
/// neighbours to reduce crossings. With `highlight`, the critical path to it is marked.
pub fn layered_graph(snap: &Snapshot, roadmap: &Roadmap, highlight: Option<&str>) -> LayeredGraph {
    let items = &snap.catalog().items;
    let depth = depths(snap);
    let path: Vec<String> = highlight
        .and_then(|h| critical_path(snap, h))
        .unwrap_or_default();
    let mut involved = vec![false; items.len()];
    for (i, it) in items.iter().enumerate() {
        for d in &it.depends_on {
            if let Some(j) = snap.item_position(d) {
                involved[i] = true;
                involved[j] = true;
            }
        }
    }
    for id in &path {
        if let Some(i) = snap.item_position(id) {
            involved[i] = true;
        }
    }
    let chosen: Vec<usize> = (0..items.len()).filter(|&i| involved[i]).collect();
    let node_of: HashMap<usize, usize> = chosen.iter().enumerate().map(|(n, &i)| (i, n)).collect();
    let columns = chosen.iter().map(|&i| depth[i] + 1).max().unwrap_or(0);

    // Edges by node index.
    let mut edges: Vec<GraphEdge> = Vec::new();
    for (n, &i) in chosen.iter().enumerate() {
        for d in &items[i].depends_on {
            if let Some(&m) = snap.item_position(d).and_then(|j| node_of.get(&j)) {
                let on_path = path
                    .windows(2)
                    .any(|w| w[0] == items[chosen[m]].id && w[1] == items[i].id);
                edges.push(GraphEdge {
                    from: m,
                    to: n,
                    on_path,
                });
            }
        }
    }

    // Initial order: catalog order within each column.
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); columns];
    for (n, &i) in chosen.iter().enumerate() {
        order[depth[i]].push(n);
    }
    let mut left: Vec<Vec<usize>> = vec![Vec::new(); chosen.len()];
    let mut right: Vec<Vec<usize>> = vec![Vec::new(); chosen.len()];
    for e in &edges {
        right[e.from].push(e.to);
        left[e.to].push(e.from);
    }
    let mut pos = vec![0usize; chosen.len()];
    let set_pos = |order: &Vec<Vec<usize>>, pos: &mut Vec<usize>| {
        for col in order {
            for (r, &n) in col.iter().enumerate() {
                pos[n] = r;
            }
        }
    };
    set_pos(&order, &mut pos);
    for sweep in 0..ORDERING_SWEEPS {
        let forward = sweep % 2 == 0;
        let cols: Vec<usize> = if forward {
            (1..columns).collect()
        } else {
            (0..columns.saturating_sub(1)).rev().collect()
        };
        for c in cols {
            let neighbours = if forward { &left } else { &right };
            // Key: twice the mean neighbour position (integers keep it exact); nodes without
            // neighbours on that side keep their place.
            let mut keyed: Vec<(usize, usize, usize)> = order[c]
                .iter()
                .enumerate()
                .map(|(r, &n)| {
                    let ns = &neighbours[n];
                    let key = if ns.is_empty() {
                        2 * r
                    } else {
                        2 * ns.iter().map(|&m| pos[m]).sum::<usize>() / ns.len()
                    };
                    (key, r, n)
                })
                .collect();
            keyed.sort();
            order[c] = keyed.into_iter().map(|(_, _, n)| n).collect();
            set_pos(&order, &mut pos);
        }
    }

    let status_of = |id: &str| {
        roadmap
            .item(id)
            .map_or(Status::Blocked, |r: &RoadmapItem| r.status)
    };
    let nodes: Vec<GraphNode> = chosen
        .iter()
        .enumerate()
        .map(|(n, &i)| {
            let it: &Item = &items[i];
            GraphNode {
                id: it.id.to_string(),
                name: it.name.to_string(),
                state: it.state,
                status: status_of(&it.id),
                column: depth[i],
                row: pos[n],
                on_path: path.iter().any(|p| *p == it.id),
            }
        })
        .collect();
    let rows = order.iter().map(Vec::len).max().unwrap_or(0);
    LayeredGraph {
        nodes,
        edges,
        columns,
        rows,
    }
}

#[cfg(all(test, feature = "load"))]
mod tests;
