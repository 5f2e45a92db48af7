//! Restrictions found on described hosts (`tests/hosts.py` profiles with the files of each
//! restriction planted), and the live machine's read without failing.
use super::*;
use crate::topology::tests::Described;

fn plant(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("{text}\n")).unwrap();
}

fn names(host: &Host) -> Vec<&'static str> {
    detect(host).iter().map(Restriction::name).collect()
}

/// A described host with a kernel config, so that only what a test plants is restricted.
fn unrestricted(profile: &str) -> (Described, Host) {
    let d = Described::new(profile);
    plant(&d.root, "proc/config.gz", "not read, only there");
    let host = Host::at(&d.root);
    (d, host)
}

#[test]
fn a_described_host_without_restrictions_has_none() {
    let (_d, host) = unrestricted("amd-epyc-guest");
    assert!(!host.live);
    assert_eq!(names(&host), Vec::<&str>::new());
}

#[test]
fn a_cpuset_smaller_than_the_online_cpus_is_named_with_the_cpus_it_allows() {
    let (d, host) = unrestricted("cpuset");
    let r = find(&host, Kind::Cpuset).expect("4 CPUs, cpuset 0-1,3");
    assert_eq!(
        r.detail,
        "our cgroup's cpuset allows 3 of the 4 online CPUs (0-1,3)"
    );
    plant(&d.root, "fs/cgroup/cpuset.cpus.effective", "2");
    let r = find(&host, Kind::Cpuset).unwrap();
    assert!(
        r.detail.contains("allows 1 of the 4 online CPUs (2)"),
        "{r:?}"
    );
    plant(&d.root, "fs/cgroup/cpuset.cpus.effective", "0-3");
    assert_eq!(
        find(&host, Kind::Cpuset),
        None,
        "all of them: no restriction"
    );
}

#[test]
fn a_quota_is_the_tightest_on_the_way_to_the_root_in_v2_and_v1() {
    let (d, host) = unrestricted("amd-epyc-guest");
    plant(&d.root, "fs/cgroup/cpu.max", "max 100000");
    assert_eq!(quota(&host), None, "'max' is no limit");
    plant(
        &d.root,
        "proc/self/cgroup",
        "1:cpu:/batch/job\n0::/batch/job",
    );
    plant(&d.root, "fs/cgroup/batch/cpu.max", "150000 100000");
    plant(&d.root, "fs/cgroup/batch/job/cpu.max", "max 100000");
    let q = quota(&host).unwrap();
    assert_eq!((q.quota_us, q.period_us), (150_000, 100_000));
    assert_eq!(q.file, d.root.join("fs/cgroup/batch/cpu.max"));
    plant(&d.root, "fs/cgroup/cpu/batch/job/cpu.cfs_quota_us", "50000");
    plant(
        &d.root,
        "fs/cgroup/cpu/batch/job/cpu.cfs_period_us",
        "100000",
    );
    plant(&d.root, "fs/cgroup/cpu/cpu.cfs_quota_us", "-1");
    plant(&d.root, "fs/cgroup/cpu/cpu.cfs_period_us", "100000");
    let r = find(&host, Kind::CpuQuota).unwrap();
    assert!(
        r.detail.starts_with("0.50 CPU: 50000 µs every 100000 µs ("),
        "{r:?}"
    );
    assert!(r.detail.contains("cpu/batch/job/cpu.cfs_quota_us"), "{r:?}");
}

#[test]
fn throttled_periods_add_up_over_the_limited_groups_only() {
    let (d, host) = unrestricted("amd-epyc-guest");
    assert_eq!(
        throttled_periods(&host),
        None,
        "no limit: nothing to throttle"
    );
    plant(&d.root, "proc/self/cgroup", "0::/a/b");
    plant(&d.root, "fs/cgroup/a/cpu.max", "50000 100000");
    plant(
        &d.root,
        "fs/cgroup/a/cpu.stat",
        "nr_periods 9\nnr_throttled 4",
    );
    plant(&d.root, "fs/cgroup/a/b/cpu.max", "max 100000");
    plant(
        &d.root,
        "fs/cgroup/a/b/cpu.stat",
        "nr_periods 9\nnr_throttled 100",
    );
    assert_eq!(throttled_periods(&host), Some(4));
    plant(&d.root, "fs/cgroup/a/b/cpu.max", "90000 100000");
    assert_eq!(throttled_periods(&host), Some(104));
}

