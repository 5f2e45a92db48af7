//! The machine as sysfs describes it: which CPUs are online and allowed to us, how they group
//! into packages, dies, clusters, cores and SMT siblings, which caches they share, and the NUMA
//! nodes with their distances. `relation` names the closest level two CPUs share; it is the one
//! home of that rule (the matrix's classes, its plot order and the Python `Topology` use it).
//!
//! Parsing (`sysfs.rs`) reads a sysfs root, so a copied or hand-made tree describes another
//! machine; whatever the tree lacks (VMs often have no cache directories) is said in `notes`
//! and the relations fall back to the levels that can be known.

mod sysfs;
mod table;

pub use sysfs::{parse, read, Sources, MAX_CACHE_KB};
pub use table::{CacheEntry, Table};

use std::path::PathBuf;

/// The closest level two CPUs share, closest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Relation {
    SameCpu,
    SmtSibling,
    SharedL2,
    SharedLlc,
    SamePackage,
    CrossPackage,
}

impl Relation {
    pub const ALL: [Relation; 6] = [
        Relation::SameCpu,
        Relation::SmtSibling,
        Relation::SharedL2,
        Relation::SharedLlc,
        Relation::SamePackage,
        Relation::CrossPackage,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Relation::SameCpu => "same-cpu",
            Relation::SmtSibling => "smt-sibling",
            Relation::SharedL2 => "shared-l2",
            Relation::SharedLlc => "shared-llc",
            Relation::SamePackage => "same-package",
            Relation::CrossPackage => "cross-package",
        }
    }
}

/// The kind of core a CPU is on a hybrid host: Intel's performance and efficiency cores (the
/// kernel's `cpu_core` and `cpu_atom` PMUs list each kind's CPUs), or Arm's big.LITTLE and
/// DynamIQ cores by their `cpu_capacity` (1024 for the largest, the rest scaled by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CoreType {
    Performance,
    Efficiency,
    /// `cpu_capacity`, where the online CPUs have more than one.
    Capacity(u32),
}

impl CoreType {
    /// "P-core", "E-core", "capacity 381".
    pub fn name(self) -> String {
        match self {
            CoreType::Performance => "P-core".into(),
            CoreType::Efficiency => "E-core".into(),
            CoreType::Capacity(c) => format!("capacity {c}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheKind {
    Data,
    Instruction,
    Unified,
}

impl CacheKind {
    /// sysfs's `type` file.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "Data" => Some(CacheKind::Data),
            "Instruction" => Some(CacheKind::Instruction),
            "Unified" => Some(CacheKind::Unified),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CacheKind::Data => "Data",
            CacheKind::Instruction => "Instruction",
            CacheKind::Unified => "Unified",
        }
    }
}

/// One cache instance, shared by `cpus`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cache {
    pub level: u32,
    pub kind: CacheKind,
    /// `None` where sysfs gives no size, or none that can be one (`sysfs::MAX_CACHE_KB`).
    pub size_kb: Option<u64>,
    /// `coherency_line_size`; `None` where sysfs gives no positive number.
    pub line_bytes: Option<u64>,
    /// Every CPU sysfs lists as sharing it (`shared_cpu_list`), ascending.
    pub cpus: Vec<usize>,
}

impl Cache {
    /// "L1d", "L1i", "L2", "L3": how users and `metadata.cache_kb` name a level.
    pub fn name(&self) -> String {
        let suffix = match self.kind {
            CacheKind::Data => "d",
            CacheKind::Instruction => "i",
            CacheKind::Unified => "",
        };
        format!("L{}{suffix}", self.level)
    }

    /// Holds data (not the instruction cache): what a working set and a token live in.
    pub fn holds_data(&self) -> bool {
        self.kind != CacheKind::Instruction
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cpu {
    pub id: usize,
    pub online: bool,
    /// Online, in our cpuset and in our affinity mask: a CPU we may pin to.
    pub allowed: bool,
    /// Where sysfs gives none, 0 (one package assumed; `notes` says so).
    pub package: i64,
    pub die: Option<i64>,
    pub cluster: Option<i64>,
    /// Where sysfs gives none, the CPU id (its own core).
    pub core: i64,
    pub node: Option<usize>,
    /// Its kind of core where the host has more than one kind; `None` on a host of one.
    pub core_type: Option<CoreType>,
    /// The CPUs of its core (itself included), ascending.
    pub smt_siblings: Vec<usize>,
    /// Indices into `Topology::caches`, lowest level first.
    pub caches: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub id: usize,
    pub cpus: Vec<usize>,
    /// Distance to each node of `Topology::nodes`, in that order (10 = local).
    pub distances: Vec<u32>,
}

/// A cache level as one CPU sees it: its size, how many online CPUs share it, and the share.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheShare {
    pub name: String,
    pub size_kb: u64,
    pub sharing: usize,
    /// `size_kb` / `sharing`: what one CPU can count on when every sharer is busy.
    pub per_cpu_kb: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub root: PathBuf,
    /// Every CPU sysfs knows (present), ascending by id.
    pub cpus: Vec<Cpu>,
    pub caches: Vec<Cache>,
    pub nodes: Vec<Node>,
    /// The cpuset and affinity mask applied, where known.
    pub cpuset: Option<Vec<usize>>,
    pub affinity: Option<Vec<usize>>,
    /// What could not be read, and what was assumed instead.
    pub notes: Vec<String>,
}

impl Topology {
    pub fn cpu(&self, id: usize) -> Option<&Cpu> {
        self.cpus
            .binary_search_by_key(&id, |c| c.id)
            .ok()
            .map(|i| &self.cpus[i])
    }

