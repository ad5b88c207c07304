//! The integer constants the lowering knows by name: GCC's `__ATOMIC_RELAXED` …
//! `__ATOMIC_SEQ_CST` (which the preprocessor passes through, see `preprocess/system.rs`) and
//! the `-D` integers, among them fensyn's own (`--nondet`'s domain, read by name). Every
//! user macro is replaced by the preprocessor before the lowering runs; a `-D` macro too, so
//! only fensyn's own names and the `__ATOMIC_*` reach the lowering as identifiers.

use super::types::IntTy;
use super::Ctx;

/// The C type of a macro's value: `int` if it fits, else `long`.
pub(crate) fn macro_ty(v: i64) -> IntTy {
    if i32::try_from(v).is_ok() {
        IntTy::I32
    } else {
        IntTy::I64
    }
}

impl Ctx<'_> {
    /// The value of the constant `name`, if it is one.
    pub(crate) fn macro_value_of(&self, name: &str) -> Option<i64> {
        self.macros.get(name).copied()
    }
}
