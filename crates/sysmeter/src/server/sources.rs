//! What `sysmeter serve` remembers about each source of connections: how many it holds
//! open (capped per source, below `--max-clients`, so one host cannot take every slot), its
//! failed authentications (each answered later than the one before, then a refusal for a
//! while), and its log period (one line per source and period, not one per attempt).
//!
//! Pure bookkeeping: the caller passes the time, sleeps and prints. Depends on the standard
//! library only.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::time::{Duration, Instant};

/// Failed authentications after which a source is refused for [`BLOCK`].
pub const AUTH_LIMIT: u32 = 8;
/// Delay before answering a source with one failed authentication; doubles per failure.
pub const AUTH_DELAY: Duration = Duration::from_millis(50);
/// The longest such delay.
pub const AUTH_DELAY_MAX: Duration = Duration::from_secs(1);
/// How long a source that reached [`AUTH_LIMIT`] is refused; each further failure after it
/// starts another such period.
pub const BLOCK: Duration = Duration::from_secs(60);
/// Failures are forgotten this long after the last one (or at a successful one).
pub const FORGET: Duration = Duration::from_secs(600);
/// At most one log line per source in this period.
pub const LOG_PERIOD: Duration = Duration::from_secs(60);
/// Sources tracked at once; refusals from sources beyond it are not logged.
const MAX_TRACKED: usize = 65_536;

/// Where connections come from: an IPv4 address, or the /64 network of an IPv6 address (a
/// single host commonly holds a whole /64, so counting its addresses apart would be no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Source(IpAddr);

impl Source {
    /// The source of a connection from `ip` (IPv4-mapped IPv6 counts as IPv4).
    pub fn of(ip: IpAddr) -> Source {
        match ip.to_canonical() {
            IpAddr::V6(v6) => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                Source(IpAddr::V6(Ipv6Addr::from(bits)))
            }
            v4 => Source(v4),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(a) => write!(f, "{a}"),
            IpAddr::V6(a) => write!(f, "{a}/64"),
        }
    }
}

/// Why a connection is not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Too many failed authentications; refused for `left` more.
    Blocked {
        /// Time until the refusal ends.
        left: Duration,
    },
    /// The source already holds `cap` connections.
    TooMany {
        /// The per-source cap.
        cap: usize,
    },
}

#[derive(Debug, Default)]
struct Entry {
    active: usize,
    failures: u32,
    last_failure: Option<Instant>,
    blocked_until: Option<Instant>,
    log: Option<LogPeriod>,
}

#[derive(Debug)]
struct LogPeriod {
    until: Instant,
    quiet: u32,
    latest: String,
}

impl Entry {
    /// Failures that still count at `now`.
    fn failures(&self, now: Instant) -> u32 {
        match self.last_failure {
            Some(t) if now.saturating_duration_since(t) < FORGET => self.failures,
            _ => 0,
        }
    }

    fn blocked_for(&self, now: Instant) -> Option<Duration> {
        let left = self.blocked_until?.saturating_duration_since(now);
        (!left.is_zero()).then_some(left)
    }

    fn idle(&self, now: Instant) -> bool {
        self.active == 0
            && self.failures(now) == 0
            && self.blocked_for(now).is_none()
            && self.log.is_none()
    }
}

/// Every source's state.
#[derive(Debug)]
pub struct Sources {
    map: HashMap<Source, Entry>,
    per_source: usize,
}

impl Sources {
    /// No source known yet; each may hold `per_source` connections at once.
    pub fn new(per_source: usize) -> Sources {
        Sources {
            map: HashMap::new(),
            per_source: per_source.max(1),
        }
    }

    /// Admit a connection from `src` (counted until [`Sources::close`]) or say why not.
    pub fn open(&mut self, src: Source, now: Instant) -> Result<(), Refusal> {
        let cap = self.per_source;
        let e = self.map.entry(src).or_default();
        if let Some(left) = e.blocked_for(now) {
            return Err(Refusal::Blocked { left });
        }
        if e.active >= cap {
            return Err(Refusal::TooMany { cap });
        }
        e.active += 1;
        Ok(())
    }

