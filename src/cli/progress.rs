//! The live progress display and Ctrl-C.
//!
//! Every exploration reports its running totals through the checker's progress hook
//! ([`start`]); the hook only stores them in atomics, so it costs nothing measurable and works
//! the same with `--jobs N` (the parallel explorer's workers call it as they visit executions).
//! A watcher thread ([`install`]) draws a spinner on stderr from those totals (executions,
//! rate, buggy, elapsed; a steady tick, so it moves even between reports) once a run has taken
//! a second, when stderr is a terminal and `--quiet` is off.
//!
//! SIGINT sets a flag (the handler does nothing else: it must be async-signal-safe); the
//! watcher sees it within 50 ms, clears the spinner, prints what was explored so far and exits
//! with 130. Files are only written under [`writing`]'s lock, which the watcher takes before
//! exiting: an interrupted `fix --write` has written every file or none, and never starts a
//! write after the interrupt.
//!
//! **Invariant:** nothing here changes what the explorer does or finds; the display goes to
//! stderr only.

use crate::checker::Progress;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: i32 = 130;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static DONE: AtomicU64 = AtomicU64::new(0);
static BUGGY: AtomicU64 = AtomicU64::new(0);
/// Executions of the runs that ended (a `fix` explores several times; a batch several files).
static EARLIER: AtomicU64 = AtomicU64::new(0);
/// Whether a spinner may be drawn (stderr is a terminal, not `--quiet`).
static DRAW: AtomicBool = AtomicBool::new(false);

/// The run being explored: when it started and the file it is about.
struct Run {
    started: Instant,
    file: String,
}

static RUN: Mutex<Option<Run>> = Mutex::new(None);
static BAR: Mutex<Option<indicatif::ProgressBar>> = Mutex::new(None);
static WRITING: OnceLock<Mutex<()>> = OnceLock::new();
/// A file of the current input was written (under [`writing`]).
static WROTE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT handler and starts the watcher thread (once per process). `draw`:
/// whether the spinner may be shown.
pub fn install(draw: bool) {
    static ONCE: OnceLock<()> = OnceLock::new();
    DRAW.store(draw, Ordering::Relaxed);
    ONCE.get_or_init(|| {
        let handler = on_sigint as extern "C" fn(libc::c_int);
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        }
        let _ = std::thread::Builder::new()
            .name("fensyn-progress".into())
            .spawn(watch);
    });
}

/// The hook for one exploration of `file`: stores the running totals.
pub fn start(file: &str) -> Progress {
    if let Ok(mut run) = RUN.lock() {
        if run.is_none() {
            *run = Some(Run {
                started: Instant::now(),
                file: file.to_string(),
            });
        }
    }
    DONE.store(0, Ordering::Relaxed);
    BUGGY.store(0, Ordering::Relaxed);
    Progress(Arc::new(|done, buggy| {
        DONE.store(done, Ordering::Relaxed);
        BUGGY.store(buggy, Ordering::Relaxed);
    }))
}

/// Ends the display of the current exploration (the next one of the same file continues its
/// clock; another file starts its own).
pub fn finish() {
    EARLIER.fetch_add(DONE.swap(0, Ordering::Relaxed), Ordering::Relaxed);
    if let Ok(mut bar) = BAR.lock() {
        if let Some(b) = bar.take() {
            b.finish_and_clear();
        }
    }
}

/// Forgets the file's clock (called between the files of a batch).
pub fn next_file() {
    finish();
    EARLIER.store(0, Ordering::Relaxed);
    WROTE.store(false, Ordering::SeqCst);
    if let Ok(mut run) = RUN.lock() {
        *run = None;
    }
}

/// Held while files are written: Ctrl-C waits for it and then exits, so a write is never
/// interrupted half-way nor started after the interrupt.
pub fn writing() -> std::sync::MutexGuard<'static, ()> {
    let m = WRITING.get_or_init(|| Mutex::new(()));
    let guard = m.lock().unwrap_or_else(|e| e.into_inner());
    WROTE.store(true, Ordering::SeqCst);
    guard
}

/// `12,288 executions`: thousands separated, for the display.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The spinner's message: `sb.c: 12,288 executions (4,096/s), 31 buggy, 0:03`.
fn message(file: &str, elapsed: Duration) -> String {
    let done = DONE.load(Ordering::Relaxed) + EARLIER.load(Ordering::Relaxed);
    let rate = done as f64 / elapsed.as_secs_f64().max(1e-3);
    let secs = elapsed.as_secs();
    format!(
        "{file}: {} executions ({}/s), {} buggy, {}:{:02}",
        grouped(done),
        grouped(rate as u64),
        grouped(BUGGY.load(Ordering::Relaxed)),
        secs / 60,
        secs % 60
    )
}

fn watch() {
    loop {
        std::thread::sleep(Duration::from_millis(50));
        if INTERRUPTED.load(Ordering::SeqCst) {
            interrupted();
        }
        let Some((file, elapsed)) = RUN
            .lock()
            .ok()
            .and_then(|r| r.as_ref().map(|r| (r.file.clone(), r.started.elapsed())))
        else {
            continue;
        };
        if !DRAW.load(Ordering::Relaxed) || elapsed < Duration::from_secs(1) {
            continue;
        }
        if let Ok(mut bar) = BAR.lock() {
            let bar = bar.get_or_insert_with(|| {
                let b = indicatif::ProgressBar::new_spinner();
                if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg}") {
                    b.set_style(style);
                }
                b.enable_steady_tick(Duration::from_millis(100));
                b
            });
            bar.set_message(message(&file, elapsed));
        }
    }
}

/// Ctrl-C: clears the spinner, says what was explored and exits with 130 (after any write in
/// progress has finished; no write starts after it).
fn interrupted() -> ! {
    let m = WRITING.get_or_init(|| Mutex::new(()));
    let _no_more_writes = m.lock().unwrap_or_else(|e| e.into_inner());
    if let Ok(mut bar) = BAR.lock() {
        if let Some(b) = bar.take() {
            b.finish_and_clear();
            // The terminal may have echoed `^C` after the spinner: start on a clean line.
            eprint!("\r\x1b[2K");
        }
    }
    let file = RUN
        .lock()
        .ok()
        .and_then(|r| r.as_ref().map(|r| r.file.clone()));
    let done = DONE.load(Ordering::Relaxed) + EARLIER.load(Ordering::Relaxed);
    let written = if WROTE.load(Ordering::SeqCst) {
        "its fix was written before the interrupt"
    } else {
        "no file was written"
    };
    let what = match file {
        Some(f) => format!(
            "{f}: at least {} executions explored so far, {} of them buggy; {written}",
            grouped(done),
            grouped(BUGGY.load(Ordering::Relaxed)),
        ),
        None => "before any exploration; no file was written".to_string(),
    };
    eprintln!("fensyn: interrupted: {what}");
    std::process::exit(EXIT_INTERRUPTED);
}
