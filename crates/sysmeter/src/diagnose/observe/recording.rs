//! What a session on perf rings leaves behind, the same for every diagnosis that records
//! through the one session loop (`pump::run`): the diagnosis's own aggregation (`data`),
//! the mappings of an attached process when the session began, the launched command's exit,
//! why observing stopped, and what observing took ([`Recording`]). `profile`/`offcpu`
//! (`sampled::session`) and `locks` each fill one with their data; the end of the session
//! as their results embed it and the finding of a `-p` process that exited are said here
//! once.
//!
//! Depends on [`super::session`], [`super::maps`] and [`super::witness`]; never on a diagnosis.

use super::maps::MapEvent;
use super::session::{self, Ended, Exited, SessionEnd};
use super::witness::Blinded;
use crate::model::Finding;

/// What a session recorded: `data` is what its diagnosis aggregated and reads alone.
#[derive(Debug, Clone)]
pub struct Recording<D> {
    /// The diagnosis's aggregation and its own facts about the session.
    pub data: D,
    /// Executable mappings of an attached process when the session began (empty when
    /// launched: the command's maps arrive as side-band records).
    pub maps_at_start: Vec<MapEvent>,
    /// Exit status and usage of a launched command (`None` when attached).
    pub exit: Option<Exited>,
    /// Why observing stopped.
    pub stop: Ended,
    /// Wall time from release (or attach) to the end of observing, ns.
    pub wall_ns: u64,
    /// CPU time this process spent while observing (reading the rings), ns.
    pub own_cpu_ns: u64,
}

impl<D> Recording<D> {
    /// The session of a launched command: its `exit`, why it `stop`ped and what observing
    /// took (`watched`: `session::Watch::read`).
    pub fn launched(data: D, exit: Option<Exited>, stop: Ended, watched: (u64, u64)) -> Self {
        Recording {
            data,
            maps_at_start: Vec::new(),
            exit,
            stop,
            wall_ns: watched.0,
            own_cpu_ns: watched.1,
        }
    }

    /// The session of an attached process, with its mappings when it began.
    pub fn attached(
        data: D,
        maps_at_start: Vec<MapEvent>,
        stop: Ended,
        watched: (u64, u64),
    ) -> Self {
        Recording {
            maps_at_start,
            exit: None,
            ..Recording::launched(data, None, stop, watched)
        }
    }

    /// Whether Ctrl-C stopped the session.
    pub fn interrupted(&self) -> bool {
        self.stop == Ended::Interrupted
    }

    /// The finding of a running process (`-p`) that ended the session by exiting.
    pub fn exited(&self) -> Option<Finding> {
        session::ended_by_exit(self.stop, self.exit.is_some(), self.wall_ns)
    }

    /// The session's end as a result embeds it (`model::SessionEnd`), with the records
    /// `lost` and the witness's verdict when a tracepoint was hidden from perf.
    pub fn end(&self, lost: u64, blinded: Option<&Blinded>) -> SessionEnd {
        session::end(
            self.stop,
            self.exit.as_ref().map(|(e, _)| e.shell_code()),
            (self.wall_ns, self.own_cpu_ns),
            lost,
            blinded,
        )
    }
}
