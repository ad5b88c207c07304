//! `compile_commands.json` (the JSON compilation database of CMake, Bear, meson): a file's
//! `-I`, `-D`, `-U` and `-std=` / `-x` (its language and `__STDC_VERSION__` / `__cplusplus`)
//! come from its entry, as clang-tidy takes them; `--std` on the command line wins.
//!
//! The database is `--compile-commands PATH` (a file, or a directory holding one), else the
//! first `compile_commands.json` found in the file's directory or one of its parents, or in
//! their `build/` subdirectory. A file without an entry (or with no database) gets the command
//! line's and fensyn.toml's options only; an entry's options come after those (its `-I`
//! directories are searched later, its `-D`s are defined after the command line's). A
//! database that cannot be read or parsed is ignored with a note on stderr, said once.

use super::config::Settings;
use crate::ir::{Lang, LangStd, PpOptions};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One entry of the database.
#[derive(Deserialize)]
struct Entry {
    directory: String,
    file: String,
    arguments: Option<Vec<String>>,
    command: Option<String>,
}

/// The databases read so far (by path; `None`: unreadable), and the directories searched.
#[derive(Default)]
pub struct Databases {
    loaded: HashMap<PathBuf, Option<Vec<(PathBuf, PpOptions)>>>,
    found: HashMap<PathBuf, Option<PathBuf>>,
}

/// The preprocessor options of `file`: the settings', then its database entry's.
pub fn options_for(file: &Path, settings: &Settings, dbs: &mut Databases) -> PpOptions {
    let mut pp = settings.pp.clone();
    let db = match &settings.compile_commands {
        Some(p) if p.is_dir() => Some(p.join("compile_commands.json")),
        Some(p) => Some(p.clone()),
        None => discover(file, dbs),
    };
    let Some(db) = db else { return pp };
    let entries = dbs.loaded.entry(db.clone()).or_insert_with(|| read(&db));
    let Some(entries) = entries else { return pp };
    let abs = absolute(file);
    if let Some((_, e)) = entries.iter().find(|(f, _)| *f == abs) {
        pp.include_dirs.extend(e.include_dirs.iter().cloned());
        pp.defines.extend(e.defines.iter().cloned());
        pp.undefs.extend(e.undefs.iter().cloned());
        // `--std` on the command line wins over the database's.
        pp.std = pp.std.or(e.std);
    }
    pp
}

fn absolute(p: &Path) -> PathBuf {
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    crate::frontend::preprocess::normalize(&p)
}

/// The first database in `file`'s directory or a parent (or their `build/`).
fn discover(file: &Path, dbs: &mut Databases) -> Option<PathBuf> {
    let dir = absolute(file).parent()?.to_path_buf();
    if let Some(f) = dbs.found.get(&dir) {
        return f.clone();
    }
    let found = dir.ancestors().find_map(|d| {
        [
            d.join("compile_commands.json"),
            d.join("build/compile_commands.json"),
        ]
        .into_iter()
        .find(|c| c.is_file())
    });
    dbs.found.insert(dir, found.clone());
    found
}

/// The entries of database `path`, each file's path absolute, with its options.
fn read(path: &Path) -> Option<Vec<(PathBuf, PpOptions)>> {
    let parsed = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<Vec<Entry>>(&t).map_err(|e| e.to_string()));
    let entries = match parsed {
        Ok(e) => e,
        Err(e) => {
            eprintln!(
                "{}: note: compilation database ignored: {e}",
                path.display()
            );
            return None;
        }
    };
    Some(
        entries
            .into_iter()
            .map(|e| {
                let dir = PathBuf::from(&e.directory);
                let args = e
                    .arguments
                    .unwrap_or_else(|| split_command(e.command.as_deref().unwrap_or("")));
                (absolute(&dir.join(&e.file)), options(&dir, &args))
            })
            .collect(),
    )
}

