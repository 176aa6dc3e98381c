//! `fs.remote_read`: `fs.read`'s measurement against a network or FUSE mount given with
//! `--remote-dir`, with the ratio of each remote median to the local one (from `fs.read`
//! earlier in the run, else measured here on `--dir` with the same sizes).

use super::files;
use super::read::{self, measure_dir};
use crate::harness::{Ctx, Experiment, ExperimentError, Measured};
use crate::model::units;
use crate::model::{About, Metric};

/// The experiment.
pub struct FsRemoteRead;

impl Experiment for FsRemoteRead {
    fn page(&self) -> &'static str {
        include_str!("remote_read.md")
    }

    fn about(&self) -> About {
        // fs.read's timing model, then what differs here.
        let mut about = About::from_page(self.page());
        about.methodology = format!("{} {}", read::FsRead.about().methodology, about.methodology);
        about
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let Some(remote) = ctx.params.remote_dir.clone() else {
            return Err(ExperimentError::Skipped {
                reason: "no remote directory given".into(),
                hint: "mount an NFS, SSHFS or other FUSE file system and pass a directory on \
                       it with --remote-dir DIR"
                    .into(),
            });
        };
        let sizes: Vec<u64> = read::sizes(ctx.profile).into_iter().take(2).collect();
        let mut r = measure_dir(ctx, &remote, "--remote-dir", &sizes)?;
        let local: Vec<Metric> = match ctx.previous.iter().find(|x| x.id == "fs.read") {
            Some(prev) => prev.metrics.clone(),
            None => {
                let base = files::local_base(ctx);
                measure_dir(ctx, &base, "--dir", &sizes)?.measured.metrics
            }
        };
        ratios(&mut r.measured, &local);
        if r.storage.remote_or_fuse {
            r.measured.find(
                "server_cache",
                format!(
                    "The mount is {}: O_DIRECT bypasses only this kernel's page cache; the \
                     file server (or FUSE daemon) may still answer from its own cache, so \
                     \"uncached\" remote reads can beat local device reads.",
                    r.storage.describe()
                ),
                None,
            );
        }
        Ok(r.measured)
    }
}

fn ratios(out: &mut Measured, local: &[Metric]) {
    let mut found = Vec::new();
    for m in out.metrics.iter().filter(|m| m.name.contains("4 KiB read")) {
        let Some(l) = local.iter().find(|l| l.name == m.name) else {
            continue;
        };
        let (rm, lm) = (m.summary.median, l.summary.median);
        if lm > 0.0 {
            found.push((m.name.clone(), rm / lm, rm, lm));
        }
    }
    for (name, x, rm, lm) in found {
        let key = format!("remote_vs_local.{}", name.replace([' ', ','], "_"));
        out.find(
            &key,
            format!(
                "{name}: {} on the remote mount, {x:.2}x the local {}.",
                units::duration_ns(rm),
                units::duration_ns(lm)
            ),
            Some(x),
        );
    }
}
