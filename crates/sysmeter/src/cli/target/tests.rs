//! Tests of the target arguments: the duration parser, the conversion to a [`Target`] under
//! each command's rules, and `--duration` accepted the same way by every command's parser.

use std::ffi::OsString;
use std::time::Duration;

use clap::Parser;

use super::*;
use crate::cli::{Cli, Command};

#[test]
fn durations_parse_with_units() {
    assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
    assert_eq!(parse_duration("2.5s"), Ok(Duration::from_millis(2500)));
    assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
    assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_duration(" 30s "), Ok(Duration::from_secs(30)));
}

#[test]
fn bad_durations_say_what_to_write() {
    for bad in ["soon", "", "10h", "ms", "1.2.3s"] {
        assert_eq!(
            parse_duration(bad),
            Err(format!(
                "'{bad}' is not a duration; write e.g. 10, 2.5s, 500ms or 1m"
            )),
            "{bad}"
        );
    }
    for bad in ["0", "-1", "0ms", "NaN", "inf", "1e10"] {
        assert_eq!(
            parse_duration(bad),
            Err(format!(
                "'{bad}' is not a usable duration; give a positive time"
            )),
            "{bad}"
        );
    }
}

fn args(pid: Option<i32>, duration: Option<u64>, command: &[&str]) -> TargetArgs {
    TargetArgs {
        pid,
        duration: duration.map(Duration::from_secs),
        command: command.iter().map(OsString::from).collect(),
    }
}

const LAX: Rules = Rules {
    duration_needs_pid: false,
    missing: "nothing given",
};

const STRICT: Rules = Rules {
    duration_needs_pid: true,
    missing: "nothing given",
};

#[test]
fn a_pid_or_a_command_becomes_the_target() {
    assert_eq!(args(Some(7), None, &[]).target(LAX), Ok(Target::Attach(7)));
    assert_eq!(
        args(None, None, &["ls", "-l"]).target(STRICT),
        Ok(Target::Launch(vec!["ls".into(), "-l".into()]))
    );
    assert_eq!(
        args(Some(7), Some(1), &[]).target(STRICT),
        Ok(Target::Attach(7))
    );
}

#[test]
fn both_or_neither_is_an_error_sentence() {
    let both = args(Some(7), None, &["ls"]).target(LAX);
    assert_eq!(both, Err(TargetError::Both));
    assert_eq!(
        TargetError::Both.to_string(),
        "give either -p PID or a command after --, not both"
    );
    let neither = args(None, None, &[]).target(LAX);
    assert_eq!(neither, Err(TargetError::Neither("nothing given")));
    assert_eq!(
        crate::cli::run::RUN_TARGET.missing,
        "no command to run: put it after `--` (e.g. `sysmeter run -- make -j2`), or watch a \
         running process with `-p PID`"
    );
}

#[test]
fn duration_without_pid_follows_each_commands_rule() {
    // run: a launched command is measured to its end, so --duration needs -p.
    assert_eq!(
        args(None, Some(1), &["ls"]).target(STRICT),
        Err(TargetError::DurationWithoutPid)
    );
    assert!(
        TargetError::DurationWithoutPid
            .to_string()
            .starts_with("--duration needs -p PID")
    );
    // trace and profile: --duration also ends the observation of a launched command.
    assert_eq!(
        args(None, Some(1), &["ls"]).target(LAX),
        Ok(Target::Launch(vec!["ls".into()]))
    );
    let timed_command = args(None, Some(1), &["ls"]);
    assert_eq!(
        timed_command.target(crate::cli::run::RUN_TARGET),
        Err(TargetError::DurationWithoutPid)
    );
    for rules in [
        crate::cli::trace::TRACE_TARGET,
        crate::cli::profile::PROFILE_TARGET,
    ] {
        assert_eq!(
            timed_command.target(rules),
            Ok(Target::Launch(vec!["ls".into()]))
        );
    }
}

fn target_of(argv: &[&str]) -> TargetArgs {
    let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    match cli.command {
        Command::Run(a) => a.target,
        Command::Trace(a) => a.target,
        Command::Profile(a) => a.target,
        Command::Calls(a) => a.target,
        other => panic!("not a diagnosis: {other:?}"),
    }
}

#[test]
fn every_diagnosis_accepts_the_same_durations() {
    for cmd in ["run", "trace", "profile", "calls"] {
        for (text, want) in [
            ("500ms", Duration::from_millis(500)),
            ("10", Duration::from_secs(10)),
            ("2.5s", Duration::from_millis(2500)),
            ("1m", Duration::from_secs(60)),
        ] {
            let t = target_of(&["sysmeter", cmd, "--duration", text, "-p", "42"]);
            assert_eq!(t.duration, Some(want), "{cmd} --duration {text}");
            assert_eq!(t.pid, Some(42));
        }
        let err = Cli::try_parse_from(["sysmeter", cmd, "--duration", "soon", "-p", "1"])
            .expect_err("bad duration");
        assert!(
            err.to_string()
                .contains("'soon' is not a duration; write e.g. 10, 2.5s, 500ms or 1m"),
            "{cmd}: {err}"
        );
    }
}

#[test]
fn run_duration_500ms_with_a_pid_is_accepted() {
    let t = target_of(&["sysmeter", "run", "--duration", "500ms", "-p", "1234"]);
    assert_eq!(
        t.target(crate::cli::run::RUN_TARGET),
        Ok(Target::Attach(1234))
    );
    assert_eq!(t.duration, Some(Duration::from_millis(500)));
}

#[test]
fn commands_follow_the_double_dash_and_profile_also_takes_one_without() {
    for cmd in ["run", "trace", "profile", "calls"] {
        let t = target_of(&["sysmeter", cmd, "--", "ls", "-l"]);
        assert_eq!(t.command, vec![OsString::from("ls"), OsString::from("-l")]);
    }
    let t = target_of(&["sysmeter", "profile", "ls", "-l"]);
    assert_eq!(t.command, vec![OsString::from("ls"), OsString::from("-l")]);
    assert!(Cli::try_parse_from(["sysmeter", "run", "ls"]).is_err());
    assert!(Cli::try_parse_from(["sysmeter", "profile"]).is_err());
}

#[test]
fn scale_timeout_uses_the_same_parser() {
    let cli = Cli::try_parse_from([
        "sysmeter",
        "scale",
        "--sizes",
        "1,2",
        "--timeout",
        "500ms",
        "--",
        "true",
        "{n}",
    ])
    .expect("parses");
    let Command::Scale(a) = cli.command else {
        panic!("not scale");
    };
    assert_eq!(a.timeout, Some(Duration::from_millis(500)));
}
