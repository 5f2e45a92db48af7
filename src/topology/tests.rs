//! Tests of the topology reader against described hosts and this machine.
use super::sysfs::{cpu_list, size_kb};
use super::*;
use std::path::Path;

/// A described host of `tests/hosts.py` (the suite's one home of host profiles), written by
/// `python3 tests/hosts.py NAME DIR` into a directory of its own, removed when dropped.
pub(crate) struct Described {
    dir: PathBuf,
    pub root: PathBuf,
}

impl Described {
    pub fn new(name: &str) -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ctxbench-host-{}-{n}", std::process::id()));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts.py");
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let out = std::process::Command::new(&python)
            .arg(&script)
            .arg(name)
            .arg(&dir)
            .output()
            .unwrap_or_else(|e| panic!("{python} {}: {e}", script.display()));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Described { dir, root }
    }

    pub fn topology(&self) -> Topology {
        read(&self.root).unwrap()
    }
}

impl Drop for Described {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The topology of the described host `name`.
pub(crate) fn fixture(name: &str) -> Topology {
    Described::new(name).topology()
}

/// Fails unless each of `parts` is in one of `t`'s notes.
fn assert_noted(t: &Topology, parts: &[&str]) {
    for part in parts {
        assert!(
            t.notes.iter().any(|n| n.contains(part)),
            "{part}: {:?}",
            t.notes
        );
    }
}

fn names(t: &Topology, cpu: usize) -> Vec<String> {
    t.cache_share_kb(cpu).into_iter().map(|c| c.name).collect()
}

#[test]
fn cpu_lists_and_sizes_parse_as_the_kernel_prints_them() {
    assert_eq!(cpu_list("0-3,8,10-11\n"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
    assert_eq!(cpu_list(""), Some(vec![]));
    assert_eq!(cpu_list("3-1"), None);
    assert_eq!(cpu_list("0-x"), None);
    assert_eq!(cpu_list("999999"), None);
    assert_eq!(size_kb("32K"), Some(32));
    assert_eq!(size_kb("2M"), Some(2048));
    assert_eq!(size_kb("1024"), Some(1024));
    assert_eq!(size_kb("big"), None);
}

#[test]
fn two_sockets_with_smt_and_numa() {
    let t = fixture("intel-2s-smt2");
    assert_eq!(t.allowed(), (0..16).collect::<Vec<_>>());
    assert_eq!(t.relation(3, 3), Relation::SameCpu);
    assert_eq!(t.relation(0, 8), Relation::SmtSibling);
    // Cores of one socket share only the L3; an L2 is one core's.
    assert_eq!(t.relation(0, 1), Relation::SharedLlc);
    assert_eq!(t.relation(0, 9), Relation::SharedLlc);
    assert_eq!(t.relation(0, 4), Relation::CrossPackage);
    assert_eq!(t.relation(12, 3), Relation::CrossPackage);
    assert_eq!(t.numa_distance(0, 4), Some(21));
    assert_eq!(t.numa_distance(8, 1), Some(10));
    assert_eq!(t.nodes.len(), 2);
    assert_eq!(t.cpu(12).unwrap().node, Some(1));
    // Package, then LLC, then core, then SMT sibling.
    assert_eq!(
        t.order(),
        [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]
    );
    assert_eq!(names(&t, 5), ["L1d", "L1i", "L2", "L3"]);
    let l3 = &t.cache_share_kb(5)[3];
    assert_eq!((l3.size_kb, l3.sharing), (30720, 8));
    assert_eq!(l3.per_cpu_kb, 3840.0);
    let l2 = &t.cache_share_kb(5)[2];
    assert_eq!((l2.sharing, l2.per_cpu_kb), (2, 1024.0));
    // Each cache instance once: per socket 4 cores x 3 private levels, and one L3.
    assert_eq!(t.caches.len(), 2 * (4 * 3 + 1));
}

#[test]
fn an_l3_per_ccx_splits_one_package() {
    let t = fixture("amd-1s-2ccx");
    // This tree has thread_siblings_list only (kernels before 5.5).
    assert_eq!(t.cpu(1).unwrap().smt_siblings, [1, 9]);
    assert_eq!(t.relation(1, 9), Relation::SmtSibling);
    assert_eq!(t.relation(0, 3), Relation::SharedLlc);
    assert_eq!(t.relation(0, 11), Relation::SharedLlc);
    assert_eq!(t.relation(0, 4), Relation::SamePackage);
    assert_eq!(t.relation(12, 3), Relation::SamePackage);
    assert_eq!(t.numa_distance(0, 4), None, "one node: no distance");
    assert_ne!(t.llc(0), t.llc(4));
    assert_eq!(&t.order()[..8], [0, 8, 1, 9, 2, 10, 3, 11]);
    assert_eq!(t.cache_share_kb(0)[3].per_cpu_kb, 16384.0 / 8.0);
}

#[test]
fn a_cluster_l2_is_shared_l2() {
    let t = fixture("arm-clusters");
    assert_eq!(t.relation(0, 3), Relation::SharedL2);
    assert_eq!(t.relation(0, 4), Relation::SharedLlc);
    assert_eq!(t.cpu(5).unwrap().cluster, Some(1));
    assert_eq!(t.cache_share_kb(0)[2].per_cpu_kb, 256.0);
}

#[test]
fn a_vm_without_caches_degrades_with_a_note() {
    let t = fixture("vm-no-caches");
    assert!(t.caches.is_empty());
    assert_eq!(t.relation(0, 1), Relation::SamePackage);
    assert_eq!(t.relation(2, 2), Relation::SameCpu);
    assert!(t.cache_share_kb(0).is_empty());
    assert!(
        t.notes.iter().any(|n| n.contains("no cache directories")),
        "{:?}",
        t.notes
    );
    assert_eq!(t.order(), [0, 1, 2, 3]);
}

#[test]
fn offline_cpus_are_known_but_not_allowed() {
    let t = fixture("offline");
    assert_eq!(t.cpus.len(), 8);
    assert_eq!(t.online(), (0..6).collect::<Vec<_>>());
    assert_eq!(t.allowed(), (0..6).collect::<Vec<_>>());
    assert!(!t.cpu(7).unwrap().online);
    assert!(t.cpu(7).unwrap().caches.is_empty());
    // The L3 is shared by the six online CPUs only.
    assert_eq!(t.cache_share_kb(0)[3].sharing, 6);
    assert_eq!(t.order().len(), 6);
    // No note for what an offline CPU lacks by design.
    assert!(
        !t.notes.iter().any(|n| n.contains("topology directory")),
        "{:?}",
        t.notes
    );
}

#[test]
fn the_cpuset_and_the_affinity_mask_restrict_allowed() {
    let host = Described::new("cpuset");
    let t = host.topology();
    assert_eq!(t.cpuset.as_deref(), Some(&[0, 1, 3][..]));
    assert_eq!(t.allowed(), [0, 1, 3]);
    assert_eq!(t.online(), [0, 1, 2, 3]);
    let masked = parse(&Sources {
        affinity: Some(vec![1, 2, 3]),
        ..Sources::tree(&host.root)
    });
    assert_eq!(masked.allowed(), [1, 3]);
}

#[test]
fn a_missing_tree_parses_empty_with_notes_and_read_names_it() {
    let t = parse(&Sources::tree("/nonexistent/sysfs"));
    assert!(t.cpus.is_empty());
    assert!(t.notes.iter().any(|n| n.contains("no CPUs known")));
    assert_eq!(t.relation(0, 1), Relation::CrossPackage);
    assert_eq!(t.relation(0, 0), Relation::SameCpu);
    let missing = read(Path::new("/nonexistent/sysfs"))
        .unwrap_err()
        .to_string();
    assert!(
        missing.starts_with("topology: sysfs root /nonexistent/sysfs: No such file"),
        "{missing}"
    );
    let empty = read(Path::new("/proc/self")).unwrap_err().to_string();
    assert!(
        empty.contains("/proc/self holds no devices/system/cpu/cpu<N>"),
        "{empty}"
    );
}

#[test]
fn hidden_cpu_directories_fall_back_to_the_affinity_mask() {
    let t = parse(&Sources {
        affinity: Some(vec![0, 1]),
        ..Sources::tree("/nonexistent/sysfs")
    });
    assert_eq!(t.allowed(), [0, 1]);
    assert!(t.cpus.iter().all(|c| c.online));
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("affinity mask, 2 of them")),
        "{:?}",
        t.notes
    );
}

#[test]
fn a_fifo_or_a_device_in_the_tree_is_noted_never_read() {
    let dir = std::env::temp_dir().join(format!("ctxbench-topo-fifo-{}", std::process::id()));
    let cpu = dir.join("devices/system/cpu/cpu0/topology");
    std::fs::create_dir_all(&cpu).unwrap();
    let fifo = std::ffi::CString::new(cpu.join("core_id").to_str().unwrap()).unwrap();
    // SAFETY: a valid path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink("/dev/zero", cpu.join("physical_package_id")).unwrap();
    std::fs::write(cpu.join("die_id"), vec![b'7'; 100_000]).unwrap();
    let t = read(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(t.cpu(0).unwrap().core, 0);
    assert_noted(
        &t,
        &[
            "core_id: not a regular file",
            "physical_package_id: not a regular",
            "die_id: larger",
        ],
    );
}

#[test]
fn malformed_files_are_noted_and_defaulted() {
    let dir = std::env::temp_dir().join(format!("ctxbench-topo-{}", std::process::id()));
    let cpu = dir.join("devices/system/cpu/cpu0");
    std::fs::create_dir_all(cpu.join("topology")).unwrap();
    std::fs::create_dir_all(cpu.join("cache/index0")).unwrap();
    std::fs::write(cpu.join("topology/physical_package_id"), "zero\n").unwrap();
    std::fs::write(cpu.join("cache/index0/level"), "2\n").unwrap();
    std::fs::write(cpu.join("cache/index0/type"), "Unified\n").unwrap();
    std::fs::write(cpu.join("cache/index0/size"), "lots\n").unwrap();
    let t = read(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(t.cpu(0).unwrap().package, 0);
    assert_eq!(t.caches[0].size_kb, None);
    assert!(t.cache_share_kb(0).is_empty());
    assert_noted(&t, &["physical_package_id", "size", "no usable size"]);
}

#[test]
fn this_machine_reads_without_notes_about_missing_cpus() {
    let t = read(Path::new("/sys")).unwrap();
    let allowed = crate::sys::allowed_cpus().unwrap();
    // The kernel's affinity mask lies within the cpuset; every allowed CPU is online.
    assert_eq!(t.allowed(), allowed);
    assert!(t.affinity.is_some());
    for &c in &allowed {
        assert_eq!(t.relation(c, c), Relation::SameCpu);
    }
}

#[test]
fn a_size_that_overflows_or_no_cache_could_have_is_noted_not_taken() {
    assert_eq!(
        size_kb("99999999999999999G"),
        None,
        "the KiB would wrap a u64"
    );
    assert_eq!(size_kb("17179869183G"), Some(17_179_869_183 << 20));
    let host = Described::new("intel-xeon-guest");
    let cache = |cpu: usize, index: usize| {
        host.root
            .join(format!("devices/system/cpu/cpu{cpu}/cache/index{index}"))
    };
    std::fs::write(cache(0, 0).join("size"), "99999999999999999G\n").unwrap();
    // The L3 of both CPUs: 1 TiB.
    for cpu in [0, 1] {
        std::fs::write(cache(cpu, 3).join("size"), "1073741824K\n").unwrap();
    }
    let t = host.topology();
    let sizes = |cpu: usize| -> Vec<(String, Option<u64>)> {
        let c = t.cpu(cpu).unwrap();
        c.caches
            .iter()
            .map(|&i| (t.caches[i].name(), t.caches[i].size_kb))
            .collect()
    };
    assert_eq!(
        sizes(0),
        [
            ("L1d".to_string(), None),
            ("L1i".to_string(), Some(32)),
            ("L2".to_string(), Some(2048)),
            ("L3".to_string(), None)
        ]
    );
    assert_noted(
        &t,
        &[
            "cpu0/cache/index0/size: \"99999999999999999G\" is no cache size",
            "cpu0/cache/index3/size: \"1073741824K\" is no cache size (KiB, at most 4194304)",
            "some caches have no usable size",
        ],
    );
    assert!(t.cache_share_kb(1).iter().all(|s| s.name != "L3"));
}

#[test]
fn a_line_size_that_is_no_positive_number_is_noted_not_taken() {
    let host = Described::new("intel-xeon-guest");
    let line = |index: usize| {
        host.root.join(format!(
            "devices/system/cpu/cpu0/cache/index{index}/coherency_line_size"
        ))
    };
    for (index, text) in [(0, "0"), (1, "-1"), (2, "1e23"), (3, "wide")] {
        std::fs::write(line(index), format!("{text}\n")).unwrap();
    }
    let t = host.topology();
    let of = |cpu: usize| -> Vec<Option<u64>> {
        let c = t.cpu(cpu).unwrap();
        c.caches.iter().map(|&i| t.caches[i].line_bytes).collect()
    };
    // cpu1's L3 is cpu0's: one instance, read once (from cpu0's files).
    assert_eq!(of(0), [None, None, None, None]);
    assert_eq!(of(1), [Some(64), Some(64), Some(64), None]);
    for text in ["\"0\"", "\"-1\"", "\"1e23\"", "\"wide\""] {
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("coherency_line_size: cannot read") && n.contains(text)),
            "{text}: {:?}",
            t.notes
        );
    }
}

#[test]
fn one_core_pmu_alone_or_one_capacity_everywhere_is_no_hybrid() {
    use super::CoreType::Capacity;
    let laptop = Described::new("intel-hybrid-laptop");
    std::fs::remove_dir_all(laptop.root.join("devices/cpu_atom")).unwrap();
    assert!(laptop.topology().core_types().is_empty());
    let board = Described::new("rk3399-big-little");
    let capacity = |cpu: usize| {
        board
            .root
            .join(format!("devices/system/cpu/cpu{cpu}/cpu_capacity"))
    };
    std::fs::write(capacity(4), "fast\n").unwrap();
    let t = board.topology();
    assert_eq!(
        t.cpu(4).unwrap().core_type,
        None,
        "what cannot be read is no kind"
    );
    assert_eq!(t.cpu(5).unwrap().core_type, Some(Capacity(1024)));
    assert_noted(&t, &["cpu4/cpu_capacity: cannot read \"fast\""]);
    std::fs::write(capacity(5), "381\n").unwrap();
    assert!(board.topology().core_types().is_empty());
}
