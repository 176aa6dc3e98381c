//! The run's heap peak, which must never be below any live value the run reports: the live
//! bytes at the end are summed over every process and image, and a program started through
//! a script or shim is several images of one pid (the script's first), each with its own
//! peak. Taking the first image's peak as the run's gave "peaked at 12 KiB" beside 266 KiB
//! live at exit. Pure; depends on the region's records only.

use super::super::Outcome;

/// The run's peak: the largest any one process image reached (each image counts its own;
/// the timeline samples one image, whose live bytes never exceed its peak), or the live
/// bytes at the end summed over every process when that is more. Returns the bytes, when
/// (ns since the first image started; the end, the timeline's last sample, for the sum),
/// and whether it is the sum at the end.
pub fn peak(out: &Outcome, live_at_end: u64) -> (u64, u64, bool) {
    let origin = out.procs.iter().map(|p| p.start_ns).min().unwrap_or(0);
    let top = out.procs.iter().max_by_key(|p| p.heap.peak);
    let (peak, at) = top.map_or((0, 0), |p| {
        (p.heap.peak, p.heap.peak_ns.saturating_sub(origin))
    });
    if live_at_end > peak {
        let end = out.samples.last().map_or(at, |s| s.t_ns as u64);
        return (live_at_end, end, true);
    }
    (peak, at, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::alloc::region::{Heap, Proc};

    fn image(pid: u32, image: u32, live: u64, peak: u64, peak_ns: u64) -> Proc {
        Proc {
            pid,
            image,
            index: image as usize,
            start_ns: 1_000 * u64::from(image),
            heap: Heap {
                live,
                peak,
                peak_ns,
                ..Heap::default()
            },
            ..Proc::default()
        }
    }

    #[test]
    fn the_peak_is_never_below_the_live_bytes_reported() {
        // A shim's image (12 KiB at most), then the program it exec'd (300 KiB, 266 KiB live
        // at exit): the peak is the program's, not the first image's.
        let out = Outcome {
            procs: vec![
                image(7, 1, 0, 12 << 10, 1_500),
                image(7, 2, 266 << 10, 300 << 10, 9_000),
            ],
            pid: 7,
            ..Outcome::default()
        };
        let live: u64 = out.procs.iter().map(|p| p.heap.live).sum();
        assert_eq!(peak(&out, live), (300 << 10, 8_000, false));
        // Two processes whose blocks live at the end add up to more than either's peak.
        let out = Outcome {
            procs: vec![image(7, 1, 90, 100, 1_500), image(8, 1, 90, 100, 1_700)],
            pid: 7,
            ..Outcome::default()
        };
        let (bytes, _, at_end) = peak(&out, 180);
        assert_eq!((bytes, at_end), (180, true));
        for p in &out.procs {
            assert!(bytes >= p.heap.live && bytes >= p.heap.peak);
        }
        assert_eq!(peak(&Outcome::default(), 0), (0, 0, false));
    }
}
