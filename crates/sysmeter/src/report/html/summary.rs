//! The summary line at the top of every HTML layout: host, kernel, how long the run took and
//! the noise state — what the machine-state probe judged per experiment (`machine.stable`
//! and its `reason`), and the host's noise warnings.
//!
//! Pure: built from a [`RunRecord`]; numbers through `model::units`.

use crate::model::RunRecord;

/// `host · Linux 6.1 · took 41.3 s · noise: …`.
pub fn summary_line(run: &RunRecord) -> String {
    let h = &run.host;
    let mut parts = vec![h.hostname.clone()];
    if !h.kernel.is_empty() {
        parts.push(format!("Linux {}", h.kernel));
    }
    parts.push(
        crate::report::format::wall_time_phrase(run)
            .unwrap_or_else(|| "did not finish".to_string()),
    );
    parts.push(format!("noise: {}", noise_state(run)));
    parts.retain(|p| !p.is_empty());
    parts.join(" · ")
}

/// The noise state: steady, unsteady (naming the experiments; each section says why), or
/// not probed.
pub fn noise_state(run: &RunRecord) -> String {
    let (unsteady, probed) = crate::report::format::probe_counts(run);
    let warnings = match run.host.warnings.len() {
        0 => String::new(),
        1 => "; 1 noise warning about the machine".to_string(),
        n => format!("; {n} noise warnings about the machine"),
    };
    if probed == 0 {
        return format!("not probed (no machine-state probe in this run){warnings}");
    }
    if unsteady.is_empty() {
        format!("machine steady in all {probed} probed experiments{warnings}")
    } else {
        format!(
            "machine unsteady in {} of {probed} probed experiments ({}; reasons in their sections){warnings}",
            unsteady.len(),
            unsteady.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::{sample_run, steady_machine};

    #[test]
    fn the_line_names_host_kernel_time_and_noise() {
        let mut run = sample_run();
        let line = summary_line(&run);
        assert!(line.starts_with("bench-01 · Linux "), "{line}");
        assert!(line.contains("took 41.3 s"), "{line}");
        assert!(line.contains("noise: not probed"), "{line}");
        run.results[0].machine = Some(steady_machine(3.0));
        let mut busy = steady_machine(3.0);
        busy.stable = false;
        busy.reason = Some("core clock fell 20%".into());
        run.results[1].machine = Some(busy);
        let state = noise_state(&run);
        assert!(state.starts_with("machine unsteady in 1 of 2"), "{state}");
        assert!(
            state.contains(&format!("({}; reasons", run.results[1].id)),
            "{state}"
        );
        run.results[1].machine = Some(steady_machine(3.0));
        assert!(noise_state(&run).starts_with("machine steady in all 2"));
    }
}
