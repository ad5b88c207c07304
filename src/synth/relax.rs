//! `relax`: the search for a maximal relaxation of a correct program's memory orders.
//!
//! The search knows nothing about programs: it moves *items* (atomic accesses and program
//! fences) down their lattices and asks a verifier whether a configuration (one level per item)
//! is clean. The lattices, weakest last:
//!
//! * store: seq_cst → release → relaxed; load: seq_cst → acquire → relaxed;
//! * read-modify-write and compare-and-swap (its success order): seq_cst → acq_rel →
//!   acquire | release → relaxed;
//! * fence: seq_cst → acq_rel → acquire | release → removed (a relaxed fence, a no-op, is one
//!   step above removed); a fence without an order argument (`__sync_synchronize()`): kept or
//!   removed.
//!
//! **Monotonicity.** Weakening an order only removes synchronisation (sw, hb, psc shrink), so
//! the consistent executions of a weaker configuration include those of a stronger one: if a
//! configuration is buggy every pointwise weaker one is, and if it is clean every stronger
//! one is. [`Memo`] keeps the verdicts and answers from them without a check when it can.
//!
//! **Greedy order.** One pass over the items in source order, each weakened one step at a time
//! as long as the program stays clean with the items before it already fixed (at a
//! read-modify-write's fork, acquire is tried before release). Then a confirming pass asks,
//! for every item, whether one more step is clean (the maximality test). By monotonicity the
//! memo answers every such question without a check (each configuration is weaker than one
//! the greedy pass found buggy: the items after it only got weaker since); a question the memo
//! cannot answer is checked, and a clean answer weakens that item and runs the pass again. The
//! tests re-check maximality without the memo (`tests/relax.rs`).
//!
//! An *inconclusive* verdict (the check hit a limit or cut a loop at its bound) is never
//! taken as clean and never memoised: the item keeps its stronger order.

use crate::ir::MemOrder;
use crate::trace::orders::AccessKind;

/// What is being relaxed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    Access(AccessKind),
    /// A program fence; `argument`: it has an order argument (else it can only be removed).
    Fence {
        argument: bool,
    },
}

/// An item's order; `None`: a removed fence.
pub type Level = Option<MemOrder>;

impl Item {
    pub fn name(self) -> &'static str {
        match self {
            Item::Access(k) => k.name(),
            Item::Fence { .. } => "fence",
        }
    }

    /// The levels one step below `level`, in the order they are tried.
    pub fn steps(self, level: Level) -> Vec<Level> {
        let Some(o) = level else {
            return Vec::new();
        };
        match self {
            Item::Access(k) => {
                let mut w = k.one_step_weaker(o);
                // acquire before release at a read-modify-write's fork.
                w.sort_by_key(|&m| m != MemOrder::Acquire);
                w.into_iter().map(Some).collect()
            }
            Item::Fence { argument: false } => vec![None],
            Item::Fence { argument: true } => {
                if o == MemOrder::Relaxed {
                    return vec![None];
                }
                let mut w = AccessKind::Rmw.one_step_weaker(o);
                w.sort_by_key(|&m| m != MemOrder::Acquire);
                w.into_iter()
                    .map(|m| (m != MemOrder::Relaxed).then_some(m))
                    .collect()
            }
        }
    }

    /// The weight of `level` (rel = acq = 1, acq_rel = 2, sc = 3, relaxed and removed 0).
    pub fn weight(level: Level) -> u32 {
        level.map_or(0, MemOrder::fence_weight)
    }
}

/// `a ⊑ b` on levels (a removed fence is below every order).
pub fn level_le(a: Level, b: Level) -> bool {
    match (a, b) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(x), Some(y)) => x.le(y),
    }
}

/// `a ⊑ b` pointwise.
fn config_le(a: &[Level], b: &[Level]) -> bool {
    a.iter().zip(b).all(|(&x, &y)| level_le(x, y))
}

/// What a verifier says about a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Clean,
    Buggy,
    /// Not proved either way (a limit, a loop cut at its bound): treated as not clean.
    Inconclusive,
}

/// The verdicts found so far, and what monotonicity concludes from them.
#[derive(Clone, Debug, Default)]
pub struct Memo {
    clean: Vec<Vec<Level>>,
    buggy: Vec<Vec<Level>>,
}

impl Memo {
    /// The verdict the memo implies for `c`, if any.
    pub fn implied(&self, c: &[Level]) -> Option<Verdict> {
        if self.buggy.iter().any(|b| config_le(c, b)) {
            return Some(Verdict::Buggy);
        }
        if self.clean.iter().any(|k| config_le(k, c)) {
            return Some(Verdict::Clean);
        }
        None
    }

    fn record(&mut self, c: &[Level], v: Verdict) {
        match v {
            Verdict::Clean => self.clean.push(c.to_vec()),
            Verdict::Buggy => self.buggy.push(c.to_vec()),
            Verdict::Inconclusive => {}
        }
    }
}

