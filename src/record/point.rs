//! A point's canonical identity: every resolved value that changes what it measures (engine,
//! transport, placement, working set, stopping mode, observer, policy, cgroups, neighbours),
//! as one text, `key=value` pairs sorted by key. Runs with the same identity on one machine
//! are runs of the same point: the run history, a sweep's out file and a results store key
//! points by it, and nothing else computes it. Values are written as Python writes them
//! (`True`, `None`, `0.002`), and the defaults that came after a value existed are left out
//! (a stride of 8, the evidence observer, the default policy, no cgroups, no neighbours), so
//! that a point keeps the identity it had before them.

use super::SchedRecord;
use crate::config::{Config, Plan};
use crate::workload::DEFAULT_STRIDE_BYTES;

/// The identity of each participant count of `cfg`, run under `sched`.
pub fn identities(cfg: &Config, sched: &SchedRecord) -> Vec<String> {
    cfg.procs
        .iter()
        .map(|&procs| identity(cfg, sched, procs))
        .collect()
}

fn identity(cfg: &Config, sched: &SchedRecord, procs: usize) -> String {
    let mut pairs: Vec<(&str, String)> = vec![
        ("procs", procs.to_string()),
        ("engine", cfg.engine.name().into()),
        ("transport", cfg.transport.name().into()),
        ("placement", cfg.placement.name()),
        ("min_time", min_time(cfg)),
    ];
    let ring = cfg.plan == (Plan::Calibrated { overhead: true });
    if ring {
        pairs.extend([
            ("size_kb", cfg.size_kb.to_string()),
            ("parallel", cfg.parallel.to_string()),
            ("fixed", python_bool(cfg.stop.fixed().is_some())),
            ("record_hops", python_bool(cfg.record_hops)),
        ]);
        if cfg.stride_bytes != DEFAULT_STRIDE_BYTES {
            pairs.push(("stride_bytes", cfg.stride_bytes.to_string()));
        }
    } else {
        pairs.push(("kind", "pingpong".into()));
    }
    if cfg.observer != crate::observer::Observer::Evidence {
        pairs.push(("counters", cfg.observer.as_str().into()));
    }
    if (sched.policy, sched.nice) != ("other", 0) {
        pairs.extend([
            ("policy", sched.policy.into()),
            ("priority", sched.priority.to_string()),
            ("nice", sched.nice.to_string()),
        ]);
        let dl = [
            ("dl_runtime_us", sched.dl_runtime_us),
            ("dl_deadline_us", sched.dl_deadline_us),
            ("dl_period_us", sched.dl_period_us),
        ];
        pairs.extend(
            dl.into_iter()
                .filter_map(|(k, v)| Some((k, v?.to_string()))),
        );
    }
    if let Some(c) = &cfg.cgroups {
        pairs.extend([
            ("cgroups", c.layout().into()),
            ("cgroup_depth", c.depth.to_string()),
            (
                "cgroup_weight",
                c.weight.map_or("None".into(), |w| w.to_string()),
            ),
        ]);
    }
    if let Some(i) = &cfg.interference {
        let asked = [
            ("duty", i.duty),
            ("hogs", i.hogs as f64),
            ("queued", i.queued as f64),
            ("rings", i.rings as f64),
            ("thrash_kb", i.thrash_kb as f64),
        ];
        let given: Vec<String> = asked
            .iter()
            .filter(|&&(k, v)| k == "duty" || v != 0.0)
            .map(|(k, v)| format!("{k}={}", general(*v)))
            .collect();
        pairs.push(("interference", given.join(",")));
    }
    pairs.sort_by_key(|&(k, _)| k);
    let parts: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.join(" ")
}

/// The repetition length where it is not the stopping mode's default; `None` where it is.
fn min_time(cfg: &Config) -> String {
    if cfg.min_time == cfg.stop.default_min_time() {
        return "None".into();
    }
    python_float(cfg.min_time)
}

fn python_bool(b: bool) -> String {
    if b { "True" } else { "False" }.into()
}

/// `x` as Python's `repr` writes a float: the shortest text that reads back as `x`, `.0`
/// on whole numbers, an exponent below 1e-4 and from 1e16.
fn python_float(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e16).contains(&x.abs()) {
        let text = format!("{x:e}");
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    if x.fract() == 0.0 && x.is_finite() {
        return format!("{x:.1}");
    }
    format!("{x}")
}

/// `x` as Python's `format(x, "g")` writes it: six significant digits, no trailing zeros.
fn general(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (5 - x.abs().log10().floor() as i32).max(0) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_python_writes_them() {
        assert_eq!(python_float(0.002), "0.002");
        assert_eq!(python_float(1.0), "1.0");
        assert_eq!(python_float(5e-5), "5e-05");
        assert_eq!(python_float(0.25), "0.25");
        assert_eq!(general(1.0), "1");
        assert_eq!(general(0.5), "0.5");
        assert_eq!(general(2.0), "2");
        assert_eq!(general(4096.0), "4096");
        assert_eq!(general(0.125), "0.125");
    }

    #[test]
    fn a_ring_s_identity_holds_what_changes_its_figure_and_leaves_defaults_out() {
        let cfg = Config {
            min_time: crate::stop::FIXED_MIN_TIME,
            ..Config::lat_ctx(vec![2, 8])
        };
        let sched = SchedRecord::from(crate::sched::Sched::default());
        let ids = identities(&cfg, &sched);
        assert_eq!(
            ids[0],
            "engine=process fixed=True min_time=None parallel=1 placement=default procs=2 \
             record_hops=False size_kb=0 transport=pipe"
        );
        let asked = crate::interference::Interference::from_pairs(&[("hogs".into(), 2.0)]);
        let loaded = Config {
            interference: asked.ok(),
            ..cfg
        };
        assert!(identities(&loaded, &sched)[1].ends_with(
            "interference=duty=1,hogs=2 \
             min_time=None parallel=1 placement=default procs=8 record_hops=False size_kb=0 \
             transport=pipe"
        ));
    }
}
