//! Shared helpers of the integration tests: run the real binary, find fixtures.

#![allow(dead_code)]

pub mod families;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `fixtures/**/*.c` and `fixtures/**/*.cpp`, sorted.
pub fn fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "c" || e == "cpp") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("fixtures"), &mut out);
    out
}

/// The expectations of fixture `c` (`NAME.expect.json`), if it has any.
pub fn expect_of(c: &Path) -> Option<serde_json::Value> {
    let p = c.with_extension("expect.json");
    let text = std::fs::read_to_string(&p).ok()?;
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// The extra command-line arguments a fixture's expectations ask for (`"args"`).
pub fn expect_args(exp: &serde_json::Value) -> Vec<String> {
    exp["args"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// A new temporary directory holding `files`: (path in the directory, content), where a
/// content starting with `fixtures/` is copied from that fixture and any other is the text.
pub fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, from) in files {
        let dst = dir.path().join(path);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        if from.starts_with("fixtures/") {
            std::fs::copy(root().join(from), &dst).unwrap();
        } else {
            std::fs::write(&dst, from).unwrap();
        }
    }
    dir
}

/// A copy of `fixture` (a path from the crate root) in a new temporary directory.
pub fn copy_fixture(fixture: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join(Path::new(fixture).file_name().unwrap());
    std::fs::copy(root().join(fixture), &dst).unwrap();
    (dir, dst)
}

/// Runs `fensyn ARGS` in `dir` and returns its output.
pub fn fensyn_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fensyn"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run fensyn")
}

pub fn fensyn(args: &[&str]) -> Output {
    fensyn_in(&root(), args)
}

/// The JSON a command printed (`--format json|sarif`); a test fails with its output when it
/// is not. A `--format json` result is an array of per-file objects: one file's array `[x]`
/// is given as `x` ([`one_file`]; the array itself is pinned by tests/invocation.rs).
pub fn json(out: &Output) -> serde_json::Value {
    one_file(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

/// The JSON document a command printed, as it is (a `--format json` array stays an array).
pub fn json_doc(out: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

/// Parses `text`; an array of exactly one element is that element.
pub fn one_file(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    let v: serde_json::Value = serde_json::from_str(text)?;
    Ok(match v {
        serde_json::Value::Array(mut items) if items.len() == 1 => items.pop().unwrap_or_default(),
        v => v,
    })
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Whether `text` has the diagnostic `error[KIND]: MESSAGE...` at `file:line:col` (given as
/// `old`, the one-line form `file:line:col: kind: message`): its title starts with the
/// message and its `-->` line names the position.
pub fn has_diagnostic(text: &str, old: &str) -> bool {
    let mut parts = old.splitn(5, ':');
    let (Some(file), Some(line), Some(col), Some(_kind), Some(msg)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    // The path may be longer (`fixtures/preprocessor/x.c` for `x.c`).
    let at = format!("{file}:{line}:{col}");
    let lines: Vec<&str> = text.lines().collect();
    lines.windows(2).any(|w| {
        w[0].starts_with("error[")
            && w[0]
                .split_once("]: ")
                .is_some_and(|(_, m)| m.starts_with(msg.trim_start()))
            && w[1].trim_start().starts_with("--> ")
            && (w[1].ends_with(&format!(" {at}")) || w[1].ends_with(&format!("/{at}")))
    })
}

/// Path of `p` relative to the crate root, with `/` separators.
pub fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Parses fixture `path` as the binary would with its expectations' `-I DIR` and
/// `-D NAME[=INT]` arguments: its name (relative to the crate root), source and program.
pub fn parse_fixture(
    path: &Path,
) -> Result<(String, String, fensyn::ir::Program), fensyn::frontend::Diagnostic> {
    let name = rel(path);
    let src = std::fs::read_to_string(path).unwrap();
    let args = expect_of(path).map(|e| expect_args(&e)).unwrap_or_default();
    let mut pp = fensyn::frontend::PpOptions::default();
    let mut defines = Vec::new();
    for w in args.windows(2) {
        match w[0].as_str() {
            "-I" => pp.include_dirs.push(w[1].clone().into()),
            "-D" => {
                let (n, v) = w[1].split_once('=').unwrap_or((&w[1], "1"));
                defines.push((n.to_string(), v.parse().unwrap()));
            }
            _ => {}
        }
    }
    let lang = fensyn::ir::Lang::from_path(path);
    let loader = fensyn::frontend::preprocess::Disk;
    let prog = fensyn::frontend::parse_unit(&name, &src, lang, &defines, &pp, &loader)?;
    Ok((name, src, prog))
}
