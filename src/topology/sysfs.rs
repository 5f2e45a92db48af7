//! Reading a sysfs tree into a `Topology`. Pure file parsing: the live machine's affinity mask
//! and cgroup come in through `Sources`, so a fixture tree is read exactly as `/sys` is.
//! Nothing here fails on a missing or malformed file: the level it describes is left out, or
//! a stated default taken, and a note says which. A file that is not a regular one (a FIFO
//! would hang the read, a device such as /dev/zero never end) or larger than `MAX_FILE_BYTES`
//! is such a file. Only a root that is no directory, or (another machine's tree) holds no
//! CPUs, is an error: it describes no machine.

use super::{Cache, CacheKind, CoreType, Cpu, Node, Topology};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Larger than any sysfs attribute (one page): a file past it is no sysfs file.
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// Where a topology comes from: a sysfs root, the cgroup files that may hold our cpuset
/// (relative to the root, tried in order), and our affinity mask where it applies.
#[derive(Debug, Clone)]
pub struct Sources {
    pub root: PathBuf,
    pub cpuset_files: Vec<PathBuf>,
    pub affinity: Option<Vec<usize>>,
}

/// The cgroup files of the cgroup at `path` that hold its effective CPUs: v2, then v1's
/// cpuset hierarchy.
fn cpuset_files(v2: &str, v1: &str) -> Vec<PathBuf> {
    let under = |base: &str, path: &str, file: &str| {
        let rel = path.trim_start_matches('/');
        let mut p = PathBuf::from(base);
        if !rel.is_empty() {
            p.push(rel);
        }
        p.join(file)
    };
    vec![
        under("fs/cgroup", v2, "cpuset.cpus.effective"),
        under("fs/cgroup/cpuset", v1, "cpuset.effective_cpus"),
    ]
}

impl Sources {
    /// A sysfs tree that is not this machine's live one: its root cgroup's cpuset, no
    /// affinity mask.
    pub fn tree(root: impl Into<PathBuf>) -> Self {
        Sources {
            root: root.into(),
            cpuset_files: cpuset_files("/", "/"),
            affinity: None,
        }
    }

    /// The live `/sys`: this process's cgroup (from `/proc/self/cgroup`) and affinity mask.
    pub fn live(root: impl Into<PathBuf>) -> Result<Self> {
        let cgroups = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let path = |pick: &dyn Fn(&str) -> bool| {
            cgroups
                .lines()
                .filter_map(|l| l.splitn(3, ':').collect::<Vec<_>>().try_into().ok())
                .find(|[_, controllers, _]: &[&str; 3]| pick(controllers))
                .map_or("/".to_string(), |[_, _, p]| p.to_string())
        };
        let v2 = path(&|c| c.is_empty());
        let v1 = path(&|c| c.split(',').any(|x| x == "cpuset"));
        Ok(Sources {
            root: root.into(),
            cpuset_files: cpuset_files(&v2, &v1),
            affinity: Some(crate::sys::allowed_cpus()?),
        })
    }
}

/// The topology under `root`: the live machine's (with this process's cpuset and affinity)
/// when `root` is `/sys`, else a tree describing another machine.
pub fn read(root: &Path) -> Result<Topology> {
    let shown = root.display();
    match fs::metadata(root) {
        Err(e) => {
            let errno = e.raw_os_error().unwrap_or(libc::ENOENT);
            return Err(Error::os(errno, format!("topology: sysfs root {shown}")));
        }
        Ok(m) if !m.is_dir() => {
            return Err(Error::os(
                libc::ENOTDIR,
                format!("topology: sysfs root {shown}"),
            ));
        }
        Ok(_) => {}
    }
    let live = fs::canonicalize(root).is_ok_and(|p| p == Path::new("/sys"));
    let sources = if live {
        Sources::live(root)?
    } else {
        Sources::tree(root)
    };
    let t = parse(&sources);
    if t.cpus.is_empty() && !live {
        return Err(Error::invalid(
            "sysfs",
            format!(
                "{shown} holds no {CPU_DIR}/cpu<N> directories: not a sysfs tree (name the \
                 directory that holds devices/, such as /sys)"
            ),
        ));
    }
    Ok(t)
}

