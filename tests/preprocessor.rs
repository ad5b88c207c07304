//! The preprocessor on the command line: `fixtures/preprocessor/` (the fixtures with an
//! `expect.json` also run in `tests/fixtures.rs`), `-I`, `-D`, `-U`, fensyn.toml's
//! `include`, compile_commands.json, fixes in headers (one patch, `--write` all or none) and
//! the fixes fensyn does not write.

mod common;

use common::*;
use std::path::Path;

const DIR: &str = "fixtures/preprocessor";

/// `fensyn ARGS` from the crate root: exit code and stderr.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = fensyn(args);
    (out.status.code(), stdout(&out), stderr(&out))
}

#[test]
fn input_errors_name_their_file_and_line() {
    let cases = [
        (
            "error_branch.c",
            "error_branch.c:5:1: error: #error \"NTHREADS must be set (e.g. -DNTHREADS=2)\"",
        ),
        (
            "include_cycle.c",
            "include/cycle_b.h:1:1: error: include cycle: fixtures/preprocessor/include/cycle_a.h -> fixtures/preprocessor/include/cycle_b.h -> fixtures/preprocessor/include/cycle_a.h",
        ),
        (
            "missing_header.c",
            "missing_header.c:2:1: error: cannot find header \"queue_impl.h\"",
        ),
        (
            "sb_variants.c",
            "sb_variants.c:7:1: error: #error \"compile with -DVARIANT=1",
        ),
    ];
    for (file, want) in cases {
        let path = format!("{DIR}/{file}");
        let (code, _, err) = run(&["check", &path]);
        assert_eq!(code, Some(3), "{file}: {err}");
        assert!(has_diagnostic(&err, want), "{file}: {err}");
    }
    // The #error branch is left with -DNTHREADS; -U takes it back.
    let (code, _, err) = run(&[
        "check",
        "-D",
        "NTHREADS=2",
        &format!("{DIR}/error_branch.c"),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, _) = run(&[
        "check",
        "-D",
        "NTHREADS=2",
        "-U",
        "NTHREADS",
        &format!("{DIR}/error_branch.c"),
    ]);
    assert_eq!(code, Some(3));
}

#[test]
fn variants_are_selected_by_defines() {
    let path = format!("{DIR}/sb_variants.c");
    let (code, out, err) = run(&["check", "--format", "json", "-D", "VARIANT=2", &path]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\"buggy\": 0"), "{out}");
    let (code, _, err) = run(&["check", "-D", "VARIANT=3", &path]);
    assert_eq!(code, Some(3));
    assert!(
        has_diagnostic(
            &err,
            "sb_variants.c:13:1: error: #error \"unknown VARIANT\""
        ),
        "{err}"
    );
}

