//! The topology as a table: one entry per CPU in each column (`-1` where sysfs says
//! nothing), the caches and NUMA nodes beside them, as `ctxbench.topology` and a matrix's
//! record hold it (declared with `record!`: the record's checks read its fields). The
//! binding hands each column over as a numpy array.

use super::{CacheShare, Relation, Topology};
use crate::fields::record;
use serde::Serializer;

record! {
    /// One cache instance as the table lists it.
    #[derive(PartialEq)]
    pub struct CacheEntry as "TopologyCacheDict" {
        pub name: String = "",
        pub level: u32 = "min=0",
        #[serde(rename = "type")]
        pub kind: &'static str = "",
        pub size_kb: Option<u64> = "min=0",
        pub cpus: Vec<i64> = "min=0",
    }

    /// The machine per CPU of `cpus` (every present CPU); `relations[a][b]` indexes
    /// `Relation::ALL` (only where asked for: a matrix's record leaves it out). A matrix's
    /// record holds it as it was measured on; of that, files from before lack what is
    /// `optional`.
    #[derive(PartialEq)]
    pub struct Table as "TopologyTableDict" {
        pub sysfs: String = "optional",
        pub cpus: Vec<i64> = "min=-1",
        pub online: Vec<bool> = "optional",
        pub allowed: Vec<bool> = "optional",
        pub package: Vec<i64> = "min=-1",
        pub die: Vec<i64> = "min=-1 optional",
        pub cluster: Vec<i64> = "min=-1 optional",
        pub core: Vec<i64> = "min=-1",
        pub node: Vec<i64> = "min=-1",
        pub llc: Vec<i64> = "min=-1",
        /// "" on a host of one kind of core.
        pub core_type: Vec<String> = "optional",
        pub smt_siblings: Vec<Vec<i64>> = "min=0 ragged optional",
        /// Indices into `caches`, lowest level first.
        pub cpu_caches: Vec<Vec<i64>> = "min=0 ragged optional",
        pub caches: Vec<CacheEntry> = "optional",
        /// Each cache name (by level, then name): KiB per CPU for each CPU, NaN where it has
        /// none.
        #[serde(serialize_with = "by_name")]
        pub cache_share_kb: Vec<(String, Vec<f64>)> = "opaque optional",
        pub nodes: Vec<i64> = "min=0 optional",
        /// Node × node distances; empty where sysfs gave no square table.
        pub distances: Vec<Vec<i64>> = "min=0 optional",
        pub order: Vec<i64> = "min=0",
        pub cpuset: Option<Vec<i64>> = "min=0 optional",
        pub affinity: Option<Vec<i64>> = "min=0 optional",
        pub notes: Vec<String> = "",
        #[serde(skip_serializing_if = "Option::is_none")]
        pub relations: Option<Vec<Vec<u8>>> = "optional",
    }
}

fn by_name<S: Serializer>(columns: &[(String, Vec<f64>)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(columns.iter().map(|(name, kb)| (name, kb)))
}

/// An id or count as the table holds it; `-1` for what sysfs does not say.
fn int<T: TryInto<i64>>(v: Option<T>) -> i64 {
    v.and_then(|x| x.try_into().ok()).unwrap_or(-1)
}

fn ints(v: &[usize]) -> Vec<i64> {
    v.iter().map(|&x| int(Some(x))).collect()
}

impl Topology {
    /// The table of this topology, with the CPU × CPU relations where `relations`.
    pub fn table(&self, relations: bool) -> Table {
        let cpus = &self.cpus;
        let column = |f: &dyn Fn(&super::Cpu) -> i64| cpus.iter().map(f).collect::<Vec<_>>();
        let distances: Vec<Vec<i64>> = self
            .nodes
            .iter()
            .map(|n| n.distances.iter().map(|&x| i64::from(x)).collect())
            .collect();
        let square = distances.iter().all(|r| r.len() == distances.len());
        Table {
            sysfs: self.root.to_string_lossy().into_owned(),
            cpus: column(&|c| int(Some(c.id))),
            online: cpus.iter().map(|c| c.online).collect(),
            allowed: cpus.iter().map(|c| c.allowed).collect(),
            package: column(&|c| c.package),
            die: column(&|c| int(c.die)),
            cluster: column(&|c| int(c.cluster)),
            core: column(&|c| c.core),
            node: column(&|c| int(c.node)),
            llc: column(&|c| int(self.llc(c.id))),
            core_type: cpus
                .iter()
                .map(|c| c.core_type.map_or_else(String::new, |k| k.name()))
                .collect(),
            smt_siblings: cpus.iter().map(|c| ints(&c.smt_siblings)).collect(),
            cpu_caches: cpus.iter().map(|c| ints(&c.caches)).collect(),
            caches: self
                .caches
                .iter()
                .map(|c| CacheEntry {
                    name: c.name(),
                    level: c.level,
                    kind: c.kind.name(),
                    size_kb: c.size_kb,
                    cpus: ints(&c.cpus),
                })
                .collect(),
            cache_share_kb: self.cache_shares(),
            nodes: self.nodes.iter().map(|n| int(Some(n.id))).collect(),
            distances: if square { distances } else { Vec::new() },
            order: ints(&self.order()),
            cpuset: self.cpuset.as_deref().map(ints),
            affinity: self.affinity.as_deref().map(ints),
            notes: self.notes.clone(),
            relations: relations.then(|| self.relation_codes()),
        }
    }

    /// {cache name: KiB per CPU for each CPU, NaN where it has none of that name}, the names
    /// by level, then name.
    fn cache_shares(&self) -> Vec<(String, Vec<f64>)> {
        let shares: Vec<Vec<CacheShare>> = self
            .cpus
            .iter()
            .map(|c| self.cache_share_kb(c.id))
            .collect();
        let mut names: Vec<String> = shares.iter().flatten().map(|s| s.name.clone()).collect();
        names.sort_by_key(|n| (n.get(1..2).map(str::to_string), n.clone()));
        names.dedup();
        names
            .into_iter()
            .map(|name| {
                let kb = shares
                    .iter()
                    .map(|s| {
                        s.iter()
                            .find(|x| x.name == name)
                            .map_or(f64::NAN, |x| x.per_cpu_kb)
                    })
                    .collect();
                (name, kb)
            })
            .collect()
    }

    /// Each pair's relation as its index into `Relation::ALL`.
    fn relation_codes(&self) -> Vec<Vec<u8>> {
        let code = |r: Relation| Relation::ALL.iter().position(|&x| x == r).unwrap_or(0) as u8;
        self.cpus
            .iter()
            .map(|a| {
                self.cpus
                    .iter()
                    .map(|b| code(self.relation(a.id, b.id)))
                    .collect()
            })
            .collect()
    }
}