/// "0-3,8,10-11" → [0, 1, 2, 3, 8, 10, 11]; `None` if any part is not a range of CPU ids.
pub fn cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let v: usize = part.trim().parse().ok()?;
                (v, v)
            }
        };
        if hi < lo || hi >= crate::sys::MAX_CPUS {
            return None;
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// "32K", "2M", "1G" → KiB; a bare number is taken as KiB (sysfs prints a K suffix). `None`
/// for what is no number, or whose KiB overflow.
pub(super) fn size_kb(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 1),
        'M' | 'm' => (&t[..t.len() - 1], 1024),
        'G' | 'g' => (&t[..t.len() - 1], 1024 * 1024),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// The largest cache instance taken as a fact, KiB: 4 GiB, over three times the largest
/// shipped (AMD's EPYC with stacked L3 has 1,152 MiB on a package). A larger size in sysfs
/// (a hypervisor's or a broken table's) is noted and not taken: every default sized by it
/// would be absurd.
pub const MAX_CACHE_KB: u64 = 4 << 20;

/// A cache's size, where it is one: a file that cannot be read as one, or past
/// `MAX_CACHE_KB`, is noted and not taken.
fn cache_size(r: &mut Reader, rel: &Path) -> Option<u64> {
    let text = r.text(rel)?;
    let kb = size_kb(&text).filter(|&kb| kb <= MAX_CACHE_KB);
    if kb.is_none() {
        r.notes.push(format!(
            "{}: {text:?} is no cache size (KiB, at most {MAX_CACHE_KB}): not taken",
            rel.display()
        ));
    }
    kb
}

/// A cache's line in bytes, where sysfs gives a positive number (what a caller may use of it
/// is the caller's rule).
fn line_bytes(r: &mut Reader, rel: &Path) -> Option<u64> {
    r.parsed(rel, |t| t.parse::<u64>().ok().filter(|&b| b > 0))
}

/// Reads files under one root, collecting a note for each that exists but cannot be used.
struct Reader<'a> {
    root: &'a Path,
    notes: Vec<String>,
}

impl Reader<'_> {
    /// A file's text, trimmed; `None` (with a note where it exists) for what cannot be read
    /// as a sysfs attribute. Opened without blocking, so a FIFO cannot hang the read.
    fn text(&mut self, rel: &Path) -> Option<String> {
        let file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.root.join(rel))
            .ok()?;
        let kind = file.metadata().ok()?.file_type();
        if !kind.is_file() {
            let what = if kind.is_dir() {
                "a directory"
            } else {
                "a FIFO, socket or device"
            };
            self.notes.push(format!(
                "{}: not a regular file ({what}): ignored",
                rel.display()
            ));
            return None;
        }
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).ok()?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            self.notes.push(format!(
                "{}: larger than {MAX_FILE_BYTES} bytes, no sysfs attribute: ignored",
                rel.display()
            ));
            return None;
        }
        Some(String::from_utf8_lossy(&bytes).trim().to_string())
    }

    fn parsed<T>(&mut self, rel: &Path, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
        let text = self.text(rel)?;
        let v = parse(&text);
        if v.is_none() {
            self.notes
                .push(format!("{}: cannot read {text:?}", rel.display()));
        }
        v
    }

    fn int(&mut self, rel: &Path) -> Option<i64> {
        self.parsed(rel, |t| t.parse().ok())
    }

    fn list(&mut self, rel: &Path) -> Option<Vec<usize>> {
        self.parsed(rel, cpu_list)
    }

    /// Numbered entries `<prefix><n>` of a directory, ascending by n.
    fn numbered(&self, rel: &Path, prefix: &str) -> Vec<usize> {
        let Ok(dir) = fs::read_dir(self.root.join(rel)) else {
            return Vec::new();
        };
        let mut ids: Vec<usize> = dir
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_prefix(prefix)?
                    .parse()
                    .ok()
            })
            .collect();
        ids.sort_unstable();
        ids
    }
}

const CPU_DIR: &str = "devices/system/cpu";
const NODE_DIR: &str = "devices/system/node";

