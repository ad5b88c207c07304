//! What `check` and `fix` print for people: diagnostics with the source line and carets
//! (`error[race]: ...`), one diagnostic per race with both accesses, counts that cannot read as
//! a contradiction, colour (`--color`, `NO_COLOR`), `--quiet`, `--verbose`, the summary across
//! files, and Ctrl-C (exit 130, no file touched).

mod common;

use common::*;
use std::process::Command;

/// Two threads run `counter++` on a plain int: a race inside one statement, line 7.
const COUNTER: &str = "#include <pthread.h>
#include <assert.h>

int counter;

void *worker(void *arg) {
    counter++;
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, worker, 0);
    pthread_create(&b, 0, worker, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter == 2);
    return 0;
}
";

/// A writer fills both cells of an array while a reader reads them: the same two statements
/// race on `data[0]` and on `data[1]`.
const CELLS: &str = "#include <pthread.h>

int data[2];
int sum;

void *writer(void *arg) {
    for (int i = 0; i < 2; i++)
        data[i] = i + 1;
    return 0;
}

void *reader(void *arg) {
    for (int i = 0; i < 2; i++)
        sum += data[i];
    return 0;
}

int main(void) {
    pthread_t w, r;
    pthread_create(&w, 0, writer, 0);
    pthread_create(&r, 0, reader, 0);
    pthread_join(w, 0);
    pthread_join(r, 0);
    return 0;
}
";

const SYNTAX: &str = "int main(void) {\n  int x = ;\n  return 0;\n}\n";

