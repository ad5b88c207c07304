//! fensyn: repairs concurrent C and C++ programs by inserting the fewest, weakest C11 fences.
//!
//! Stages, data flowing one way (see ARCHITECTURE.md):
//! `frontend` → `ir` → `checker` → `trace` → `synth` → `rewrite` → `report` → `api` → `cli`.
//!
//! The library API is [`api`], re-exported here: parse a [`Source`] into a [`Unit`], then
//! [`check`] it (a [`Report`]) or [`fix`] it (a [`Repair`] whose edits are data). Nothing is
//! printed or written to disk; the `fensyn` command line (`cli`) renders these results.
//!
//! ```
//! use fensyn::{FixOptions, Options, Repair, Source};
//!
//! // Store buffering: both threads may read 0 unless a seq_cst fence separates each
//! // thread's store from its load.
//! let text = r#"
//! #include <assert.h>
//! #include <pthread.h>
//! #include <stdatomic.h>
//! atomic_int x, y;
//! int a, b;
//! void *t1(void *arg) {
//!     atomic_store_explicit(&x, 1, memory_order_relaxed);
//!     a = atomic_load_explicit(&y, memory_order_relaxed);
//!     return NULL;
//! }
//! void *t2(void *arg) {
//!     atomic_store_explicit(&y, 1, memory_order_relaxed);
//!     b = atomic_load_explicit(&x, memory_order_relaxed);
//!     return NULL;
//! }
//! int main(void) {
//!     pthread_t p1, p2;
//!     pthread_create(&p1, NULL, t1, NULL);
//!     pthread_create(&p2, NULL, t2, NULL);
//!     pthread_join(p1, NULL);
//!     pthread_join(p2, NULL);
//!     assert(!(a == 0 && b == 0));
//!     return 0;
//! }
//! "#;
//! let unit = Source::new("sb.c", text).parse()?;
//! let options = Options::default();
//!
//! let report = fensyn::check(&unit, &options)?;
//! assert!(report.is_buggy());
//!
//! match fensyn::fix(&unit, &options, &FixOptions::default())? {
//!     Repair::Fixed { solution, files, .. } => {
//!         assert_eq!(solution.fences.len(), 2);
//!         // The rewritten main file, and the edits that made it.
//!         assert_eq!(files[0].edits.len(), 2);
//!         assert!(files[0].text.contains("atomic_thread_fence(memory_order_seq_cst);"));
//!         assert!(unit.patch(&files, None).starts_with("--- a/sb.c"));
//!     }
//!     _ => panic!("store buffering is fixed by two fences"),
//! }
//! # Ok::<(), fensyn::frontend::Diagnostic>(())
//! ```

pub mod api;
pub mod checker;
pub mod cli;
pub mod frontend;
pub mod ir;
pub mod report;
pub mod rewrite;
pub mod suppress;
pub mod synth;
pub mod trace;

pub use api::{check, fix, FixOptions, Options, Repair, Report, Source, Unit};
