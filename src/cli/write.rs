//! `fix --write`: every file a fix changes is replaced atomically, all or none.
//!
//! Order of work: every file is checked first (not read-only, still holding the text fensyn
//! read); then a temporary file is written next to each (same directory, so the rename stays
//! on one file system) with the original's permissions; then every file is checked once more
//! and the temporary files are renamed over them in order. A failure before the renames
//! writes nothing (the temporary files are removed); a rename failing midway puts the files
//! already replaced back to their original text (each through its own temporary file and
//! rename) before reporting. Nothing is written unless every file can be.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// One file to replace: `old` is the text fensyn read, `new` what it writes.
#[derive(Clone, Copy, Debug)]
pub struct Change<'a> {
    pub path: &'a Path,
    pub old: &'a str,
    pub new: &'a str,
}

/// Why nothing (or, after a failed restore, not everything) was written: the file at fault.
#[derive(Debug)]
pub struct WriteError {
    pub path: PathBuf,
    pub error: std::io::Error,
}

fn at(path: &Path) -> impl Fn(std::io::Error) -> WriteError + '_ {
    move |error| WriteError {
        path: path.to_path_buf(),
        error,
    }
}

fn changed() -> std::io::Error {
    std::io::Error::other("the file changed since it was read; run fensyn again")
}

/// Refuses a read-only file and one that no longer holds `old`.
fn check(c: &Change) -> std::io::Result<()> {
    if std::fs::metadata(c.path)?.permissions().readonly() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "the file is read-only",
        ));
    }
    if std::fs::read(c.path)? != c.old.as_bytes() {
        return Err(changed());
    }
    Ok(())
}

/// The temporary file next to `path`.
pub(super) fn temp_path(path: &Path) -> PathBuf {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(".{name}.fensyn-{}.tmp", std::process::id()))
}

/// Writes `text` to the temporary file of `path`, with `path`'s permissions.
fn write_temp(path: &Path, text: &str) -> std::io::Result<PathBuf> {
    let perms = std::fs::metadata(path)?.permissions();
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::set_permissions(&tmp, perms)
    })();
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Replaces every file of `changes` by its new text, all or none (see the module doc).
pub fn write_all(changes: &[Change]) -> Result<(), WriteError> {
    for c in changes {
        check(c).map_err(at(c.path))?;
    }
    let mut temps: Vec<PathBuf> = Vec::new();
    let remove = |temps: &[PathBuf]| {
        for t in temps {
            let _ = std::fs::remove_file(t);
        }
    };
    for c in changes {
        match write_temp(c.path, c.new) {
            Ok(t) => temps.push(t),
            Err(e) => {
                remove(&temps);
                return Err(at(c.path)(e));
            }
        }
    }
    // Last check just before the renames: the window in which a concurrent edit is lost is
    // as small as the renames.
    for c in changes {
        if let Err(e) = check(c) {
            remove(&temps);
            return Err(at(c.path)(e));
        }
    }
    for (i, (c, t)) in changes.iter().zip(&temps).enumerate() {
        if let Err(e) = std::fs::rename(t, c.path) {
            remove(&temps[i..]);
            restore(&changes[..i]);
            return Err(at(c.path)(e));
        }
    }
    Ok(())
}

/// Puts the files of `done` (already replaced) back to their original text.
fn restore(done: &[Change]) {
    for c in done {
        if let Ok(t) = write_temp(c.path, c.old) {
            if std::fs::rename(&t, c.path).is_err() {
                let _ = std::fs::remove_file(&t);
            }
        }
    }
}

/// Replaces `path` with `new` through a temporary file in the same directory, keeping its
/// permissions. Refuses when the file no longer holds `old` (it changed since it was read).
/// Refuses a read-only file: `--write` never replaces what its owner protected.
pub fn write_atomically(path: &Path, old: &str, new: &str) -> std::io::Result<()> {
    write_all(&[Change { path, old, new }]).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.c");
        let b = dir.path().join("b.h");
        std::fs::write(&a, "a\n").unwrap();
        std::fs::write(&b, "b\n").unwrap();
        let both = |old_b| {
            [
                Change {
                    path: &a,
                    old: "a\n",
                    new: "A\n",
                },
                Change {
                    path: &b,
                    old: old_b,
                    new: "B\n",
                },
            ]
        };
        // b.h is not what was read: nothing is written.
        let e = write_all(&both("x\n")).unwrap_err();
        assert_eq!(e.path, b);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        write_all(&both("b\n")).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "A\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "B\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_failed_rename_restores_the_files_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.c");
        std::fs::write(&a, "a\n").unwrap();
        // The rename of the second file fails (a directory is not replaced by a file), after
        // its checks pass: a directory has no text, so check it through `restore` directly.
        let done = [Change {
            path: &a,
            old: "a\n",
            new: "A\n",
        }];
        write_all(&done).unwrap();
        restore(&done);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
