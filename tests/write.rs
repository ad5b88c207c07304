//! `fix --write` never loses data: read-only files and files changed since they were read are
//! left untouched (exit code 3).

mod common;

use common::*;

fn entries(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

#[test]
fn a_read_only_file_is_not_written() {
    let (dir, path) = copy_fixture("fixtures/litmus/mp.c");
    let before = std::fs::read(&path).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms).unwrap();
    let out = fensyn_in(dir.path(), &["fix", "mp.c", "--write"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("mp.c:1:1: error: not written: the file is read-only"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(std::fs::metadata(&path).unwrap().permissions().readonly());
    assert_eq!(entries(dir.path()), 1, "a temporary file was left behind");
}

#[test]
fn write_atomically_refuses_read_only_and_changed_files() {
    let (dir, path) = copy_fixture("fixtures/litmus/sb.c");
    let original = std::fs::read_to_string(&path).unwrap();

    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms.clone()).unwrap();
    let err = fensyn::cli::write_atomically(&path, &original, "new").unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);

    // Modified between the read and the write: refused, the modification kept.
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).unwrap();
    let edited = format!("{original}// edited by someone else\n");
    std::fs::write(&path, &edited).unwrap();
    let err = fensyn::cli::write_atomically(&path, &original, "new").unwrap_err();
    assert!(
        err.to_string().contains("changed since it was read"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
    assert_eq!(entries(dir.path()), 1, "a temporary file was left behind");

    // Unchanged: written.
    fensyn::cli::write_atomically(&path, &edited, "new").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(entries(dir.path()), 1);
}

#[cfg(unix)]
#[test]
fn write_through_a_symbolic_link_replaces_its_target_and_keeps_the_link() {
    let (dir, path) = copy_fixture("fixtures/litmus/mp.c");
    let before = std::fs::read_to_string(&path).unwrap();
    let link = dir.path().join("link.c");
    std::os::unix::fs::symlink("mp.c", &link).unwrap();
    let out = fensyn_in(dir.path(), &["fix", "link.c", "--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(
        meta.file_type().is_symlink(),
        "the link was replaced by a file"
    );
    let after = std::fs::read_to_string(&path).unwrap();
    assert_ne!(after, before, "the target was not written");
    assert!(after.contains("atomic_thread_fence"), "{after}");
    assert_eq!(entries(dir.path()), 2, "a temporary file was left behind");
}
