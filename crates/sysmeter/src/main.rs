//! The `sysmeter` binary: parse the command line, dispatch, map the outcome to an exit code
//! (0 success, 1 measurement or regression failure, 2 usage error, 130 interrupted).

use std::process::ExitCode;

use clap::Parser;
use sysmeter::cli::{Cli, Command};
use sysmeter::commands::{self, Outcome, console};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::List(a) => commands::list(a),
        Command::Host(a) => commands::host(a),
        Command::Bench(a) => commands::bench(a),
        Command::History(a) => commands::history(a),
        Command::Show(a) => commands::show(a),
        Command::Run(a) => commands::run(a),
        Command::Trace(a) => commands::trace(a),
        Command::Calls(a) => commands::calls(a),
        Command::Profile(a) => commands::profile(a),
        Command::Locks(a) => commands::locks(a),
        Command::Alloc(a) => commands::alloc(a),
        Command::Scale(a) => commands::scale(a),
        Command::Live(a) => commands::live(a),
        Command::Compare(a) => commands::compare(a),
        Command::Report(a) => commands::report(a),
        Command::Export(a) => commands::export(a),
        Command::Import(a) => commands::import(a),
        Command::Fleet(a) => commands::fleet(a),
        Command::Prune(a) => commands::prune(a),
        Command::Serve(a) => commands::serve(a),
        Command::Completions(a) => commands::completions(a),
        Command::Man(a) => commands::man(a),
    };
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::MeasurementFailed) => ExitCode::from(1),
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Ok(Outcome::Code(code)) => ExitCode::from(code),
        Err(e) if commands::is_usage_error(&e) => {
            console::errln(format!("error: {e}"));
            ExitCode::from(2)
        }
        Err(e) => {
            console::errln(format!("error: {e:#}"));
            ExitCode::from(1)
        }
    }
}
