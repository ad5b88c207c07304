//! The input files of one call: file arguments as given, directories searched recursively.
//!
//! A directory is walked with the `ignore` crate the way ripgrep walks it: hidden files and
//! directories are skipped, and `.ignore`, `.gitignore` (inside a git repository), the
//! repository's `.git/info/exclude` and the global git excludes are respected. Only program
//! files are taken from a directory: [`SOURCE_EXTENSIONS`]. Headers (`.h`, `.hpp`, `.hh`) are
//! not programs (no `main`, no threads) and are skipped; so are, later, source files that do
//! not define `main` (see `batch.rs`): both are read through the translation units that
//! include them. A file named on the command line is always taken, whatever its name (as
//! ripgrep does).
//!
//! **Invariant:** the list is sorted by path and has no duplicates, so the order in which
//! files are processed and reported does not depend on the order of the arguments or of the
//! directory entries.

use std::path::{Path, PathBuf};

/// The extensions of the files taken from a directory (`.C` is C++ by convention; the match
/// is exact, so `.CPP` is not taken).
pub const SOURCE_EXTENSIONS: &[&str] = &["c", "cc", "cpp", "cxx", "c++", "C"];

/// One problem met while collecting inputs: `path` and a message (printed as
/// `path: error: message`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub path: String,
    pub message: String,
}

/// The files to process and the problems met collecting them.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    pub files: Vec<PathBuf>,
    pub errors: Vec<InputError>,
    /// The files named on the command line (without `.` components): always processed; the
    /// others were found in a directory and are processed only if they are translation units.
    pub named: std::collections::HashSet<PathBuf>,
}

impl Inputs {
    /// Whether `file` was found by searching a directory (not named as an argument).
    pub fn walked(&self, file: &Path) -> bool {
        !self.named.contains(&normal(file))
    }
}

/// Whether `path` has a program extension.
pub fn is_source(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SOURCE_EXTENSIONS.contains(&e))
}

/// Expands the arguments: a directory becomes the program files under it, anything else is
/// taken as a file (a missing one is reported when it is read, with `file:1:1`).
pub fn collect(args: &[PathBuf]) -> Inputs {
    let mut inputs = Inputs::default();
    for arg in args {
        if !arg.is_dir() {
            inputs.files.push(arg.clone());
            inputs.named.insert(normal(arg));
            continue;
        }
        let before = inputs.files.len();
        let walker = ignore::WalkBuilder::new(arg)
            .sort_by_file_path(Ord::cmp)
            .build();
        for entry in walker {
            match entry {
                Ok(e) => {
                    if e.file_type().is_some_and(|t| t.is_file()) && is_source(e.path()) {
                        inputs.files.push(e.into_path());
                    }
                }
                Err(err) => inputs.errors.push(InputError {
                    path: arg.to_string_lossy().into_owned(),
                    message: format!("cannot search the directory: {err}"),
                }),
            }
        }
        if inputs.files.len() == before {
            inputs.errors.push(InputError {
                path: arg.to_string_lossy().into_owned(),
                message: format!(
                    "no C or C++ files in this directory (looked for .{} files, skipping hidden \
                     and ignored ones)",
                    SOURCE_EXTENSIONS.join(" .")
                ),
            });
        }
    }
    // Sorted and deduplicated by the path without `.` components, so that `./a.c` (from
    // walking `.`) and `a.c` are one file; the shortest spelling is kept.
    inputs
        .files
        .sort_by_cached_key(|p| (normal(p), p.components().count(), p.clone()));
    inputs.files.dedup_by_key(|p| normal(p));
    inputs
}

/// `p` without `.` components.
fn normal(p: &Path) -> PathBuf {
    p.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_sorted_and_deduplicated_across_spellings() {
        let i = collect(&[
            PathBuf::from("z.c"),
            PathBuf::from("./b.c"),
            PathBuf::from("a.c"),
            PathBuf::from("b.c"),
            PathBuf::from("a.c"),
        ]);
        assert_eq!(
            i.files,
            [
                PathBuf::from("a.c"),
                PathBuf::from("b.c"),
                PathBuf::from("z.c")
            ]
        );
    }

    #[test]
    fn source_extensions() {
        for f in ["a.c", "a.cc", "a.cpp", "a.cxx", "a.c++", "a.C", "d/x.y.c"] {
            assert!(is_source(Path::new(f)), "{f}");
        }
        for f in ["a.h", "a.hpp", "a.hh", "a", "a.txt", "a.CPP", ".c"] {
            assert!(!is_source(Path::new(f)), "{f}");
        }
    }
}
