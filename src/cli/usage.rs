//! Combinations of options that make no sense: refused before anything runs, as clap refuses
//! its own usage errors (same message form, exit code 3), never silently ignored.

use super::{Cli, Command, CommonArgs, Format};
use clap::error::ErrorKind;
use clap::CommandFactory;

/// A usage error of subcommand `sub`, in clap's form (`error: ...`, usage, `--help` hint).
fn usage_error(sub: &str, message: String) -> clap::Error {
    let mut cmd = Cli::command();
    cmd.build();
    match cmd.find_subcommand_mut(sub) {
        Some(s) => s.clone().error(ErrorKind::ArgumentConflict, message),
        None => cmd.error(ErrorKind::ArgumentConflict, message),
    }
}

/// `--format F` where `sub` has no such output.
fn no_format(sub: &str, format: Format, has: &str) -> clap::Error {
    let name = match format {
        Format::Text => "text",
        Format::Json => "json",
        Format::Dot => "dot",
        Format::Sarif => "sarif",
    };
    usage_error(
        sub,
        format!("the argument '--format {name}' cannot be used with '{sub}' ({sub} prints {has})"),
    )
}

/// `-` (standard input) and `--stdin-filename`: one `-`, alone, and a name only with it.
fn stdin_usage(sub: &str, common: &CommonArgs) -> Result<(), clap::Error> {
    let dashes = common.files.iter().filter(|f| f.as_os_str() == "-").count();
    if dashes > 0 && common.files.len() > 1 {
        let msg = "'-' (standard input) cannot be used with other paths".to_string();
        return Err(usage_error(sub, msg));
    }
    if dashes == 0 && common.stdin_filename.is_some() {
        let msg = "'--stdin-filename' names standard input: give '-' as the path".to_string();
        return Err(usage_error(sub, msg));
    }
    Ok(())
}

/// Whether `common` reads standard input.
pub(super) fn reads_stdin(common: &CommonArgs) -> bool {
    common.files.iter().any(|f| f.as_os_str() == "-")
}

/// `fix`'s combinations: no DOT, `--diff` only as text, `--write` not with standard input,
/// `--timings` only in JSON.
fn fix_usage(
    common: &CommonArgs,
    write: bool,
    timings: bool,
    diff: bool,
) -> Result<(), clap::Error> {
    stdin_usage("fix", common)?;
    if common.format == Format::Dot {
        return Err(no_format("fix", Format::Dot, "a patch, JSON or SARIF"));
    }
    if diff && common.format != Format::Text {
        let msg = "the argument '--diff' cannot be used with '--format json|sarif' \
                   (the patch is their `diff` field)";
        return Err(usage_error("fix", msg.to_string()));
    }
    write_stdin("fix", write, common)?;
    if timings && common.format != Format::Json {
        let msg = "the argument '--timings' needs '--format json' (the timings are \
                   its `timings` field)";
        return Err(usage_error("fix", msg.to_string()));
    }
    Ok(())
}

/// `--write` with `-` (standard input) is refused: the patch is printed instead.
fn write_stdin(command: &str, write: bool, common: &CommonArgs) -> Result<(), clap::Error> {
    if write && reads_stdin(common) {
        let msg = "the argument '--write' cannot be used with '-' (standard input): \
                   the patch is printed instead";
        return Err(usage_error(command, msg.to_string()));
    }
    Ok(())
}

/// The usage errors clap cannot express.
pub fn validate(cli: &Cli) -> Result<(), clap::Error> {
    match &cli.command {
        Command::Check {
            common,
            on_hardware,
            ..
        } => {
            stdin_usage("check", common)?;
            if on_hardware.is_some() && matches!(common.format, Format::Dot | Format::Sarif) {
                let msg = "the argument '--on-hardware' needs '--format text' or '--format json'";
                return Err(usage_error("check", msg.to_string()));
            }
            Ok(())
        }
        Command::Fix {
            common,
            write,
            timings,
            diff,
            ..
        } => fix_usage(common, *write, *timings, *diff),
        Command::Robust { common } => {
            stdin_usage("robust", common)?;
            match common.format {
                Format::Sarif => Err(no_format("robust", Format::Sarif, "text, JSON or DOT")),
                _ => Ok(()),
            }
        }
        Command::Explain(args) => {
            stdin_usage("explain", &args.common)?;
            match args.common.format {
                f @ (Format::Json | Format::Sarif) => Err(no_format(
                    "explain",
                    f,
                    "text or, with --format dot, Graphviz",
                )),
                _ => Ok(()),
            }
        }
        Command::Man { .. } => Ok(()),
        Command::Relax(args) => {
            stdin_usage("relax", &args.common)?;
            write_stdin("relax", args.write, &args.common)?;
            match args.common.format {
                f @ (Format::Dot | Format::Sarif) => Err(no_format(
                    "relax",
                    f,
                    "a patch or, with --format json, JSON",
                )),
                _ => Ok(()),
            }
        }
    }
}