/// The `-I`, `-D`, `-U` of a compiler command line run in `dir` (also `-iquote`,
/// `-isystem`, and the joined forms `-Idir`, `-DX=1`).
pub fn options(dir: &Path, args: &[String]) -> PpOptions {
    let mut pp = PpOptions::default();
    let (mut std, mut lang) = (None, None);
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (flag, joined) = ["-iquote", "-isystem", "-I", "-D", "-U"]
            .iter()
            .find_map(|f| a.strip_prefix(f).map(|rest| (*f, rest)))
            .unwrap_or(("", ""));
        let value = if flag.is_empty() {
            None
        } else if joined.is_empty() {
            i += 1;
            args.get(i).map(String::as_str)
        } else {
            Some(joined)
        };
        if let Some(name) = a.strip_prefix("-std=").or_else(|| a.strip_prefix("--std=")) {
            std = LangStd::from_name(name).or(std);
        } else if let Some(x) = a.strip_prefix("-x") {
            let x = if x.is_empty() {
                args.get(i + 1).map(String::as_str)
            } else {
                Some(x)
            };
            i += usize::from(a == "-x");
            lang = match x {
                Some("c") => Some(Lang::C),
                Some("c++") => Some(Lang::Cpp),
                _ => lang,
            };
        }
        match (flag, value) {
            ("-I" | "-iquote" | "-isystem", Some(v)) => pp.include_dirs.push(dir.join(v)),
            ("-D", Some(v)) => {
                let (n, val) = v.split_once('=').unwrap_or((v, "1"));
                pp.defines.push((n.to_string(), val.to_string()));
            }
            ("-U", Some(v)) => pp.undefs.push(v.to_string()),
            _ => {}
        }
        i += 1;
    }
    // `-x` names the language; a `-std=` of the other language is ignored, as GCC does.
    pp.std = match (std, lang) {
        (Some(s), Some(l)) if s.lang != l => Some(LangStd::default_for(l)),
        (Some(s), _) => Some(s),
        (None, l) => l.map(LangStd::default_for),
    };
    pp
}

/// Splits a shell command line (single and double quotes, backslash escapes).
fn split_command(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut any = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => cur.push(c),
            (_, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                any = true;
            }
            (_, c) => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_give_includes_defines_undefs() {
        let args = split_command("cc -std=c11 -I include -Ithird/x -DN=3 -D 'MO=memory_order_acquire' -DFAST -UDEBUG -c verify/lock.c -o x.o");
        let pp = options(Path::new("/p"), &args);
        assert_eq!(
            pp.include_dirs,
            vec![PathBuf::from("/p/include"), PathBuf::from("/p/third/x")]
        );
        assert_eq!(
            pp.defines,
            vec![
                ("N".to_string(), "3".to_string()),
                ("MO".to_string(), "memory_order_acquire".to_string()),
                ("FAST".to_string(), "1".to_string())
            ]
        );
        assert_eq!(pp.undefs, vec!["DEBUG".to_string()]);
        assert_eq!(pp.std, LangStd::from_name("c11"));
    }

    #[test]
    fn the_standard_and_the_language() {
        let std = |cmd: &str| options(Path::new("/p"), &split_command(cmd)).std;
        let s = |lang, version| Some(LangStd { lang, version });
        assert_eq!(std("g++ -std=gnu++20 -c a.cc"), s(Lang::Cpp, Some(202_002)));
        assert_eq!(std("cc -std=c89 -c a.c"), s(Lang::C, None));
        assert_eq!(
            std("cc -std=iso9899:1999 -c a.c"),
            s(Lang::C, Some(199_901))
        );
        assert_eq!(
            std("cc -std=c2x -std=gnu11 -c a.c"),
            s(Lang::C, Some(201_112))
        );
        assert_eq!(std("clang -xc++ -c a.c"), s(Lang::Cpp, Some(201_703)));
        assert_eq!(
            std("clang -x c -std=c++17 -c a.c"),
            s(Lang::C, Some(201_710))
        );
        assert_eq!(
            std("cc -std=c++17 -x c++ -c a.c"),
            s(Lang::Cpp, Some(201_703))
        );
        assert_eq!(std("cc -std=k&r -c a.c"), None);
        assert_eq!(std("cc -c a.c"), None);
    }
}
