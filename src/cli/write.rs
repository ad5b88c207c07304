//! `fix --write`: every file a fix changes is replaced atomically, all or none.
//!
//! Order of work: every file is checked first (not read-only, still holding the text fensyn
//! read); then a temporary file is written next to each (same directory, so the rename stays
//! on one file system) with the original's permissions ([`stage`]; a symbolic link is
//! resolved first, so the file it names is replaced and the link stays a link); then every file is checked once more
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

/// The file a write to `path` replaces: `path` itself, or, when `path` is a symbolic link,
/// the file it leads to (the link is kept; the file it names gets the new text).
fn target(path: &Path) -> std::io::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path),
        _ => Ok(path.to_path_buf()),
    }
}

/// New text written to a temporary file in the directory of the file it will replace (so the
/// rename stays on one file system), not yet in place. Dropped without [`Staged::commit`], the
/// temporary file is removed.
pub struct Staged {
    temp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl Staged {
    /// Renames the temporary file over its target: readers see the old or the new text,
    /// never a part.
    pub fn commit(self) -> std::io::Result<()> {
        self.temp
            .persist(&self.target)
            .map(|_| ())
            .map_err(|e| e.error)
    }
}

/// Writes `bytes` to a temporary file next to the file `path` names (through its symbolic
/// links), with that file's permissions (a new file: the usual `0o666` less the umask).
/// The one atomic write of the code base: `--write` and `--output` both go through it.
pub fn stage(path: &Path, bytes: &[u8]) -> std::io::Result<Staged> {
    let target = target(path)?;
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let perms = match std::fs::metadata(&target) {
        Ok(m) => Some(m.permissions()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".fensyn.tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    if let Some(p) = perms {
        temp.as_file().set_permissions(p)?;
    }
    Ok(Staged { temp, target })
}

/// Replaces the file `path` names (through its symbolic links) by `bytes` atomically.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    stage(path, bytes)?.commit()
}

/// Replaces every file of `changes` by its new text, all or none (see the module doc).
pub fn write_all(changes: &[Change]) -> Result<(), WriteError> {
    for c in changes {
        check(c).map_err(at(c.path))?;
    }
    // Dropping `staged` (on any early return) removes the temporary files.
    let mut staged: Vec<Staged> = Vec::new();
    for c in changes {
        staged.push(stage(c.path, c.new.as_bytes()).map_err(at(c.path))?);
    }
    // Last check just before the renames: the window in which a concurrent edit is lost is
    // as small as the renames.
    for c in changes {
        check(c).map_err(at(c.path))?;
    }
    for (i, (c, s)) in changes.iter().zip(staged).enumerate() {
        if let Err(e) = s.commit() {
            restore(&changes[..i]);
            return Err(at(c.path)(e));
        }
    }
    Ok(())
}

/// Puts the files of `done` (already replaced) back to their original text.
fn restore(done: &[Change]) {
    for c in done {
        let _ = replace(c.path, c.old.as_bytes());
    }
}

/// Replaces `path` (through its symbolic links) with `new` through a temporary file in the
/// target's directory, keeping its permissions. Refuses when the file no longer holds `old` (it changed since it was read).
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

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_keeps_pointing_at_the_file_written() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().join("real");
        std::fs::create_dir(&real_dir).unwrap();
        let real = real_dir.join("a.c");
        std::fs::write(&real, "a\n").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.c");
        std::os::unix::fs::symlink("real/a.c", &link).unwrap();
        write_atomically(&link, "a\n", "A\n").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real/a.c"));
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "A\n");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        // No temporary file left, in either directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        assert_eq!(std::fs::read_dir(&real_dir).unwrap().count(), 1);
        // A new file (a report) is created with the usual permissions, not tempfile's 0600.
        let report = dir.path().join("r.json");
        replace(&report, b"{}").unwrap();
        let mode = std::fs::metadata(&report).unwrap().permissions().mode();
        assert_ne!(mode & 0o044, 0, "{mode:o}");
    }
}