    /// A connection admitted by [`Sources::open`] ended.
    pub fn close(&mut self, src: Source) {
        if let Some(e) = self.map.get_mut(&src) {
            e.active = e.active.saturating_sub(1);
        }
    }

    /// How long to wait before checking a token from `src`: none without recent failures,
    /// else [`AUTH_DELAY`] doubled per failure, at most [`AUTH_DELAY_MAX`].
    pub fn auth_delay(&self, src: Source, now: Instant) -> Duration {
        let f = self.map.get(&src).map_or(0, |e| e.failures(now));
        if f == 0 {
            return Duration::ZERO;
        }
        AUTH_DELAY
            .saturating_mul(1u32 << (f - 1).min(16))
            .min(AUTH_DELAY_MAX)
    }

    /// How much longer `src` is refused, if it is.
    pub fn blocked(&self, src: Source, now: Instant) -> Option<Duration> {
        self.map.get(&src).and_then(|e| e.blocked_for(now))
    }

    /// `src` sent a wrong or no token; from the [`AUTH_LIMIT`]th on it is refused for [`BLOCK`].
    pub fn auth_failed(&mut self, src: Source, now: Instant) {
        let e = self.map.entry(src).or_default();
        e.failures = e.failures(now).saturating_add(1);
        e.last_failure = Some(now);
        if e.failures >= AUTH_LIMIT {
            e.blocked_until = Some(now + BLOCK);
        }
    }

    /// `src` sent the right token: its failures are forgiven.
    pub fn auth_ok(&mut self, src: Source) {
        if let Some(e) = self.map.get_mut(&src) {
            e.failures = 0;
            e.last_failure = None;
        }
    }

    /// A refusal of `src`, described by `what`: returns the line to print now when no log
    /// period of this source is open (and opens one), else counts it for the period's
    /// summary and returns `None`.
    pub fn log(&mut self, src: Source, now: Instant, what: String) -> Option<String> {
        if self.map.len() >= MAX_TRACKED && !self.map.contains_key(&src) {
            return None;
        }
        let e = self.map.entry(src).or_default();
        match &mut e.log {
            Some(p) => {
                p.quiet += 1;
                p.latest = what;
                None
            }
            None => {
                e.log = Some(LogPeriod {
                    until: now + LOG_PERIOD,
                    quiet: 0,
                    latest: String::new(),
                });
                Some(format!("serve: {what}"))
            }
        }
    }

    /// Close the log periods that ended by `now`, returning one summary line for each that
    /// had refusals left unprinted (and opening a new period for it); forget idle sources.
    pub fn sweep(&mut self, now: Instant) -> Vec<String> {
        let mut lines = Vec::new();
        for (src, e) in &mut self.map {
            let Some(p) = &mut e.log else { continue };
            if now < p.until {
                continue;
            }
            if p.quiet == 0 {
                e.log = None;
                continue;
            }
            lines.push(format!(
                "serve: {src}: {} more connections refused in the last {} s; the latest: {}",
                p.quiet,
                LOG_PERIOD.as_secs(),
                p.latest
            ));
            *p = LogPeriod {
                until: now + LOG_PERIOD,
                quiet: 0,
                latest: String::new(),
            };
        }
        self.map.retain(|_, e| !e.idle(now));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    #[test]
    fn ipv6_sources_are_whole_64s_and_mapped_ipv4_is_ipv4() {
        let a = Source::of("2001:db8:1:2:aaaa::1".parse().expect("ip"));
        let b = Source::of("2001:db8:1:2:bbbb::9".parse().expect("ip"));
        let c = Source::of("2001:db8:1:3::1".parse().expect("ip"));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.to_string(), "2001:db8:1:2::/64");
        let mapped = Source::of("::ffff:10.0.0.1".parse().expect("ip"));
        assert_eq!(mapped, Source::of("10.0.0.1".parse().expect("ip")));
        assert_eq!(mapped.to_string(), "10.0.0.1");
    }