/// The topology `sources` describe; see the module doc.
pub fn parse(sources: &Sources) -> Topology {
    let mut r = Reader {
        root: &sources.root,
        notes: Vec::new(),
    };
    let cpu_dir = Path::new(CPU_DIR);
    let mut ids = r.numbered(cpu_dir, "cpu");
    let mut online = online_cpus(&mut r, &ids);
    if ids.is_empty() {
        let at = sources.root.join(cpu_dir);
        match &sources.affinity {
            // sysfs hidden (a container, a sandbox): the CPUs we may use are still known.
            Some(mask) if !mask.is_empty() => {
                r.notes.push(format!(
                    "{}: no cpu<N> directories (hidden?): the CPUs are this process's \
                     affinity mask, {} of them, online; where they sit is unknown",
                    at.display(),
                    mask.len()
                ));
                ids.clone_from(mask);
                online.clone_from(mask);
            }
            _ => r.notes.push(format!(
                "{}: no cpu<N> directories: no CPUs known",
                at.display()
            )),
        }
    }
    let cpuset = sources
        .cpuset_files
        .iter()
        .find(|f| r.root.join(f).exists())
        .and_then(|f| r.list(f));
    if cpuset.is_none() {
        r.notes
            .push("no cpuset file of our cgroup found: the cpuset was not applied".into());
    }
    let (mut cpus, caches) = cpus_and_caches(&mut r, &ids, &online);
    for c in &mut cpus {
        let within = |set: &Option<Vec<usize>>| set.as_ref().is_none_or(|s| s.contains(&c.id));
        c.allowed = c.online && within(&cpuset) && within(&sources.affinity);
    }
    let nodes = nodes(&mut r, &mut cpus);
    core_types(&mut r, &mut cpus);
    let mut notes = r.notes;
    describe_gaps(&cpus, &caches, &nodes, &mut notes);
    Topology {
        root: sources.root.clone(),
        cpus,
        caches,
        nodes,
        cpuset,
        affinity: sources.affinity.clone(),
        notes,
    }
}

/// Online CPUs: the `online` list, else each CPU's own `online` flag (cpu0 often has
/// none: it cannot go offline), else every CPU.
fn online_cpus(r: &mut Reader, ids: &[usize]) -> Vec<usize> {
    if let Some(list) = r.list(&Path::new(CPU_DIR).join("online")) {
        return list;
    }
    ids.iter()
        .copied()
        .filter(|id| {
            let flag = Path::new(CPU_DIR).join(format!("cpu{id}/online"));
            r.int(&flag).is_none_or(|v| v != 0)
        })
        .collect()
}

/// Each CPU's topology files, and its caches (one entry per instance).
fn cpus_and_caches(r: &mut Reader, ids: &[usize], online: &[usize]) -> (Vec<Cpu>, Vec<Cache>) {
    let mut caches: Vec<Cache> = Vec::new();
    let mut cpus = Vec::with_capacity(ids.len());
    let mut unplaced = Vec::new();
    for &id in ids {
        let dir = Path::new(CPU_DIR).join(format!("cpu{id}"));
        let topo = dir.join("topology");
        if online.contains(&id) && !r.root.join(&topo).is_dir() {
            unplaced.push(id);
        }
        let known = |v: Option<i64>| v.filter(|&x| x >= 0);
        let siblings = r
            .list(&topo.join("core_cpus_list"))
            .or_else(|| r.list(&topo.join("thread_siblings_list")))
            .filter(|s| s.contains(&id))
            .unwrap_or_else(|| vec![id]);
        let mut cpu = Cpu {
            id,
            online: online.contains(&id),
            allowed: false,
            package: known(r.int(&topo.join("physical_package_id"))).unwrap_or(0),
            die: known(r.int(&topo.join("die_id"))),
            // 65535 (x86's "no cluster") and -1 are not clusters.
            cluster: known(r.int(&topo.join("cluster_id"))).filter(|&x| x != 65535),
            core: known(r.int(&topo.join("core_id"))).unwrap_or(id as i64),
            node: None,
            core_type: None,
            smt_siblings: siblings,
            caches: Vec::new(),
        };
        for index in r.numbered(&dir.join("cache"), "index") {
            let Some(cache) = cache(r, &dir.join(format!("cache/index{index}")), id) else {
                continue;
            };
            // One instance per level, kind and sharers: the first CPU's files describe it.
            let same =
                |c: &&Cache| (c.level, c.kind, &c.cpus) == (cache.level, cache.kind, &cache.cpus);
            let at = caches.iter().position(|c| same(&c)).unwrap_or_else(|| {
                caches.push(cache);
                caches.len() - 1
            });
            cpu.caches.push(at);
        }
        cpu.caches.sort_by_key(|&i| caches[i].level);
        cpus.push(cpu);
    }
    if !unplaced.is_empty() {
        r.notes.push(format!(
            "online CPUs {unplaced:?} have no topology directory: package 0 and a core of \
             their own assumed"
        ));
    }
    (cpus, caches)
}

