//! `fensyn man` (hidden): the manual pages, generated from the clap definition with
//! `clap_mangen`, so they always match `--help`.

use clap::CommandFactory;
use std::io::Write;
use std::path::Path;

/// The page of `cmd` as roff.
fn render(cmd: clap::Command) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out)?;
    Ok(out)
}

/// Every page: `fensyn.1`, then `fensyn-SUB.1` for each visible subcommand.
pub fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    // `fensyn help` is `--help`: no page of its own, so not listed either.
    let cmd = super::Cli::command().disable_help_subcommand(true);
    let mut pages = vec![("fensyn.1".to_string(), render(cmd.clone())?)];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("fensyn-{}", sub.get_name());
        let page = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("fensyn {}", sub.get_name()))
            .version(env!("CARGO_PKG_VERSION"));
        pages.push((format!("{name}.1"), render(page)?));
    }
    Ok(pages)
}

/// `fensyn man [--dir DIR]`: fensyn.1 to stdout, or every page into DIR. Returns the exit code.
pub fn run(dir: Option<&Path>) -> i32 {
    let pages = match pages() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("fensyn: error: cannot render the manual: {e}");
            return super::EXIT_INTERNAL;
        }
    };
    match dir {
        None => {
            let mut out = std::io::stdout().lock();
            if out
                .write_all(&pages[0].1)
                .and_then(|_| out.flush())
                .is_err()
            {
                return super::EXIT_INPUT;
            }
        }
        Some(dir) => {
            if let Err(e) = std::fs::create_dir_all(dir) {
                eprintln!("{}:1:1: error: cannot create: {e}", dir.to_string_lossy());
                return super::EXIT_INPUT;
            }
            for (name, page) in &pages {
                let path = dir.join(name);
                if let Err(e) = std::fs::write(&path, page) {
                    eprintln!("{}:1:1: error: cannot write: {e}", path.to_string_lossy());
                    return super::EXIT_INPUT;
                }
            }
        }
    }
    super::EXIT_OK
}
