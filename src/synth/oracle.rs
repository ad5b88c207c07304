//! "Does this assignment fix that requirement?", answered once.
//!
//! [`Requirement::fixed_by`] rebuilds the requirement's graph with the fences and checks it
//! (under rc11 with the explorer's incremental check, quadratic; under the other models by
//! recomputing every relation); the synthesis asks it many times (each solver round scans the requirements, clause
//! growth tries one site at a time, and the solution's description asks again per fence). Two
//! facts make most of those questions free:
//!
//! * the answer depends only on the assignment's orders at the candidate sites the requirement's
//!   graph passes (its *relevant* sites): other fences are not in its graph. Answers are
//!   memoised per requirement under that restriction;
//! * fixing is up-closed (trace's monotonicity: more or stronger fences never un-fix): if a
//!   known fixing restriction is below the asked one, it fixes too; if the asked one is below a
//!   known non-fixing restriction, it does not fix.
//!
//! * no fence at all in its graph never fixes a requirement: it is a consistent buggy prefix
//!   (the explorer's invariant).
//!
//! Only the yes/no answer ([`Oracle::fixes`]) uses the closure; how an assignment fixes a
//! requirement ([`Oracle::how`], the violation printed with each fence) is always the exact
//! result of `fixed_by` for that assignment (a larger assignment may fix it another way).
//!
//! The lazy search solves a new 0/1 program each round over the same requirements plus one
//! (on the input program, with a candidate-site list that may grow), and describes the final
//! fences with another oracle. [`Answers`] carries the exact answers from one oracle to the
//! next: keyed per requirement by the fences its graph passes (sites, not site indices), they
//! do not depend on the site list. Without it each round re-checked every requirement.

use crate::checker::Model;
use crate::ir::MemOrder;
use crate::trace::orders::AccessSites;
use crate::trace::{Assignment, Candidate, Requirement, Site, Violation};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

/// An assignment restricted to one requirement's relevant sites: the fences it sets there,
/// by site (sorted; an absent site has no fence, or the program fence's own order). It is
/// what `fixed_by` depends on, whatever the oracle's list of candidate sites.
type Key = Vec<(Site, MemOrder)>;

/// How many known fixing and non-fixing restrictions are kept per requirement for the closure
/// (the memo keeps every answer; this only bounds the cost of a closure look-up).
const BOUNDS_KEPT: usize = 16;

#[derive(Default)]
struct Known {
    memo: HashMap<Key, Option<Violation>>,
    /// Minimal fixing restrictions seen (none below another).
    fixers: Vec<Key>,
    /// Maximal non-fixing restrictions seen.
    non_fixers: Vec<Key>,
}

/// `a ≤ b` pointwise (absent is the bottom: no fence, or the program fence's own order).
fn below(a: &Key, b: &Key) -> bool {
    let mut b = b.iter().peekable();
    a.iter().all(|&(site, x)| {
        while b.next_if(|&&(s, _)| s < site).is_some() {}
        // The lattice order (not the derived `PartialOrd`, which is total).
        b.next_if(|&&(s, _)| s == site)
            .is_some_and(|&(_, y)| MemOrder::le(x, y))
    })
}

/// What the oracles of one search know, per requirement (indexed like the requirement list
/// they are given). One oracle owns its own; the lazy search shares one between its rounds'
/// oracles (see the module docs): their requirements must keep their indices (the lazy search
/// only appends), all on one program, under one model and one set of access sites.
#[derive(Default)]
pub(super) struct Answers(RefCell<Vec<Known>>);

pub(super) struct Oracle<'a> {
    model: Model,
    reqs: &'a [Requirement],
    /// The accesses whose orders the assignments may raise (none for `--by fences`).
    acc: &'a AccessSites,
    sites: Vec<Site>,
    /// Per requirement, the indices (into `sites`) of the candidate sites its graph passes.
    relevant: Vec<Vec<usize>>,
    /// What this oracle knows ...
    own: Answers,
    /// ... unless the search shares what its oracles know.
    shared: Option<&'a Answers>,
    /// `fixed_by` calls made (the rest were answered by the memo or the closure).
    pub(super) checks: std::cell::Cell<usize>,
}