/// The result of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The level of every item.
    pub levels: Vec<Level>,
    /// Checks the verifier ran, per item (the item being weakened when it ran).
    pub checks: Vec<usize>,
    /// Verdicts monotonicity gave without a check.
    pub implied: usize,
    /// Checks that were inconclusive (their weakening was not taken).
    pub inconclusive: usize,
}

/// A configuration's verifier.
pub type Verifier<'a> = dyn FnMut(&[Level]) -> Verdict + 'a;

struct Search<'a, 'v> {
    items: &'a [Item],
    verify: &'a mut Verifier<'v>,
    memo: Memo,
    out: Outcome,
}

impl Search<'_, '_> {
    /// The verdict on `c` (item `i` being weakened): the memo's, else a check.
    fn judge(&mut self, c: &[Level], i: usize) -> Verdict {
        if let Some(v) = self.memo.implied(c) {
            self.out.implied += 1;
            return v;
        }
        let v = (self.verify)(c);
        self.out.checks[i] += 1;
        if v == Verdict::Inconclusive {
            self.out.inconclusive += 1;
        }
        self.memo.record(c, v);
        v
    }

    /// Weakens item `i` one step if some step is clean; whether it moved.
    fn step(&mut self, i: usize) -> bool {
        for s in self.items[i].steps(self.out.levels[i]) {
            let mut c = self.out.levels.clone();
            c[i] = s;
            if self.judge(&c, i) == Verdict::Clean {
                self.out.levels = c;
                return true;
            }
        }
        false
    }
}

/// The greedy maximal relaxation of `items` from `start` (which the caller verified clean).
pub fn greedy(items: &[Item], start: &[Level], verify: &mut Verifier) -> Outcome {
    let mut s = Search {
        items,
        verify,
        memo: Memo::default(),
        out: Outcome {
            levels: start.to_vec(),
            checks: vec![0; items.len()],
            implied: 0,
            inconclusive: 0,
        },
    };
    s.memo.record(start, Verdict::Clean);
    for i in 0..items.len() {
        while s.step(i) {}
    }
    // The confirming pass (maximality), repeated while it still weakens something.
    loop {
        let mut moved = false;
        for i in 0..items.len() {
            while s.step(i) {
                moved = true;
            }
        }
        if !moved {
            return s.out;
        }
    }
}

/// The price of an item at a level, minimised lexicographically (e.g. `(price, weight)`).
pub type Price<'a> = dyn Fn(usize, Level) -> (u32, u32) + 'a;

/// The relaxation of least total [`Price`] (`relax --optimal`), exact under monotonicity:
/// a depth-first branch and bound over the items in source order, each item's levels tried
/// weakest first. A branch is cut when its *optimistic* configuration — the items decided so
/// far, every later item as written (its strongest) — is buggy (every completion is weaker,
/// hence buggy), or when the price of the decided items alone reaches the best found; the
/// greedy relaxation is the first best. The optimistic configuration of a complete branch is
/// the configuration itself, so every result is verified clean. Exponential in the worst case
/// (the checks are counted); the memo answers what monotonicity already says.
pub fn optimal(items: &[Item], start: &[Level], verify: &mut Verifier, price: &Price) -> Outcome {
    let first = greedy(items, start, verify);
    let total = |c: &[Level]| -> (u32, u32) {
        c.iter().enumerate().fold((0, 0), |(a, b), (i, &l)| {
            let (x, y) = price(i, l);
            (a + x, b + y)
        })
    };
    let mut best = (total(&first.levels), first.levels.clone());
    let mut s = Search {
        items,
        verify,
        memo: Memo::default(),
        out: first,
    };
    s.memo.record(start, Verdict::Clean);
    let mut config = start.to_vec();
    branch(&mut s, &mut config, 0, price, &mut best);
    s.out.levels = best.1;
    s.out
}

/// Every level of item `i` down its lattice, weakest first (`start` included).
fn levels_below(item: Item, start: Level) -> Vec<Level> {
    let mut all = vec![start];
    let mut k = 0;
    while k < all.len() {
        for l in item.steps(all[k]) {
            if !all.contains(&l) {
                all.push(l);
            }
        }
        k += 1;
    }
    all.reverse();
    all
}

fn branch(
    s: &mut Search,
    config: &mut Vec<Level>,
    i: usize,
    price: &Price,
    best: &mut ((u32, u32), Vec<Level>),
) {
    if i == config.len() {
        let sum = config.iter().enumerate().fold((0, 0), |(a, b), (k, &l)| {
            let (x, y) = price(k, l);
            (a + x, b + y)
        });
        if sum < best.0 {
            *best = (sum, config.clone());
        }
        return;
    }
    let written = config[i];
    for l in levels_below(s.items[i], written) {
        config[i] = l;
        let decided = config[..=i]
            .iter()
            .enumerate()
            .fold((0, 0), |(a, b), (k, &l)| {
                let (x, y) = price(k, l);
                (a + x, b + y)
            });
        if decided >= best.0 {
            continue;
        }
        if s.judge(config, i) != Verdict::Clean {
            continue;
        }
        branch(s, config, i + 1, price, best);
    }
    config[i] = written;
}

