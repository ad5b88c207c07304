//! Repair by memory orders (`fix --by orders|both`): what may change and what it costs.
//!
//! A fix by orders strengthens atomic accesses (and program fences) instead of inserting
//! fences; `both` lets the 0/1 program mix the two. An access candidate is a
//! [`crate::trace::Site::Existing`] of its statement ([`crate::trace::orders`]), evaluated
//! exactly on each requirement's graph, so the same hitting-set loop gives the optimum.
//!
//! The objective (`--cost count`, the default), minimised lexicographically:
//! 1. changed accesses + new fences (a strengthened program fence counts 0, as in `--by
//!    fences`);
//! 2. the weight increase (rel = acq = 1, acq_rel = 2, sc = 3, for accesses as for fences:
//!    relaxed → release costs 1, relaxed → seq_cst 3);
//! 3. new fences (between equal fixes, changing orders is preferred to inserting fences).
//!
//! `--cost weight` swaps 1 and 2; `--cost x86|armv8` puts the instruction price first
//! ([`access_price`]).

use super::{Mode, SynthOptions};
use crate::ir::{MemOrder, StmtId};
use crate::trace::orders::AccessKind;
use crate::trace::Violation;

/// What a fix may change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// Insert fences (and strengthen program fences).
    #[default]
    Fences,
    /// Strengthen atomic accesses and program fences; insert nothing.
    Orders,
    /// Either, whichever is cheaper.
    Both,
}

impl By {
    pub fn name(self) -> &'static str {
        match self {
            By::Fences => "fences",
            By::Orders => "orders",
            By::Both => "both",
        }
    }

    /// Whether accesses may change.
    pub fn orders(self) -> bool {
        self != By::Fences
    }

    /// Whether new fences may be inserted.
    pub fn fences(self) -> bool {
        self != By::Orders
    }
}

/// One access a fix strengthens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessChange {
    pub stmt: StmtId,
    pub kind: AccessKind,
    pub previous: MemOrder,
    pub order: MemOrder,
    /// The requirements (indices) that need this change, and how each is then violated.
    pub needed_by: Vec<(usize, Violation)>,
}

/// The options a fix by orders runs with: the optimal search only (the fast and lazy loops
/// insert fences into the program between rounds, and know no access orders), without the
/// collection limit. `Err`: the mode asked for cannot give a fix by orders.
pub fn options_for(by: By, opts: SynthOptions) -> Result<SynthOptions, String> {
    if !by.orders() {
        return Ok(SynthOptions { by, ..opts });
    }
    match opts.mode {
        Mode::Fast | Mode::Lazy => Err(format!(
            "--by {} needs the optimal search: --mode {} cannot strengthen accesses",
            by.name(),
            opts.mode.name()
        )),
        Mode::Auto | Mode::Optimal => Ok(SynthOptions {
            by,
            mode: Mode::Optimal,
            collect_limit: usize::MAX,
            ..opts
        }),
    }
}

/// The weight of an access order (as a fence's: rel = acq = 1, acq_rel = 2, sc = 3).
pub fn weight(o: MemOrder) -> u32 {
    o.fence_weight()
}

/// The instruction price of an access of `kind` with order `o` under `cost`: on x86 a seq_cst
/// store is an `xchg` (or `mov` + `mfence`), priced 1, every other access a plain `mov` or an
/// already locked instruction (0); on ARMv8 an acquire, release or seq_cst access is
/// `ldar`/`stlr` (or the acquire/release RMW forms), priced 1 — below a `dmb ish` (2).
pub fn access_price(cost: super::Cost, kind: AccessKind, o: MemOrder) -> u32 {
    use super::Cost;
    match cost {
        Cost::Count | Cost::Weight => 0,
        Cost::X86 => u32::from(kind == AccessKind::Store && o == MemOrder::SeqCst),
        Cost::Armv8 => u32::from(o != MemOrder::Relaxed && o.is_atomic()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::Cost;

    #[test]
    fn orders_need_the_optimal_search() {
        let base = SynthOptions::default();
        let o = options_for(By::Orders, base).unwrap();
        assert_eq!(
            (o.mode, o.by, o.collect_limit),
            (Mode::Optimal, By::Orders, usize::MAX)
        );
        let fast = SynthOptions {
            mode: Mode::Fast,
            ..base
        };
        assert!(options_for(By::Both, fast).is_err());
        assert_eq!(options_for(By::Fences, fast).unwrap().mode, Mode::Fast);
    }

    #[test]
    fn prices() {
        use MemOrder::*;
        assert_eq!(access_price(Cost::X86, AccessKind::Store, SeqCst), 1);
        assert_eq!(access_price(Cost::X86, AccessKind::Load, SeqCst), 0);
        assert_eq!(access_price(Cost::Armv8, AccessKind::Load, Acquire), 1);
        assert_eq!(access_price(Cost::Armv8, AccessKind::Store, Relaxed), 0);
    }
}