    /// The CPUs we may pin to, ascending.
    pub fn allowed(&self) -> Vec<usize> {
        self.cpus
            .iter()
            .filter(|c| c.allowed)
            .map(|c| c.id)
            .collect()
    }

    pub fn online(&self) -> Vec<usize> {
        self.cpus
            .iter()
            .filter(|c| c.online)
            .map(|c| c.id)
            .collect()
    }

    /// The closest level `a` and `b` share. CPUs sysfs does not know share nothing known:
    /// `CrossPackage` unless they are one CPU.
    pub fn relation(&self, a: usize, b: usize) -> Relation {
        if a == b {
            return Relation::SameCpu;
        }
        let (Some(x), Some(y)) = (self.cpu(a), self.cpu(b)) else {
            return Relation::CrossPackage;
        };
        let shared = |pick: &dyn Fn(&Cache) -> bool| {
            x.caches
                .iter()
                .any(|&i| pick(&self.caches[i]) && self.caches[i].cpus.contains(&b))
        };
        if x.smt_siblings.contains(&b) {
            Relation::SmtSibling
        } else if shared(&|c| c.level == 2 && c.holds_data()) {
            Relation::SharedL2
        } else if self.llc(a).is_some() && self.llc(a) == self.llc(b) {
            Relation::SharedLlc
        } else if x.package == y.package {
            Relation::SamePackage
        } else {
            Relation::CrossPackage
        }
    }

    /// The SLIT distance between the nodes of `a` and `b`, where there is more than one node
    /// and both nodes are known.
    pub fn numa_distance(&self, a: usize, b: usize) -> Option<u32> {
        if self.nodes.len() < 2 {
            return None;
        }
        let node = |c: usize| self.cpu(c)?.node;
        let (na, nb) = (node(a)?, node(b)?);
        let from = self.nodes.iter().find(|n| n.id == na)?;
        let to = self.nodes.iter().position(|n| n.id == nb)?;
        from.distances.get(to).copied()
    }

    /// The kinds of core of a hybrid host, each with its CPUs (ascending); empty on a host of
    /// one kind.
    pub fn core_types(&self) -> Vec<(CoreType, Vec<usize>)> {
        let mut kinds: std::collections::BTreeMap<CoreType, Vec<usize>> = Default::default();
        for c in &self.cpus {
            if let Some(kind) = c.core_type {
                kinds.entry(kind).or_default().push(c.id);
            }
        }
        kinds.into_iter().collect()
    }

    /// The kinds of core of `a` and `b`, on a hybrid host.
    pub fn core_type_pair(&self, a: usize, b: usize) -> Option<(CoreType, CoreType)> {
        let kind = |c: usize| self.cpu(c)?.core_type;
        Some((kind(a)?, kind(b)?))
    }

    /// Index into `caches` of the last-level data cache of `cpu`.
    pub fn llc(&self, cpu: usize) -> Option<usize> {
        let c = self.cpu(cpu)?;
        c.caches
            .iter()
            .copied()
            .filter(|&i| self.caches[i].holds_data())
            .max_by_key(|&i| self.caches[i].level)
    }

    /// Each cache level of `cpu` with a known size, lowest first: its size, the online CPUs
    /// sharing it and the share of one of them (size ÷ sharers). The instruction cache is
    /// listed too (as "L1i"); a working set competes for the others.
    pub fn cache_share_kb(&self, cpu: usize) -> Vec<CacheShare> {
        let Some(c) = self.cpu(cpu) else {
            return Vec::new();
        };
        let online = |id: &&usize| self.cpu(**id).is_some_and(|c| c.online);
        c.caches
            .iter()
            .map(|&i| &self.caches[i])
            .filter_map(|cache| {
                let size_kb = cache.size_kb?;
                let sharing = cache.cpus.iter().filter(online).count().max(1);
                Some(CacheShare {
                    name: cache.name(),
                    size_kb,
                    sharing,
                    per_cpu_kb: size_kb as f64 / sharing as f64,
                })
            })
            .collect()
    }

    /// Online CPUs ordered package → LLC → core → SMT sibling, so that CPUs that share more
    /// sit together (the matrix plot's axis order).
    pub fn order(&self) -> Vec<usize> {
        let first = |v: &[usize], dflt: usize| v.first().copied().unwrap_or(dflt);
        let mut ids = self.online();
        ids.sort_by_key(|&id| {
            let c = self.cpu(id).expect("online CPUs are known");
            let llc = self.llc(id).map_or(id, |i| first(&self.caches[i].cpus, id));
            let rank = c.smt_siblings.iter().position(|&s| s == id).unwrap_or(0);
            (c.package, llc, first(&c.smt_siblings, id), rank, id)
        });
        ids
    }
}

#[cfg(test)]
pub(crate) mod tests;