/// The naive scheme greedy is measured against (docs/performance.md): every round checks every
/// one-step weakening of every item (no memo) and takes the first clean one; it stops after a
/// round with none. Same result as [`greedy`] when the verifier is monotone and every
/// lattice is a chain.
pub fn naive(items: &[Item], start: &[Level], verify: &mut Verifier) -> Outcome {
    let mut out = Outcome {
        levels: start.to_vec(),
        checks: vec![0; items.len()],
        implied: 0,
        inconclusive: 0,
    };
    loop {
        let mut next = None;
        for (i, item) in items.iter().enumerate() {
            for s in item.steps(out.levels[i]) {
                let mut c = out.levels.clone();
                c[i] = s;
                out.checks[i] += 1;
                let v = verify(&c);
                if v == Verdict::Inconclusive {
                    out.inconclusive += 1;
                }
                if v == Verdict::Clean && next.is_none() {
                    next = Some(c);
                }
            }
        }
        match next {
            Some(c) => out.levels = c,
            None => return out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemOrder::*;

    #[test]
    fn fence_steps() {
        let f = Item::Fence { argument: true };
        assert_eq!(f.steps(Some(SeqCst)), vec![Some(AcqRel)]);
        assert_eq!(f.steps(Some(AcqRel)), vec![Some(Acquire), Some(Release)]);
        assert_eq!(f.steps(Some(Release)), vec![None]);
        assert_eq!(f.steps(Some(Relaxed)), vec![None]);
        assert!(f.steps(None).is_empty());
        let sync = Item::Fence { argument: false };
        assert_eq!(sync.steps(Some(SeqCst)), vec![None]);
        let rmw = Item::Access(AccessKind::Rmw);
        assert_eq!(rmw.steps(Some(AcqRel)), vec![Some(Acquire), Some(Release)]);
    }

    /// A verifier from a set of minimal clean configurations (monotone by construction).
    fn upward(minimal: Vec<Vec<Level>>) -> impl FnMut(&[Level]) -> Verdict {
        move |c: &[Level]| {
            if minimal.iter().any(|m| config_le(m, c)) {
                Verdict::Clean
            } else {
                Verdict::Buggy
            }
        }
    }

    #[test]
    fn greedy_is_maximal_and_memo_saves_the_confirming_pass() {
        // Message passing: the store must stay release, the load acquire.
        let items = [
            Item::Access(AccessKind::Store),
            Item::Access(AccessKind::Load),
        ];
        let start = [Some(SeqCst), Some(SeqCst)];
        let mut v = upward(vec![vec![Some(Release), Some(Acquire)]]);
        let out = greedy(&items, &start, &mut v);
        assert_eq!(out.levels, vec![Some(Release), Some(Acquire)]);
        // store: release clean, relaxed buggy; load: acquire clean, relaxed buggy.
        assert_eq!(out.checks, vec![2, 2]);
        // The confirming pass: both answers implied.
        assert_eq!(out.implied, 2);
        let n = naive(&items, &start, &mut v);
        assert_eq!(n.levels, out.levels);
        assert!(n.checks.iter().sum::<usize>() > out.checks.iter().sum::<usize>());
    }

    #[test]
    fn an_inconclusive_check_keeps_the_order() {
        let items = [Item::Access(AccessKind::Load)];
        let mut v = |c: &[Level]| match c {
            [Some(SeqCst)] => Verdict::Clean,
            _ => Verdict::Inconclusive,
        };
        let out = greedy(&items, &[Some(SeqCst)], &mut v);
        assert_eq!(out.levels, vec![Some(SeqCst)]);
        // Never memoised: the confirming pass checks again.
        assert_eq!((out.checks[0], out.inconclusive), (2, 2));
    }

    #[test]
    fn optimal_finds_the_cheapest_of_two_maximal_relaxations() {
        // Either item may be weakened to relaxed, not both; the second is the dearer one.
        let items = [
            Item::Access(AccessKind::Store),
            Item::Access(AccessKind::Store),
        ];
        let start = [Some(SeqCst), Some(SeqCst)];
        let mut v = |c: &[Level]| match c {
            [Some(Relaxed), Some(Relaxed)] => Verdict::Buggy,
            _ => Verdict::Clean,
        };
        let g = greedy(&items, &start, &mut v);
        assert_eq!(g.levels, vec![Some(Relaxed), Some(Release)]);
        let price = |i: usize, l: Level| (Item::weight(l) * (i as u32 + 1), 0);
        let o = optimal(&items, &start, &mut v, &price);
        assert_eq!(o.levels, vec![Some(Release), Some(Relaxed)]);
    }
}
