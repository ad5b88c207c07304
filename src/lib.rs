//! fensyn: repairs concurrent C programs by inserting the fewest, weakest C11 fences.
//!
//! Stages, data flowing one way (see ARCHITECTURE.md):
//! `frontend` → `ir` → `checker` → `trace` → `synth` → `rewrite` → `report` → `cli`.

pub mod checker;
pub mod cli;
pub mod frontend;
pub mod ir;
pub mod report;
pub mod rewrite;
pub mod suppress;
pub mod synth;
pub mod trace;
