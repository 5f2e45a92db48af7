//! The token's values on the wire: what every transport carries and every participant checks.
//! A leaf: transports and the per-hop protocol both build on it, and it builds on neither.

use crate::error::{Error, Result};

/// Tokens count hops modulo 2^31; the top bit is the stop signal.
pub const STOP: u32 = 1 << 31;
const MASK: u32 = STOP - 1;

/// An inbox word holding no token: never a count (they stay below STOP) and not STOP.
pub const EMPTY: u32 = u32::MAX;

/// The token after one more hop.
#[inline]
pub fn advance(token: u32) -> u32 {
    (token + 1) & MASK
}

/// Checks that `trips` trips of `n` hops moved the token from `start` to `token`: every
/// participant got it and passed it on, every time.
pub fn check_count(start: u32, trips: u64, n: usize, token: u32) -> Result<()> {
    let expected = ((u64::from(start) + trips * n as u64) % u64::from(STOP)) as u32;
    if token != expected {
        return Err(Error::Peer(format!(
            "token protocol broken: expected {expected} after {trips} trips of {n} hops, got {token}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_wraps_below_stop() {
        assert_eq!(advance(0), 1);
        assert_eq!(advance(MASK), 0);
        assert_eq!(advance(MASK - 1), MASK);
    }

    #[test]
    fn advance_never_produces_stop_or_empty() {
        for t in [0, 1, MASK - 1, MASK, STOP - 2] {
            assert_ne!(advance(t), STOP);
            assert_ne!(advance(t), EMPTY);
        }
    }

    #[test]
    fn check_count_accepts_every_hop_and_detects_a_missing_one() {
        let (n, trips) = (4, 10);
        let mut token = MASK - 5;
        let start = token;
        for _ in 0..trips * n {
            token = advance(token);
        }
        assert!(check_count(start, trips, n as usize, token).is_ok());
        let short = check_count(start, trips, n as usize, token.wrapping_sub(1) & MASK);
        assert!(matches!(short, Err(Error::Peer(m)) if m.contains("token protocol broken")));
    }
}