#[test]
fn a_race_is_one_diagnostic_with_both_accesses() {
    let dir = tree(&[("counter.c", COUNTER)]);
    let out = fensyn_in(dir.path(), &["check", "counter.c"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert_eq!(text.matches("error[race]").count(), 1, "{text}");
    assert!(
        text.contains(
            "error[race]: data race on `counter`: a write and a read in different threads"
        ),
        "{text}"
    );
    assert!(text.contains(" --> counter.c:7:5\n"), "{text}");
    assert!(text.contains("7 |     counter++;"), "{text}");
    assert!(text.contains("(worker) reads `counter`"), "{text}");
    assert!(text.contains("(worker) writes `counter`"), "{text}");
    assert!(text.contains("^^^^^^^^^^"), "{text}");
    // The assertion its own diagnostic, with its count out of every explored execution.
    assert!(
        text.contains("error[assertion]: assertion `counter == 2` failed"),
        "{text}"
    );
    assert!(
        text.contains("= note: in 2 of 4 explored executions"),
        "{text}"
    );
    // The execution names who reads and who writes instead of "line 7 and line 7".
    assert!(!text.contains("between line 7 and line 7"), "{text}");
    assert!(text.contains("-> data race: T"), "{text}");
}

#[test]
fn races_of_one_statement_pair_on_several_cells_are_one_diagnostic() {
    let dir = tree(&[("cells.c", CELLS)]);
    let out = fensyn_in(dir.path(), &["check", "cells.c"]);
    let text = stdout(&out);
    assert_eq!(text.matches("error[race]").count(), 1, "{text}");
    assert!(text.contains("data race on `data[0]`"), "{text}");
    assert!(text.contains("also on `data[1]`"), "{text}");
    assert!(text.contains("T1 (writer) writes `data[0]`"), "{text}");
    assert!(text.contains("T2 (reader) reads `data[0]`"), "{text}");
    // Both lines shown, the reader's access primary (the later line).
    assert!(text.contains(" --> cells.c:14:9"), "{text}");
    assert!(text.contains("8 |         data[i] = i + 1;"), "{text}");
}

#[test]
fn counts_say_what_they_count() {
    // 34 buggy of 42 explored: 34 complete and 8 pruned at a wait. Never "8 blocked: 34 buggy".
    let out = fensyn(&["check", "fixtures/algorithms/peterson.c"]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "fixtures/algorithms/peterson.c: 34 of 42 executions under rc11 fail (34 complete, \
             8 pruned at an `assume` or a wait, not deadlocks)"
        ),
        "{text}"
    );
    assert!(!text.contains("blocked"), "{text}");
    let out = fensyn(&["check", "fixtures/litmus/sb.c"]);
    assert!(
        stdout(&out).contains("fixtures/litmus/sb.c: 1 of 4 executions under rc11 fail\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn input_errors_show_the_line_and_a_caret() {
    let dir = tree(&[("bad.c", SYNTAX)]);
    let out = fensyn_in(dir.path(), &["check", "bad.c"]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.starts_with("error[syntax]: "), "{err}");
    assert!(err.contains(" --> bad.c:2:10\n"), "{err}");
    assert!(err.contains("2 |   int x = ;\n"), "{err}");
    assert!(err.contains("  |          ^"), "{err}");
    // An unreadable file: no source, still its position.
    let out = fensyn_in(dir.path(), &["check", "missing.c"]);
    let err = stderr(&out);
    assert!(err.starts_with("error[input]: cannot read file"), "{err}");
    assert!(err.contains("--> missing.c:1:1"), "{err}");
}

#[test]
fn colour_is_asked_for_or_refused() {
    let dir = tree(&[("counter.c", COUNTER), ("bad.c", SYNTAX)]);
    let esc = "\u{1b}[";
    // Not a terminal: no colour unless asked for; `always` wins over NO_COLOR (a flag is the
    // more specific request); `never` never colours.
    let plain = fensyn_in(dir.path(), &["check", "counter.c"]);
    assert!(!stdout(&plain).contains(esc));
    let run = |args: &[&str], no_color: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fensyn"));
        c.args(args).current_dir(dir.path());
        if no_color {
            c.env("NO_COLOR", "1");
        } else {
            c.env_remove("NO_COLOR");
        }
        c.output().unwrap()
    };
    let coloured = run(&["check", "--color", "always", "counter.c"], true);
    assert!(stdout(&coloured).contains(esc), "{}", stdout(&coloured));
    let bad = run(&["check", "--color", "always", "bad.c"], false);
    assert!(stderr(&bad).contains(esc));
    let never = run(&["check", "--color", "never", "counter.c"], false);
    assert!(!stdout(&never).contains(esc));
    // `auto` on a terminal: colour, unless NO_COLOR is set (and not empty).
    use clap::Parser;
    let cli = fensyn::cli::Cli::try_parse_from(["fensyn", "check", "x.c"]).unwrap();
    let common = cli.command.common().unwrap();
    let decide = fensyn::cli::render::decide;
    std::env::remove_var("NO_COLOR");
    assert!(decide(common, true, true).color_out);
    assert!(!decide(common, false, false).color_err);
    std::env::set_var("NO_COLOR", "1");
    let with_no_color = decide(common, true, true);
    std::env::remove_var("NO_COLOR");
    assert!(!with_no_color.color_out && !with_no_color.color_err);
}

#[test]
fn several_files_end_with_a_summary_quiet_and_verbose() {
    let dir = tree(&[
        ("a_buggy.c", "fixtures/litmus/sb.c"),
        ("b_clean.c", "fixtures/litmus/sb_sc.c"),
        ("c_bad.c", SYNTAX),
    ]);
    let out = fensyn_in(dir.path(), &["check", "a_buggy.c", "b_clean.c", "c_bad.c"]);
    let err = stderr(&out);
    assert!(
        err.ends_with("3 files checked: 1 buggy, 1 clean, 1 not analysed\n"),
        "{err}"
    );
    let out = fensyn_in(dir.path(), &["check", "."]);
    assert!(stderr(&out).ends_with("3 files checked: 1 buggy, 1 clean, 1 not analysed\n"));
    let out = fensyn_in(dir.path(), &["fix", "a_buggy.c", "b_clean.c"]);
    assert!(
        stderr(&out).ends_with("2 files: 1 with a fix, 1 clean or fixed in place\n"),
        "{}",
        stderr(&out)
    );
    // --quiet: the diagnostics only.
    let out = fensyn_in(dir.path(), &["check", "--quiet", "a_buggy.c", "b_clean.c"]);
    let text = stdout(&out);
    assert!(text.contains("error[assertion]"), "{text}");
    assert!(!text.contains("first failing execution"), "{text}");
    assert!(!text.contains("executions under"), "{text}");
    assert!(!stderr(&out).contains("files checked"));
    assert_eq!(out.status.code(), Some(1));
    // --verbose: the exploration's statistics and time.
    let out = fensyn_in(dir.path(), &["check", "-v", "a_buggy.c"]);
    assert!(
        stderr(&out).contains("a_buggy.c: explored 4 executions (4 complete, 0 pruned"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("partial graphs"));
}

/// Four threads each storing and loading two relaxed locations three times: far more
/// executions than a test waits for.
const LONG: &str = "#include <stdatomic.h>
#include <pthread.h>

atomic_int x, y;

void *t(void *arg) {
    for (int i = 0; i < 3; i++) {
        atomic_store_explicit(&x, i, memory_order_relaxed);
        int a = atomic_load_explicit(&y, memory_order_relaxed);
        atomic_store_explicit(&y, a + 1, memory_order_relaxed);
    }
    return 0;
}

int main(void) {
    pthread_t a, b, c, d;
    pthread_create(&a, 0, t, 0);
    pthread_create(&b, 0, t, 0);
    pthread_create(&c, 0, t, 0);
    pthread_create(&d, 0, t, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    pthread_join(c, 0);
    pthread_join(d, 0);
    return 0;
}
";

/// Ctrl-C during `fix --write` (one job and two): exit 130, what was explored on stderr, the
/// file untouched.
#[test]
fn ctrl_c_stops_with_130_and_touches_no_file() {
    for jobs in ["1", "2"] {
        let dir = tree(&[("long.c", LONG)]);
        let child = Command::new(env!("CARGO_BIN_EXE_fensyn"))
            .args(["fix", "--write", "--jobs", jobs, "long.c"])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        // SAFETY: sending a signal to our own child process.
        let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(sent, 0);
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(130),
            "jobs {jobs}: {}",
            stderr(&out)
        );
        let err = stderr(&out);
        assert!(
            err.contains("fensyn: interrupted: long.c: at least "),
            "jobs {jobs}: {err}"
        );
        assert!(err.contains("executions explored so far"), "{err}");
        // The totals come from the explorer's progress hook, with one job or several.
        let n: u64 = err
            .split("at least ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .map(|n| n.replace(',', "").parse().unwrap())
            .unwrap();
        assert!(n > 0, "jobs {jobs}: {err}");
        assert!(err.contains("no file was written"), "{err}");
        assert!(stdout(&out).is_empty());
        let now = std::fs::read_to_string(dir.path().join("long.c")).unwrap();
        assert_eq!(now, LONG);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
}
