//! The target arguments every diagnosis takes, flattened into `run`, `trace` and `profile`:
//! `-p/--pid PID`, `--duration TIME` and the command after `--` ([`TargetArgs`]), their one
//! conversion to a [`Target`] (with each command's rules, [`Rules`]), and the one duration
//! parser ([`parse_duration`]: `10`, `2.5s`, `500ms`, `1m`), which `scale --timeout` uses too.
//!
//! A command that needs its own help text for one of these arguments changes it with
//! `#[command(mut_arg(..))]` on its own struct. Depends only on `diagnose::observe::target`.

use std::ffi::OsString;
use std::time::Duration;

use clap::{Arg, Args};

use crate::diagnose::observe::target::Target;

/// `-p PID`, `--duration` and `-- CMD…`.
#[derive(Debug, Clone, Default, Args)]
pub struct TargetArgs {
    /// Attach to this running process instead of launching a command.
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pub pid: Option<i32>,
    /// Stop after this long (e.g. 10, 2.5s, 500ms, 1m).
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// What a command accepts of [`TargetArgs`], and the sentence when nothing was given.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// `--duration` only makes sense with `-p` (`run`: a command is measured to its end).
    pub duration_needs_pid: bool,
    /// The error when neither a command nor `-p` was given: what to write instead.
    pub missing: &'static str,
}

/// Why the target arguments name no target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Both `-p` and a command.
    #[error("give either -p PID or a command after --, not both")]
    Both,
    /// Neither `-p` nor a command (the command's own sentence).
    #[error("{0}")]
    Neither(&'static str),
    /// `--duration` without `-p` where it means nothing.
    #[error(
        "--duration needs -p PID: a command is measured until it exits; give -p PID or leave \
         out --duration"
    )]
    DurationWithoutPid,
}

impl TargetArgs {
    /// The target these arguments name, under `rules`.
    pub fn target(&self, rules: Rules) -> Result<Target, TargetError> {
        if rules.duration_needs_pid && self.duration.is_some() && self.pid.is_none() {
            return Err(TargetError::DurationWithoutPid);
        }
        match (self.pid, self.command.is_empty()) {
            (Some(_), false) => Err(TargetError::Both),
            (Some(pid), true) => Ok(Target::Attach(pid)),
            (None, false) => Ok(Target::Launch(self.command.clone())),
            (None, true) => Err(TargetError::Neither(rules.missing)),
        }
    }
}

/// The target arguments of `profile` and `locks`, applied to each of their arguments with
/// `#[command(mut_args(..))]`: `-p` follows every thread, `--duration` also ends what they
/// are `doing` to a launched command, and the command (`command_help`) may follow without
/// `--`. Other arguments pass unchanged.
pub fn follow_threads(a: Arg, doing: &str, command_help: &'static str) -> Arg {
    match a.get_id().as_str() {
        "pid" => attach_all_threads(a),
        "duration" => stop_doing_after(a, doing),
        "command" => command_without_dashes(a, command_help),
        _ => a,
    }
}

/// `-p` of the commands that follow every thread of the process (`profile`, `locks`).
fn attach_all_threads(a: Arg) -> Arg {
    a.help("Attach to this running process (all its threads) instead of starting a command")
}

/// `--duration` of `profile` and `locks`, where it also ends what they do to a launched
/// command (`doing`: "sampling", "observing").
fn stop_doing_after(a: Arg, doing: &str) -> Arg {
    a.help(format!(
        "Stop {doing} after this long (e.g. 10, 2.5s, 500ms, 1m; a command then runs on to its \
         end; -p detaches). Default: until the command exits, or Ctrl-C with -p"
    ))
}

/// The command of `profile` and `locks`, which may also follow the options without `--`.
fn command_without_dashes(a: Arg, help: &'static str) -> Arg {
    a.help(help)
        .last(false)
        .trailing_var_arg(true)
        .allow_hyphen_values(true)
        .required_unless_present("pid")
}

/// Parses a duration: seconds (`10`, `2.5`, `30s`), milliseconds (`500ms`) or minutes
/// (`1m`); it must be positive.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a duration; write e.g. 10, 2.5s, 500ms or 1m"))?;
    let secs = value * scale;
    if !secs.is_finite() || secs <= 0.0 || secs > 1e9 {
        return Err(format!(
            "'{text}' is not a usable duration; give a positive time"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests;