#[test]
fn fences_between_macro_statements_are_not_written() {
    let (code, _, err) = run(&["fix", "--write", &format!("{DIR}/macro_statements.c")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("between statements of the macro use at line 16:2 (in expansion of PUBLISH, defined at fixtures/preprocessor/macro_statements.c:7:1)"),
        "{err}"
    );
}

#[test]
fn fences_next_to_statement_macros_go_next_to_the_use() {
    // The slots after the inner statement of `SET(data, 42)` and before that of
    // `GET(got, data)` are the program points after and before the uses' statements.
    let (code, out, err) = run(&["fix", &format!("{DIR}/statement_macros.c")]);
    assert_eq!(code, Some(1), "{err}");
    let before = |use_: &str| {
        out.lines()
            .skip_while(|l| !l.contains("memory_order_release"))
            .nth(1)
            .is_some_and(|l| l.contains(use_))
    };
    assert!(before("SET(ready, 1);"), "{out}");
    assert!(out.contains("+\tatomic_thread_fence(memory_order_acquire); /* fensyn: read ready before data; pairs with the release fence in producer() */\n \tGET(got, data);"), "{out}");
}

#[test]
fn a_race_in_a_header_names_the_header() {
    let (code, out, err) = run(&["check", &format!("{DIR}/header_race.c")]);
    assert_eq!(code, Some(1), "{err}");
    let all = format!("{out}{err}");
    // Both accesses, each in its own file.
    assert!(all.contains("error[race]: data race on `hits`"), "{all}");
    assert!(
        all.contains("--> fixtures/preprocessor/header_race.c:16:"),
        "{all}"
    );
    assert!(
        all.contains("::: fixtures/preprocessor/include/stats.h:9:"),
        "{all}"
    );
    assert!(all.contains("T1 (worker) writes `hits`"), "{all}");
    assert!(all.contains("(line stats.h:9)"), "{all}");
}

#[test]
fn a_header_that_brings_stdatomic_is_enough() {
    // `guarded_flag.c` includes `seqflag.h`, which includes `ops.h`, which includes
    // <stdatomic.h>: neither file gets an `#include` with its fence.
    let (code, out, err) = run(&["fix", &format!("{DIR}/guarded_flag.c")]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(out.matches("atomic_thread_fence").count(), 2, "{out}");
    assert!(!out.contains("#include"), "{out}");
}

/// A temporary copy of `fixtures/preprocessor/NAME.c` with its header `include/HEADER`.
fn with_header(name: &str, header: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("include")).unwrap();
    let copy = |from: &str| std::fs::copy(root().join(DIR).join(from), d.join(from)).unwrap();
    copy(&format!("{name}.c"));
    copy(&format!("include/{header}"));
    dir
}

fn have(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_fix_in_a_header_is_one_patch_for_git_apply_and_patch() {
    let dir = with_header("spsc_harness", "spsc.h");
    let d = dir.path();
    let out = fensyn_in(d, &["fix", "spsc_harness.c"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let diff = stdout(&out);
    let sections: Vec<&str> = diff.lines().filter(|l| l.starts_with("--- a/")).collect();
    assert_eq!(
        sections,
        ["--- a/spsc_harness.c", "--- a/include/spsc.h"],
        "{diff}"
    );
    assert!(
        stderr(&out).contains("include/spsc.h:25:2: insert release"),
        "{}",
        stderr(&out)
    );
    std::fs::write(d.join("fix.diff"), &diff).unwrap();
    let tool = |cmd: &str, args: &[&str]| {
        let out = std::process::Command::new(cmd)
            .args(args)
            .current_dir(d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    if have("git") {
        tool("git", &["apply", "--check", "fix.diff"]);
    } else {
        println!("git is not installed: `git apply --check` not run");
    }
    if have("patch") {
        tool("patch", &["-p1", "--dry-run", "--batch", "-i", "fix.diff"]);
    } else {
        println!("patch is not installed: `patch -p1 --dry-run` not run");
    }
}

#[test]
fn write_replaces_the_main_file_and_the_header_together() {
    let dir = with_header("header_fence", "ring.h");
    let d = dir.path();
    let out = fensyn_in(d, &["fix", "--write", "header_fence.c"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("header_fence.c: written"), "{err}");
    assert!(err.contains("include/ring.h: written"), "{err}");
    let main = std::fs::read_to_string(d.join("header_fence.c")).unwrap();
    let header = std::fs::read_to_string(d.join("include/ring.h")).unwrap();
    assert!(
        main.contains("atomic_thread_fence(memory_order_acquire);"),
        "{main}"
    );
    assert!(
        header.contains("atomic_thread_fence(memory_order_release);"),
        "{header}"
    );
    let out = fensyn_in(d, &["check", "header_fence.c"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        std::fs::read_dir(d).unwrap().count(),
        2,
        "a temporary file was left"
    );
}

#[test]
fn a_read_only_header_leaves_every_file_unwritten() {
    let dir = with_header("header_fence", "ring.h");
    let d = dir.path();
    let main = std::fs::read(d.join("header_fence.c")).unwrap();
    let h = d.join("include/ring.h");
    let mut perms = std::fs::metadata(&h).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&h, perms).unwrap();
    let out = fensyn_in(d, &["fix", "--write", "header_fence.c"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "include/ring.h:1:1: error: not written: the file is read-only; no file was written"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(d.join("header_fence.c")).unwrap(), main);
}

#[test]
fn a_header_changed_since_it_was_read_leaves_every_file_unwritten() {
    use fensyn::api::{repair, Repair};
    use fensyn::checker::{Limits, Model};
    use fensyn::cli::write_fix;
    let dir = with_header("header_fence", "ring.h");
    let d = dir.path();
    let path = d.join("header_fence.c");
    let src = std::fs::read_to_string(&path).unwrap();
    let name = path.to_string_lossy().into_owned();
    let loader = fensyn::frontend::preprocess::Disk;
    let pp = fensyn::ir::PpOptions::default();
    let lang = fensyn::ir::Lang::C;
    let prog = fensyn::frontend::parse_unit(&name, &src, lang, &[], &pp, &loader).unwrap();
    let mode = fensyn::synth::Mode::Optimal;
    let Repair::Fixed { files, .. } =
        repair(&name, &src, &prog, Model::Rc11, mode, Limits::default())
    else {
        panic!("no fix");
    };
    assert_eq!(files.len(), 2);
    // Someone edits the header after fensyn read it.
    let h = d.join("include/ring.h");
    let edited = format!("{}/* edited */\n", std::fs::read_to_string(&h).unwrap());
    std::fs::write(&h, &edited).unwrap();
    let e = write_fix(&path, &src, &prog, &files).unwrap_err();
    assert_eq!(e.path, fensyn::frontend::preprocess::normalize(&h));
    assert!(
        e.error.to_string().contains("changed since it was read"),
        "{}",
        e.error
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), src);
    assert_eq!(std::fs::read_to_string(&h).unwrap(), edited);
    assert_eq!(
        std::fs::read_dir(d).unwrap().count(),
        2,
        "a temporary file was left"
    );
}

/// A directory holding `compdb/mp_compdb.c` and `include/algo.h` as in the fixtures.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("src")).unwrap();
    std::fs::create_dir_all(d.join("include")).unwrap();
    std::fs::create_dir_all(d.join("build")).unwrap();
    let copy = |from: &str, to: &Path| std::fs::copy(root().join(DIR).join(from), to).unwrap();
    copy("compdb/mp_compdb.c", &d.join("src/mp.c"));
    copy("include/algo.h", &d.join("include/algo.h"));
    dir
}

#[test]
fn compile_commands_give_a_files_include_directories() {
    let dir = project();
    let d = dir.path();
    // Without -I the header is not found.
    let out = fensyn_in(d, &["check", "src/mp.c"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot find header \"algo.h\""));
    // Found by discovery in build/, as clang-tidy does.
    let db = format!(
        "[{{\"directory\": {:?}, \"command\": \"cc -std=c11 -I ../include -DPAYLOAD=7 -c ../src/mp.c\", \"file\": \"../src/mp.c\"}}]",
        d.join("build").display().to_string()
    );
    std::fs::write(d.join("build/compile_commands.json"), db).unwrap();
    let out = fensyn_in(d, &["fix", "src/mp.c"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let diff = stdout(&out);
    assert!(
        diff.contains("+\tatomic_thread_fence(memory_order_release);"),
        "{diff}"
    );
    // The same through --compile-commands, from another directory.
    std::fs::rename(d.join("build/compile_commands.json"), d.join("db.json")).unwrap();
    let out = fensyn_in(
        &d.join("src"),
        &["check", "--compile-commands", "../db.json", "mp.c"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn fensyn_toml_include_directories() {
    let dir = project();
    let d = dir.path();
    std::fs::write(d.join("fensyn.toml"), "include = [\"include\"]\n").unwrap();
    let out = fensyn_in(d, &["check", "--format", "json", "src/mp.c"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("\"buggy\": 1"), "{}", stdout(&out));
}

#[test]
fn a_written_fix_reparses_with_the_same_include_directories() {
    let dir = project();
    let d = dir.path();
    let out = fensyn_in(d, &["fix", "--write", "-I", "include", "src/mp.c"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fixed = std::fs::read_to_string(d.join("src/mp.c")).unwrap();
    assert!(
        fixed.contains("atomic_thread_fence(memory_order_acquire);"),
        "{fixed}"
    );
    let out = fensyn_in(d, &["check", "-I", "include", "src/mp.c"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn traces_show_header_lines_from_the_header() {
    let (code, out, err) = run(&["check", &format!("{DIR}/header_fence.c")]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        out.contains("ring.h:11 | atomic_store_explicit(&full, 1, memory_orde"),
        "{out}"
    );
    assert!(out.contains("← T1:ring.h:11"), "{out}");
}

/// `-std=` of a file's compile_commands.json entry (and `--std`) picks the language and
/// `__STDC_VERSION__` / `__cplusplus`; a file without an entry gets C17 (by its extension).
#[test]
fn the_standard_comes_from_the_database_or_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["a.c", "b.c", "c.c", "d.c"] {
        std::fs::copy(root().join(DIR).join("compdb/std_variants.c"), d.join(f)).unwrap();
    }
    let entry = |file: &str, cmd: &str| {
        format!(
            "{{\"directory\": {:?}, \"command\": \"{cmd} -c {file}\", \"file\": \"{file}\"}}",
            d.display().to_string()
        )
    };
    let db = format!(
        "[{}, {}, {}]",
        entry("a.c", "g++ -std=gnu++17"),
        entry("b.c", "cc -std=c99"),
        entry("c.c", "clang -x c++ -std=c11"),
    );
    std::fs::write(d.join("compile_commands.json"), db).unwrap();
    // C++17 from the database: the fence is spelled for C++.
    let out = fensyn_in(d, &["fix", "a.c"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("std::atomic_thread_fence(std::memory_order_release);"),
        "{}",
        stdout(&out)
    );
    // C99 has no C11 atomics: the file's own #error.
    let out = fensyn_in(d, &["check", "b.c"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        has_diagnostic(&stderr(&out), "b.c:59:1: error: #error \"needs C11"),
        "{}",
        stderr(&out)
    );
    // `-x c++` makes it C++; a C standard is then ignored (as GCC does): C++17's value.
    let out = fensyn_in(d, &["fix", "c.c"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("std::atomic_thread_fence"),
        "{}",
        stdout(&out)
    );
    // No entry: C by the extension, C17.
    let out = fensyn_in(d, &["fix", "d.c"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("+\tatomic_thread_fence(memory_order_release);"));
    // The command line's --std wins over the database's.
    let out = fensyn_in(d, &["check", "--std", "c++11", "b.c"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = fensyn_in(d, &["check", "--std", "c++2x", "d.c"]);
    assert_ne!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("`c++2x` is not a C or C++ standard"),
        "{}",
        stderr(&out)
    );
}

/// A header that redefines the test's parameter differently (the thesis's barrier.h after a
/// test's `#define LOOP`): GCC warns and uses the later definition; so does fensyn, naming the
/// header's line, and the program is checked with the header's value.
#[test]
fn a_macro_redefined_differently_warns_and_the_later_definition_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("spin.h"), "#define ROUNDS 3\n").unwrap();
    let main = "#include <assert.h>\n#define ROUNDS 2\n#include \"spin.h\"\nint main(void) {\n  int n = 0;\n  for (int i = 0; i < ROUNDS; i++)\n    n++;\n  assert(n == 2);\n  return 0;\n}\n";
    let file = d.join("test.c");
    std::fs::write(&file, main).unwrap();
    let (code, _, err) = run(&["check", file.to_str().unwrap()]);
    // The assertion fails: the loop runs 3 times, as compiled by GCC.
    assert_eq!(code, Some(1), "{err}");
    let header = d.join("spin.h");
    let want = format!(
        "{}:1:9: warning: `ROUNDS` redefined differently (first defined at {}:2:1)",
        header.display(),
        file.display()
    );
    assert!(err.contains(&want), "{err}");
}

/// A program of two source files, as treiber-stack is written: `main.c` calls `publish`,
/// defined in `queue.c` (which calls `my_id`, defined in `main.c`), both include `queue.h`,
/// which has no include guard. Without `--link` the call is refused with a hint; with it the
/// units are one program, the header is read once, and the fence the bug needs goes into
/// `queue.c`, which `--write` changes (re-checked clean).
#[test]
fn link_joins_the_source_files_of_one_program() {
    let header = "#include <stdatomic.h>\nstruct box { int data; atomic_int ready; };\n\
                  static inline int twice(int v) { return 2 * v; }\n\
                  void publish(struct box *b, int v);\nint my_id(void);\n";
    let queue = "#include \"queue.h\"\n\
void publish(struct box *b, int v)\n{\n\tb->data = twice(v) + my_id();\n\
\tatomic_store_explicit(&b->ready, 1, memory_order_relaxed);\n}\n";
    let main =
        "#include <pthread.h>\n#include <assert.h>\n#include <stdlib.h>\n#include \"queue.h\"\n\
struct box shared;\nint my_id(void) { return 0; }\n\
static void *producer(void *arg) { (void)arg; publish(&shared, 21); return NULL; }\n\
static void *consumer(void *arg)\n{\n\t(void)arg;\n\
\tif (atomic_load_explicit(&shared.ready, memory_order_acquire))\n\
\t\tassert(shared.data == 42);\n\treturn NULL;\n}\n\
int main(void)\n{\n\tpthread_t p, c;\n\
\tif (pthread_create(&p, NULL, producer, NULL)) abort();\n\
\tif (pthread_create(&c, NULL, consumer, NULL)) abort();\n\
\tpthread_join(p, NULL);\n\tpthread_join(c, NULL);\n\treturn 0;\n}\n";
    let dir = tree(&[("queue.h", header), ("queue.c", queue), ("main.c", main)]);
    let d = dir.path();
    let alone = fensyn_in(d, &["check", "main.c"]);
    assert_eq!(alone.status.code(), Some(3));
    assert!(
        stderr(&alone).contains("pass that file with `--link FILE`"),
        "{}",
        stderr(&alone)
    );

    let linked = fensyn_in(d, &["check", "main.c", "--link", "queue.c"]);
    assert_eq!(linked.status.code(), Some(1), "{}", stderr(&linked));
    let said = format!("{}{}", stdout(&linked), stderr(&linked));
    assert!(
        said.contains("assertion `shared.data == 42` failed"),
        "{said}"
    );

    let fixed = fensyn_in(d, &["fix", "--write", "main.c", "--link", "queue.c"]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    assert!(
        stderr(&fixed).contains("queue.c:5:2: insert release"),
        "{}",
        stderr(&fixed)
    );
    let queue_now = std::fs::read_to_string(d.join("queue.c")).unwrap();
    assert!(queue_now.contains("memory_order_release"), "{queue_now}");
    assert_eq!(std::fs::read_to_string(d.join("main.c")).unwrap(), main);
    let again = fensyn_in(d, &["check", "main.c", "--link", "queue.c"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));

    let missing = fensyn_in(d, &["check", "main.c", "--link", "nowhere.c"]);
    assert_eq!(missing.status.code(), Some(3));
    assert!(
        stderr(&missing).contains("cannot read linked file"),
        "{}",
        stderr(&missing)
    );
}
