//! Tests of the engines as a whole: names, combinations, and a start that is interrupted,
//! times out or cannot be made.

use super::*;

#[test]
fn every_engine_parses_by_its_name() {
    for &engine in Engine::ALL {
        assert_eq!(Engine::parse(engine.name()).unwrap(), engine);
    }
    assert_eq!(Engine::ALL[0], Engine::Process);
    let e = Engine::parse("p").unwrap_err().to_string();
    assert!(e.contains(r#"["process", "thread", "fiber"]"#), "{e}");
}

#[test]
fn every_transport_parses_by_its_name() {
    for &engine in Engine::ALL {
        assert_eq!(engine.transports()[0], engine.default_transport());
        for &t in engine.transports() {
            assert_eq!(TransportKind::parse(t.name()).unwrap(), t);
            assert!(check_combination(engine, t).is_ok());
        }
    }
    assert!(TransportKind::parse("carrier-pigeon").is_err());
}

#[test]
fn ctrl_c_while_a_ring_starts_ends_the_start() {
    let procs = 3 * STARTS_PER_CHECK;
    let cpus = [vec![None; procs]];
    for engine in [Engine::Process, Engine::Thread] {
        let mut asked = 0;
        let mut interrupt = || {
            asked += 1;
            asked > 1
        };
        let start = Start::bare(procs, &cpus, &mut interrupt);
        let e = spawn(engine, TransportKind::Pipe, start).err().unwrap();
        assert_eq!(e, Error::Interrupted, "{engine:?}");
        // Asked before the first participant and again STARTS_PER_CHECK later: the
        // start ended there, not after all of them.
        assert_eq!(asked, 2, "{engine:?}");
    }
}

/// Participants that never leave on their own.
struct Staying;

impl Members for Staying {
    fn tids(&self) -> Vec<(usize, libc::pid_t)> {
        Vec::new()
    }
    fn casualty(&self) -> Option<String> {
        None
    }
    fn abort(&self, _why: &str) {}
    fn finish(self: Box<Self>, _clean: bool) -> Report {
        Report::default()
    }
}

#[test]
fn a_start_that_waits_ends_on_its_timeout_or_ctrl_c() {
    // Participant 1 of ring 0 registered, participant 2 never does.
    let slots = Shared::<Slot>::new(3).unwrap();
    slots[1].tid.store(7, Ordering::Release);
    let cpus = [vec![None; 3]];
    let never: Interrupt = &mut || false;
    let e = wait_ready(&slots, &Staying, &cpus, 0.1, &mut { never }).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("participant 2 of ring 0 did not start within 0.1 s (timeout): "),
        "{text}"
    );
    let mut asked = 0;
    let mut interrupt: Interrupt = &mut || {
        asked += 1;
        asked > 2
    };
    let e = wait_ready(&slots, &Staying, &cpus, 3600.0, &mut interrupt);
    assert_eq!(e.unwrap_err(), Error::Interrupted);
}

#[test]
fn an_unsupported_combination_is_an_error_not_a_panic() {
    let cpus = [vec![None, None]];
    for (engine, t) in [
        (Engine::Fiber, TransportKind::Pipe),
        (Engine::Process, TransportKind::Resume),
        (Engine::Thread, TransportKind::Resume),
    ] {
        let e = spawn(engine, t, Start::bare(2, &cpus, &mut || false))
            .err()
            .unwrap();
        assert_eq!(Err(e), check_combination(engine, t));
    }
}
