//! The one shape of a tracer's overhead calibration, shared by `trace` (a system call timed
//! untraced and traced), `calls` (a library call with and without its probes) and the path
//! lookups of `run`: the same operation is timed in chunks with and without the probes
//! (paired A/B, medians of chunks), and the backend's own timing of the probed operation is
//! kept beside them. What tracing adds to each traced event ([`Overhead::added_ns`]) is
//! reported; the part inside a timed interval ([`Overhead::inside_ns`]) is subtracted from
//! every duration the tracer measures. Pure data; depends on nothing.

/// The measured overhead of a tracer, per traced event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overhead {
    /// The operation untraced, ns per call.
    pub untraced_ns: f64,
    /// The operation traced, ns per call as the program sees it.
    pub traced_ns: f64,
    /// Median duration of the traced operation as the tracer times it, ns.
    pub interval_ns: f64,
    /// Calls in the traced loop (all chunks).
    pub calls: u64,
}

impl Overhead {
    /// What tracing adds to every traced call, ns.
    pub fn added_ns(&self) -> f64 {
        (self.traced_ns - self.untraced_ns).max(0.0)
    }

    /// The part of it inside a call's timed interval (subtracted from every duration), ns.
    pub fn inside_ns(&self) -> f64 {
        (self.interval_ns - self.untraced_ns).max(0.0)
    }
}