/// One `cache/index<N>` directory of CPU `id`; `None` without a level or type.
fn cache(r: &mut Reader, dir: &Path, id: usize) -> Option<Cache> {
    let level = r.int(&dir.join("level"))?;
    let kind = r.parsed(&dir.join("type"), CacheKind::parse)?;
    let mut cpus = r.list(&dir.join("shared_cpu_list")).unwrap_or_default();
    if !cpus.contains(&id) {
        cpus.push(id);
        cpus.sort_unstable();
    }
    Some(Cache {
        level: u32::try_from(level).ok()?,
        kind,
        size_kb: cache_size(r, &dir.join("size")),
        line_bytes: line_bytes(r, &dir.join("coherency_line_size")),
        cpus,
    })
}

/// Each CPU's kind of core on a hybrid host: Intel's from the two core PMUs
/// (`devices/cpu_core/cpus`, `devices/cpu_atom/cpus`), else Arm's from `cpu_capacity`; none
/// where the online CPUs are of one kind.
fn core_types(r: &mut Reader, cpus: &mut [Cpu]) {
    let core = r.list(Path::new("devices/cpu_core/cpus"));
    let atom = r.list(Path::new("devices/cpu_atom/cpus"));
    let kinds: BTreeMap<usize, CoreType> = if core.is_some() || atom.is_some() {
        let each =
            |list: Option<Vec<usize>>, kind| list.into_iter().flatten().map(move |c| (c, kind));
        each(core, CoreType::Performance)
            .chain(each(atom, CoreType::Efficiency))
            .collect()
    } else {
        let online: Vec<usize> = cpus.iter().filter(|c| c.online).map(|c| c.id).collect();
        online
            .into_iter()
            .filter_map(|id| {
                let rel = Path::new(CPU_DIR).join(format!("cpu{id}/cpu_capacity"));
                let capacity = u32::try_from(r.int(&rel)?).ok()?;
                Some((id, CoreType::Capacity(capacity)))
            })
            .collect()
    };
    let distinct: std::collections::BTreeSet<&CoreType> = kinds.values().collect();
    if distinct.len() < 2 {
        return;
    }
    for c in cpus.iter_mut() {
        c.core_type = kinds.get(&c.id).copied();
    }
}

/// NUMA nodes with CPUs or distances; each CPU learns its node.
fn nodes(r: &mut Reader, cpus: &mut [Cpu]) -> Vec<Node> {
    let dir = Path::new(NODE_DIR);
    let ids = r.numbered(dir, "node");
    let mut nodes: Vec<Node> = ids
        .iter()
        .map(|&id| {
            let node = dir.join(format!("node{id}"));
            let distances = r
                .parsed(&node.join("distance"), |t| {
                    t.split_whitespace().map(|d| d.parse().ok()).collect()
                })
                .unwrap_or_default();
            Node {
                id,
                cpus: r.list(&node.join("cpulist")).unwrap_or_default(),
                distances,
            }
        })
        .collect();
    let n = nodes.len();
    for node in &mut nodes {
        if node.distances.len() != n {
            if !node.distances.is_empty() {
                r.notes.push(format!(
                    "node{}: {} distances for {n} nodes: distances not used",
                    node.id,
                    node.distances.len()
                ));
            }
            node.distances.clear();
        }
    }
    let by_cpu: BTreeMap<usize, usize> = nodes
        .iter()
        .flat_map(|n| n.cpus.iter().map(move |&c| (c, n.id)))
        .collect();
    for c in cpus.iter_mut() {
        c.node = by_cpu.get(&c.id).copied();
    }
    nodes
}

/// Notes for what a VM or an old kernel typically leaves out.
fn describe_gaps(cpus: &[Cpu], caches: &[Cache], nodes: &[Node], notes: &mut Vec<String>) {
    let online: Vec<&Cpu> = cpus.iter().filter(|c| c.online).collect();
    if !online.is_empty() && caches.is_empty() {
        notes.push(
            "no cache directories (cpu*/cache): shared-l2 and shared-llc cannot be told from \
             same-package; cache shares unknown"
                .into(),
        );
    } else if online.iter().any(|c| c.caches.is_empty()) {
        notes.push("some online CPUs list no caches: their cache relations are unknown".into());
    }
    if caches.iter().any(|c| c.size_kb.is_none()) {
        notes.push("some caches have no usable size in sysfs".into());
    }
    if nodes.is_empty() {
        notes.push("no NUMA nodes in sysfs (devices/system/node): one node assumed".into());
    } else if nodes.len() > 1 && nodes.iter().any(|n| n.distances.is_empty()) {
        notes.push("NUMA distances unknown: cross-node cells carry none".into());
    }
    if nodes.len() > 1 && online.iter().any(|c| c.node.is_none()) {
        notes.push("some online CPUs are in no NUMA node's cpulist".into());
    }
}