impl<'a> Oracle<'a> {
    pub(super) fn new(
        model: Model,
        reqs: &'a [Requirement],
        sites: &[Candidate],
        acc: &'a AccessSites,
    ) -> Self {
        let relevant = reqs
            .iter()
            .map(|r| {
                let accesses = acc.passed(&r.graph);
                let slots: BTreeSet<_> = r
                    .graph
                    .threads
                    .iter()
                    .flat_map(|t| t.slots.iter().map(|&(s, _)| s))
                    .collect();
                let fences = r.existing_fences();
                sites
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| match c.site {
                        Site::Slot(s) => slots.contains(&s),
                        Site::Existing(st) => fences.contains_key(&st) || accesses.contains(&st),
                    })
                    .map(|(i, _)| i)
                    .collect()
            })
            .collect();
        Oracle {
            model,
            reqs,
            acc,
            sites: sites.iter().map(|c| c.site).collect(),
            relevant,
            own: Answers::default(),
            shared: None,
            checks: std::cell::Cell::new(0),
        }
    }

    /// This oracle, taking what it knows from `answers` and keeping what it learns there
    /// (`None`: on its own).
    pub(super) fn sharing(mut self, answers: Option<&'a Answers>) -> Self {
        self.shared = answers;
        self
    }

    /// What is known of requirement `ri`, mutably or not (`with`).
    fn known<T>(&self, ri: usize, with: impl FnOnce(&mut Known) -> T) -> T {
        let mut all = self.shared.unwrap_or(&self.own).0.borrow_mut();
        if all.len() <= ri {
            all.resize_with(ri + 1, Known::default);
        }
        with(&mut all[ri])
    }

    /// Whether requirement `ri`'s graph passes candidate site `i`: only then can the fence at
    /// `i` matter to it.
    pub(super) fn passes(&self, ri: usize, i: usize) -> bool {
        self.relevant[ri].binary_search(&i).is_ok()
    }

    fn key(&self, ri: usize, a: &Assignment) -> Key {
        let mut key: Key = self.relevant[ri]
            .iter()
            .filter_map(|&i| a.get(self.sites[i]).map(|o| (self.sites[i], o)))
            .collect();
        key.sort_unstable_by_key(|&(s, _)| s);
        key
    }

    /// `fixed_by`, computed and remembered (with the closure bounds updated).
    fn compute(&self, ri: usize, key: Key, a: &Assignment) -> Option<Violation> {
        let v = self.reqs[ri].fixed_by_with(a, self.model, self.acc);
        self.checks.set(self.checks.get() + 1);
        self.known(ri, |k| {
            debug_assert!(
                !k.non_fixers.iter().any(|n| v.is_some() && below(&key, n))
                    && !k.fixers.iter().any(|f| v.is_none() && below(f, &key)),
                "fixed_by is not monotone on requirement {ri}"
            );
            if v.is_some() {
                k.fixers.retain(|f| !below(&key, f));
                if k.fixers.len() < BOUNDS_KEPT {
                    k.fixers.push(key.clone());
                }
            } else {
                k.non_fixers.retain(|n| !below(n, &key));
                if k.non_fixers.len() < BOUNDS_KEPT {
                    k.non_fixers.push(key.clone());
                }
            }
            k.memo.insert(key, v);
        });
        v
    }

    /// Whether `a` fixes requirement `ri` (exact: by memo, closure, or `fixed_by`).
    pub(super) fn fixes(&self, ri: usize, a: &Assignment) -> bool {
        let key = self.key(ri, a);
        if key.is_empty() {
            // No fence in its graph: a requirement is a consistent prefix of an execution the
            // explorer found buggy, so it stays buggy (checked in debug builds).
            debug_assert!(
                self.reqs[ri]
                    .fixed_by_with(a, self.model, self.acc)
                    .is_none(),
                "requirement {ri} is fixed without fences"
            );
            return false;
        }
        let known = self.known(ri, |k| {
            if let Some(v) = k.memo.get(&key) {
                return Some(v.is_some());
            }
            if k.fixers.iter().any(|f| below(f, &key)) {
                return Some(true);
            }
            k.non_fixers.iter().any(|n| below(&key, n)).then_some(false)
        });
        known.unwrap_or_else(|| self.compute(ri, key, a).is_some())
    }

    /// How `a` fixes requirement `ri` (`fixed_by`'s exact answer, memoised).
    pub(super) fn how(&self, ri: usize, a: &Assignment) -> Option<Violation> {
        let key = self.key(ri, a);
        match self.known(ri, |k| k.memo.get(&key).copied()) {
            Some(v) => v,
            None => self.compute(ri, key, a),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemOrder::*;

    #[test]
    fn below_is_the_lattice_order() {
        let (a, b) = (Site::Slot(1), Site::Slot(2));
        // Acquire and release are incomparable, whatever the derived (total) order says.
        assert!(!below(&vec![(a, Acquire)], &vec![(a, Release)]));
        assert!(!below(&vec![(a, Release)], &vec![(a, Acquire)]));
        assert!(below(&vec![(a, Acquire)], &vec![(a, AcqRel)]));
        // An absent site is the bottom.
        assert!(below(&vec![(b, Release)], &vec![(a, Acquire), (b, SeqCst)]));
        assert!(below(&vec![], &vec![(a, Acquire)]));
        assert!(!below(&vec![(a, Acquire)], &vec![]));
        assert!(!below(&vec![(a, Acquire)], &vec![(b, SeqCst)]));
        assert!(!below(&vec![(b, Acquire)], &vec![(a, SeqCst)]));
        assert!(!below(
            &vec![(a, Acquire), (b, Acquire)],
            &vec![(a, SeqCst)]
        ));
    }
}
