//! Who holds a CPU: the tasks of a real-time policy that ran on it, named in an error that
//! says why another task could not run there.

use super::{Policy, Sched};

/// How long `realtime_holders` watches which tasks run: longer than the gap the real-time
/// throttle leaves fair tasks (50 ms of each second by default), in which a holder is idle.
const HOLDERS_LOOK: std::time::Duration = std::time::Duration::from_millis(100);
/// Holders named at most.
const HOLDERS_NAMED: usize = 3;

/// Tasks of a real-time policy that ran on one of `cpus` during a short look, each as
/// "task 1234 (comm) under fifo 20 on CPU 1": what keeps fair tasks, and real-time ones of
/// no higher priority, off those CPUs. For an error that says why a task did not run; tasks
/// that did not run meanwhile (those waiting behind a holder) are not named.
pub fn realtime_holders(cpus: &[usize]) -> Vec<String> {
    let ran = |tid: &str| {
        let text = std::fs::read(format!("/proc/{tid}/schedstat")).ok()?;
        crate::observer::parse_schedstat(&text).map(|(ns, _)| ns)
    };
    let found = realtime_tasks(cpus);
    let before: Vec<Option<u64>> = found.iter().map(|(tid, _)| ran(tid)).collect();
    std::thread::sleep(HOLDERS_LOOK);
    let mut named: Vec<String> = found
        .into_iter()
        .zip(before)
        .filter(|((tid, _), b)| matches!((b, ran(tid)), (Some(b), Some(a)) if a > *b))
        .map(|((_, words), _)| words)
        .collect();
    if named.len() > HOLDERS_NAMED {
        let more = named.len() - HOLDERS_NAMED;
        named.truncate(HOLDERS_NAMED);
        named.push(format!("{more} more"));
    }
    named
}

/// Every task under a real-time policy that last ran on one of `cpus`: (its id, it in words).
fn realtime_tasks(cpus: &[usize]) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let Ok(processes) = std::fs::read_dir("/proc") else {
        return found;
    };
    for process in processes.flatten() {
        let Ok(tasks) = std::fs::read_dir(process.path().join("task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(text) = std::fs::read(task.path().join("stat")) else {
                continue;
            };
            let Some((comm, cpu, priority, number)) = crate::observer::parse_stat_sched(&text)
            else {
                continue;
            };
            let policy = Policy::from_number(number).filter(|p| p.realtime());
            if let (Some(policy), true) = (policy, cpus.contains(&cpu)) {
                let tid = task.file_name().to_string_lossy().into_owned();
                let s = Sched {
                    policy,
                    priority,
                    ..Sched::default()
                };
                let words = format!("task {tid} ({comm}) under {} on CPU {cpu}", s.describe());
                found.push((tid, words));
            }
        }
    }
    found
}