    #[test]
    fn each_source_holds_at_most_its_cap_and_gets_slots_back() {
        let (mut s, t0) = (Sources::new(2), Instant::now());
        let (x, y) = (
            Source::of([10, 0, 0, 1].into()),
            Source::of([10, 0, 0, 2].into()),
        );
        assert_eq!(s.open(x, t0), Ok(()));
        assert_eq!(s.open(x, t0), Ok(()));
        assert_eq!(s.open(x, t0), Err(Refusal::TooMany { cap: 2 }));
        assert_eq!(s.open(y, t0), Ok(()));
        s.close(x);
        assert_eq!(s.open(x, t0), Ok(()));
    }

    #[test]
    fn failures_delay_exponentially_then_block_then_are_forgotten() {
        let (mut s, t0) = (Sources::new(4), Instant::now());
        let x = Source::of([10, 0, 0, 1].into());
        assert_eq!(s.auth_delay(x, t0), Duration::ZERO);
        let mut delays = Vec::new();
        for i in 0..AUTH_LIMIT - 1 {
            s.auth_failed(x, at(t0, u64::from(i)));
            delays.push(s.auth_delay(x, t0).as_millis());
            assert_eq!(s.blocked(x, t0), None);
        }
        assert_eq!(delays, [50, 100, 200, 400, 800, 1000, 1000]);
        s.auth_failed(x, t0);
        assert_eq!(s.blocked(x, t0), Some(BLOCK));
        assert_eq!(s.open(x, t0), Err(Refusal::Blocked { left: BLOCK }));
        // Another source is not affected.
        assert_eq!(s.open(Source::of([10, 0, 0, 2].into()), t0), Ok(()));
        let after = t0 + BLOCK;
        assert_eq!(s.blocked(x, after), None);
        // One more failure right after the block blocks again at once.
        s.auth_failed(x, after);
        assert!(s.blocked(x, after).is_some());
        // Long quiet: forgotten.
        let later = after + BLOCK + FORGET;
        assert_eq!(s.auth_delay(x, later), Duration::ZERO);
        s.auth_failed(x, later);
        assert_eq!(s.blocked(x, later), None);
        s.auth_ok(x);
        assert_eq!(s.auth_delay(x, later), Duration::ZERO);
    }

    #[test]
    fn one_log_line_per_source_and_period() {
        let (mut s, t0) = (Sources::new(4), Instant::now());
        let x = Source::of([10, 0, 0, 1].into());
        let y = Source::of([10, 0, 0, 2].into());
        assert!(s.log(x, t0, "a".into()).is_some());
        assert!(s.log(y, t0, "b".into()).is_some());
        let printed = (1..1000)
            .filter_map(|i| s.log(x, at(t0, i), format!("x{i}")))
            .count();
        assert_eq!(printed, 0);
        assert!(s.sweep(at(t0, 1000)).is_empty());
        let lines = s.sweep(t0 + LOG_PERIOD);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("10.0.0.1: 999 more") && lines[0].ends_with("x999"));
        // The summary opened a new period; a quiet one closes without a line.
        assert!(s.log(x, t0 + LOG_PERIOD, "z".into()).is_none());
        assert_eq!(s.sweep(t0 + LOG_PERIOD * 2).len(), 1);
        assert!(s.sweep(t0 + LOG_PERIOD * 3).is_empty());
        assert!(s.log(x, t0 + LOG_PERIOD * 3, "again".into()).is_some());
        // Idle sources are forgotten.
        assert!(s.sweep(t0 + LOG_PERIOD * 5).is_empty());
        assert!(s.map.is_empty());
    }
}