#[test]
fn a_read_only_cgroup_mount_is_named_and_a_writable_one_is_not() {
    let (d, host) = unrestricted("amd-epyc-guest");
    let line = |id: u32, mount: &str, opts: &str, fs: &str| {
        format!("{id} 1 0:{id} / {mount} {opts} shared:1 - {fs} {fs} {opts}")
    };
    let rw = [
        line(30, "/sys/fs/cgroup/cpu", "rw,relatime", "cgroup"),
        line(31, "/proc", "ro,nosuid", "proc"),
    ];
    plant(&d.root, "proc/self/mountinfo", &rw.join("\n"));
    assert_eq!(find(&host, Kind::CgroupReadOnly), None, "{rw:?}");
    let ro = [
        line(30, "/sys/fs/cgroup/cpu", "ro,relatime", "cgroup"),
        line(32, "/sys/fs/cgroup/unified", "ro,nosuid", "cgroup2"),
    ];
    plant(&d.root, "proc/self/mountinfo", &ro.join("\n"));
    let r = find(&host, Kind::CgroupReadOnly).unwrap();
    assert_eq!(
        r.detail,
        "mounted read-only: /sys/fs/cgroup/cpu, /sys/fs/cgroup/unified"
    );
}

#[test]
fn perf_event_paranoid_of_2_and_3_say_what_each_stops() {
    let (d, host) = unrestricted("amd-epyc-guest");
    plant(&d.root, "proc/sys/kernel/perf_event_paranoid", "1");
    assert_eq!(find(&host, Kind::PerfParanoid), None);
    plant(&d.root, "proc/sys/kernel/perf_event_paranoid", "2");
    let two = find(&host, Kind::PerfParanoid).unwrap().detail;
    assert!(two.contains("= 2: a process without CAP_PERFMON counts user-space events only"));
    plant(&d.root, "proc/sys/kernel/perf_event_paranoid", "3");
    let three = find(&host, Kind::PerfParanoid).unwrap().detail;
    assert!(three.contains("= 3: a process without CAP_PERFMON may open no perf event"));
}

#[test]
fn io_uring_disabled_is_named_on_a_described_host_and_its_cause_on_any() {
    let (d, host) = unrestricted("amd-epyc-guest");
    plant(&d.root, "proc/sys/kernel/io_uring_disabled", "0");
    assert_eq!(find(&host, Kind::IoUringRefused), None);
    plant(&d.root, "proc/sys/kernel/io_uring_disabled", "2");
    let r = find(&host, Kind::IoUringRefused).unwrap();
    assert!(r.detail.contains("refused to every process"), "{r:?}");
    let why = io_uring_cause(&host, libc::EPERM);
    assert!(why.contains("kernel.io_uring_disabled = 2, EPERM"), "{why}");
    plant(&d.root, "proc/sys/kernel/io_uring_disabled", "0");
    plant(&d.root, "proc/self/status", "Name:\tx\nSeccomp:\t2");
    let why = io_uring_cause(&host, libc::EPERM);
    assert!(why.contains("refused by a seccomp filter"), "{why}");
    let why = io_uring_cause(&host, libc::ENOSYS);
    assert!(
        why.contains("seccomp filter"),
        "ENOSYS from a filter: {why}"
    );
}

#[test]
fn no_kernel_config_unless_config_gz_or_the_boot_config_is_there() {
    let d = Described::new("amd-epyc-guest");
    let host = Host::at(&d.root);
    let r = find(&host, Kind::NoKernelConfig).unwrap();
    assert!(
        r.detail.contains("config.gz (CONFIG_IKCONFIG_PROC)"),
        "{r:?}"
    );
    plant(&d.root, "proc/sys/kernel/osrelease", "6.1.0-test");
    plant(&d.root, "boot/config-6.1.0-test", "CONFIG_PREEMPT=y");
    assert_eq!(find(&host, Kind::NoKernelConfig), None);
}

#[test]
fn every_kind_has_its_own_name_and_a_hint_saying_what_to_do() {
    let names: BTreeSet<_> = Kind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(names.len(), Kind::ALL.len());
    for k in Kind::ALL {
        assert!(k.hint().len() > 40, "{k:?}");
    }
}

#[test]
fn the_live_host_is_read_without_failing() {
    let host = Host::at(Path::new("/sys"));
    assert!(host.live);
    assert_eq!(host.proc, PathBuf::from("/proc"));
    for r in detect(&host) {
        assert!(!r.detail.is_empty(), "{r:?}");
    }
}
