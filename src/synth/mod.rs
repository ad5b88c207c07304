//! Fence synthesis: the cheapest fence assignment that fixes every buggy execution
//! (shared/docs/memory-models.md §4–5; thesis Chapter 6, FenSyng and fastFenSyng).
//!
//! # Method
//!
//! Each bug of each buggy graph is a [`Requirement`]; the set of assignments that fix it is
//! up-closed (monotonicity). Instead of enumerating cycles, the optimal mode runs an implicit
//! hitting-set loop:
//!
//! 1. solve a 0/1 program (good_lp + microlp) for the cheapest assignment satisfying the clauses
//!    found so far (none at first);
//! 2. find a requirement the assignment does not fix; if there is none, the assignment is
//!    optimal: it is the cheapest one satisfying a subset of the true constraints and it
//!    satisfies all of them;
//! 3. otherwise grow the assignment greedily to a maximal one that still leaves the requirement
//!    unfixed; every fix must use some (site, order) outside it — that is a new clause.
//!
//! The fast mode (fastFenSyng) fixes one requirement at a time with the same solver while keeping
//! earlier choices, which may end with more fences than the optimum.
//!
//! Cost (thesis Definition 9): first the number of new fences, then the sum of weights
//! (rel = acq = 1, acq_rel = 2, sc = 3); strengthening a program fence adds no fence and costs its
//! weight increase (thesis §6.6).

use crate::checker::{ExecutionGraph, Model};
use crate::ir::{MemOrder, Program};
use crate::trace::{
    candidate_sites, requirements, Assignment, Candidate, Requirement, Site, Violation,
};
pub mod fast;
mod oracle;
pub mod orders;
pub mod relax;
use crate::trace::orders::AccessSites;
use oracle::Oracle;

use good_lp::{
    microlp, variable, Expression, ProblemVariables, Solution as _, SolverModel, Variable,
};

/// Optimal (FenSyng), one trace at a time (fastFenSyng), optimal with a time limit and the
/// fast mode as fallback (the default), or optimal with the requirements discovered one buggy
/// execution at a time (`Lazy`, see `synth::fast::Search::lazy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Auto,
    Optimal,
    Fast,
    Lazy,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Optimal => "optimal",
            Mode::Fast => "fast",
            Mode::Lazy => "lazy",
        }
    }
}

/// How long the optimal mode may run in [`Mode::Auto`] before falling back to the fast one, by
/// default.
pub const AUTO_OPTIMAL_SECONDS: u64 = 20;

/// What the synthesis minimises and how.
#[derive(Clone, Copy, Debug)]
pub struct SynthOptions {
    pub mode: Mode,
    pub cost: Cost,
    /// In [`Mode::Auto`]: how long the optimal search may run before the fast mode is used.
    pub optimal_limit: std::time::Duration,
    /// Optimal mode: past this many distinct requirements (or ten times as many buggy
    /// executions) the collection stops, and the requirements left are found in rounds as
    /// `--mode lazy` finds them, starting from the cheapest fences for those collected. The
    /// result is the same minimum; memory stays bounded.
    pub collect_limit: usize,
    /// What a fix may change: fences, access orders or both (`fix --by`; see [`orders`]).
    pub by: orders::By,
}

/// The default [`SynthOptions::collect_limit`]: a requirement takes about 10 KB, and past a
/// thousand the rounds of the lazy search cost less than collecting every execution.
pub const COLLECT_LIMIT: usize = 1_000;

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            mode: Mode::Auto,
            cost: Cost::Count,
            optimal_limit: std::time::Duration::from_secs(AUTO_OPTIMAL_SECONDS),
            collect_limit: COLLECT_LIMIT,
            by: orders::By::Fences,
        }
    }
}

/// What a fence set costs, minimised lexicographically (the first component first).
///
/// | cost | minimises | fence prices (acq, rel, acq_rel, sc) |
/// |---|---|---|
/// | `count` (default; the thesis's Definition 9) | new fences, then weight | weight 1, 1, 2, 3 |
/// | `weight` (the alternative the thesis discusses) | weight, then new fences | 1, 1, 2, 3 |
/// | `x86` | instructions, then new fences, then weight | 0, 0, 0, 1 (`mfence`) |
/// | `armv8` | instructions, then new fences, then weight | 1 (`dmb ishld`), 2, 2, 2 (`dmb ish`) |
///
/// Strengthening a program fence adds no fence and costs the price difference. On x86
/// acquire, release and acq_rel fences compile to nothing; on ARMv8 an acquire fence is the
/// cheaper load barrier `dmb ishld` (priced 1) and the others a full `dmb ish` (priced 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cost {
    #[default]
    Count,
    Weight,
    X86,
    Armv8,
}

impl Cost {
    pub fn name(self) -> &'static str {
        match self {
            Cost::Count => "count",
            Cost::Weight => "weight",
            Cost::X86 => "x86",
            Cost::Armv8 => "armv8",
        }
    }

    /// The hardware price of a fence of order `o` (0 for the abstract cost models).
    pub fn price(self, o: MemOrder) -> u32 {
        match (self, o) {
            (_, MemOrder::NonAtomic | MemOrder::Relaxed) => 0,
            (Cost::X86, MemOrder::SeqCst) => 1,
            (Cost::X86, _) => 0,
            (Cost::Armv8, MemOrder::Acquire) => 1,
            (Cost::Armv8, _) => 2,
            (Cost::Count | Cost::Weight, _) => 0,
        }
    }
}

/// One fence of a solution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fence {
    pub site: Site,
    pub order: MemOrder,
    /// For a strengthened program fence: its order before.
    pub previous: Option<MemOrder>,
    /// The requirements (indices) that need this fence, and how each is then violated.
    pub needed_by: Vec<(usize, Violation)>,
}

/// A fence set that fixes every requirement.
#[derive(Clone, Debug)]
pub struct Solution {
    pub fences: Vec<Fence>,
    pub assignment: Assignment,
    pub inserted: usize,
    pub strengthened: usize,
    pub weight: u32,
    /// The hardware price under the chosen [`Cost`] (0 for `count` and `weight`).
    pub price: u32,
    /// Solver rounds (optimal: hitting-set iterations; fast: requirements fixed one by one).
    pub iterations: usize,
    /// The mode that produced the solution: `Mode::Auto` runs as `Optimal`, or as `Fast` when
    /// the optimal search ran out of time.
    pub mode: Mode,
    /// The requirements the solution fixes; `Fence::needed_by` indexes into them.
    pub requirements: Vec<Requirement>,
    /// The accesses whose orders the fix strengthens (`fix --by orders|both`; never in
    /// `fences`, which holds fences only).
    pub accesses: Vec<orders::AccessChange>,
    /// Optimal mode past its collection limit ([`SynthOptions::collect_limit`]): how many
    /// requirements were collected before the rest were found in rounds, as `--mode lazy`
    /// finds them (`iterations` counts the rounds, the collection being the first).
    pub lazy_after: Option<usize>,
}

/// Why no fence set fixes the program.
#[derive(Clone, Debug)]
pub struct Unfixable {
    pub requirement: Requirement,
    pub reason: String,
    /// A stronger order for one access that would forbid the execution (with fences), if one
    /// exists: a suggestion outside the fence-only fix.
    pub suggestion: Option<Suggestion>,
}

/// Strengthening the access of statement `stmt` from `previous` to `order` (together with
/// seq_cst fences) makes the unfixable execution inconsistent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Suggestion {
    pub stmt: crate::ir::StmtId,
    pub previous: MemOrder,
    pub order: MemOrder,
}

// One per synthesis, returned by value once: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Outcome {
    Fixed(Solution),
    Unfixable(Unfixable),
}

struct Problem<'a> {
    cost: Cost,
    reqs: &'a [Requirement],
    /// The accesses the assignments may strengthen (a [`Site::Existing`] of such a statement
    /// is an access, not a fence).
    acc: &'a AccessSites,
    sites: Vec<Candidate>,
    /// Every "does this assignment fix that requirement" goes through here (memoised).
    oracle: Oracle<'a>,
}

/// A solver round met a requirement that no assignment fixes.
struct NoFix;

/// Synthesises fences for the buggy graphs of `prog`, with the thesis's cost.
pub fn synthesize(prog: &Program, buggy: &[ExecutionGraph], model: Model, mode: Mode) -> Outcome {
    synthesize_with(prog, buggy, model, mode, Cost::Count)
}

/// Synthesises fences for the buggy graphs of `prog`, minimising `cost`.
pub fn synthesize_with(
    prog: &Program,
    buggy: &[ExecutionGraph],
    model: Model,
    mode: Mode,
    cost: Cost,
) -> Outcome {
    synthesize_opts(
        prog,
        buggy,
        model,
        &SynthOptions {
            mode,
            cost,
            ..SynthOptions::default()
        },
    )
}

/// Synthesises fences for the buggy graphs of `prog` as `opts` say.
pub fn synthesize_opts(
    prog: &Program,
    buggy: &[ExecutionGraph],
    model: Model,
    opts: &SynthOptions,
) -> Outcome {
    synthesize_requirements(prog, requirements(buggy, model), model, opts)
}

/// Synthesises fences that fix every one of `reqs` (built by [`requirements`] or, during
/// exploration, by [`crate::trace::collect`]), as `opts` say.
pub fn synthesize_requirements(
    prog: &Program,
    reqs: Vec<Requirement>,
    model: Model,
    opts: &SynthOptions,
) -> Outcome {
    let mode = opts.mode;
    let optimal_limit = opts.optimal_limit;
    solve_requirements(prog, reqs, model, (opts.cost, opts.by), move |p| {
        let solved = match mode {
            Mode::Optimal | Mode::Lazy => match p.solve_optimal(None) {
                Ok(Some((a, n))) => Ok((a, n, Mode::Optimal)),
                // Without a deadline the optimal search always finishes.
                Ok(None) => p.solve_fast().map(|(a, n)| (a, n, Mode::Optimal)),
                Err(e) => Err(e),
            },
            Mode::Fast => p.solve_fast().map(|(a, n)| (a, n, Mode::Fast)),
            Mode::Auto => {
                let deadline = std::time::Instant::now() + optimal_limit;
                match p.solve_optimal(Some(deadline)) {
                    Ok(Some((a, n))) => Ok((a, n, Mode::Optimal)),
                    Ok(None) => p.solve_fast().map(|(a, n)| (a, n, Mode::Fast)),
                    Err(e) => Err(e),
                }
            }
        };
        solved.map(Some)
    })
    .expect("every mode but a deadline-bounded one finishes")
}

/// The optimal synthesis over `reqs` (as [`Mode::Optimal`]) if its solver finishes before
/// `deadline`; `None` when the deadline passed first (`fix --mode auto` then runs the fast
/// loop, [`fast::fix`], on the program instead).
pub fn synthesize_optimal_until(
    prog: &Program,
    reqs: Vec<Requirement>,
    model: Model,
    cost: Cost,
    deadline: std::time::Instant,
) -> Option<Outcome> {
    solve_requirements(prog, reqs, model, (cost, orders::By::Fences), |p| {
        p.solve_optimal(Some(deadline))
            .map(|s| s.map(|(a, n)| (a, n, Mode::Optimal)))
    })
}

/// What a solve over one [`Problem`] gives: the assignment, its rounds and the mode that found
/// it (`Ok(None)`: a deadline passed), or `Err` when a requirement is unfixable.
type Solved = Result<Option<(Assignment, usize, Mode)>, NoFix>;

/// Builds the problem of `reqs`, solves it with `solve`, and describes the result (`None`:
/// `solve` gave up at its deadline).
fn solve_requirements(
    prog: &Program,
    reqs: Vec<Requirement>,
    model: Model,
    (cost, by): (Cost, orders::By),
    solve: impl FnOnce(&Problem) -> Solved,
) -> Option<Outcome> {
    let started = std::time::Instant::now();
    let acc = if by.orders() {
        AccessSites::of(prog)
    } else {
        AccessSites::none()
    };
    let mut sites = candidate_sites(prog, &reqs);
    if !by.fences() {
        sites.retain(|c| matches!(c.site, Site::Existing(_)));
    }
    let graphs: Vec<&ExecutionGraph> = reqs.iter().map(|r| &r.graph).collect();
    sites.extend(acc.candidate_sites(&graphs));
    let p = Problem {
        cost,
        reqs: &reqs,
        acc: &acc,
        oracle: Oracle::new(model, &reqs, &sites, &acc),
        sites,
    };
    let (assignment, iterations, used) = match solve(&p) {
        Ok(Some(x)) => x,
        Ok(None) => return None,
        Err(NoFix) => {
            // The strongest assignment leaves some requirement unfixed: nothing fixes it. The
            // first such requirement (in order) is the one reported.
            let ri = p
                .first_unfixable()
                .expect("a requirement the rounds found unfixable");
            return Some(Outcome::Unfixable(unfixable(
                &reqs[ri],
                p.sites.is_empty(),
                model,
            )));
        }
    };
    let solved = started.elapsed().as_secs_f64();
    let mut sol = p.describe(assignment, iterations);
    if std::env::var_os("FENSYN_DEBUG").is_some() {
        eprintln!(
            "synth: solved in {solved:.3} s, described in {:.3} s",
            started.elapsed().as_secs_f64() - solved
        );
        eprintln!(
            "synth: {} requirements ({} events, {} slots), {} candidate sites, {} rounds, {} fixed_by checks",
            reqs.len(),
            reqs.iter().map(|r| r.graph.len()).sum::<usize>(),
            reqs.iter().map(|r| r.graph.threads.iter().map(|t| t.slots.len()).sum::<usize>()).sum::<usize>(),
            p.sites.len(),
            iterations,
            p.oracle.checks.get()
        );
    }
    sol.mode = used;
    drop(p);
    sol.requirements = reqs;
    Some(Outcome::Fixed(sol))
}

/// The outcome for a requirement no fence set fixes (`no_sites`: no candidate site at all).
fn unfixable(r: &Requirement, no_sites: bool, model: Model) -> Unfixable {
    Unfixable {
        requirement: r.clone(),
        reason: unfixable_reason(r, no_sites),
        suggestion: suggest_access(r, model),
    }
}

/// The weakest single-access strengthening (an acquire read or release write, else seq_cst)
/// that, with a seq_cst fence at every position, makes the unfixable execution of `r`
/// inconsistent — for assertion failures only (a race or deadlock needs more than an order).
/// Parts of read-modify-writes are left alone (their orders come in pairs).
fn suggest_access(r: &Requirement, model: Model) -> Option<Suggestion> {
    use crate::checker::{BugKind, INIT_THREAD};
    let by_order = matches!(
        r.bug.kind,
        BugKind::Assertion | BugKind::Memory(crate::checker::MemoryError::UninitialisedRead)
    );
    if !by_order {
        return None;
    }
    let g0 = &r.graph;
    let (g, map) = g0.with_fences(&|_| Some(MemOrder::SeqCst), &|_| Some(MemOrder::SeqCst));
    let in_rmw = |e: usize| g0.rmw.iter().any(|&(a, b)| a == e || b == e);
    for (e, ev) in g0.events.iter().enumerate() {
        if ev.thread == INIT_THREAD || !ev.is_access() || !ev.order.is_atomic() || in_rmw(e) {
            continue;
        }
        let Some(stmt) = ev.stmt else { continue };
        let options = if ev.is_read() {
            [MemOrder::Acquire, MemOrder::SeqCst]
        } else {
            [MemOrder::Release, MemOrder::SeqCst]
        };
        for o in options {
            if o.le(ev.order) {
                continue;
            }
            let mut g2 = g.clone();
            g2.events[map[e]].order = o;
            if model.violation(&g2).is_some() {
                return Some(Suggestion {
                    stmt,
                    previous: ev.order,
                    order: o,
                });
            }
        }
    }
    None
}

fn unfixable_reason(r: &Requirement, no_sites: bool) -> String {
    if no_sites {
        return "no fence position lies between the events this bug depends on: it is a \
                plain logic error, not a reordering"
            .into();
    }
    match r.bug.kind {
        crate::checker::BugKind::Deadlock => "a deadlock is in the program's synchronisation \
             logic: fences order memory accesses but cannot make a thread release a lock, arrive \
             at a barrier or signal a condition variable"
            .into(),
        crate::checker::BugKind::Liveness => "a thread spins forever in a loop, waiting for a \
             write that no thread makes any more, even with a seq_cst fence at every position: \
             fences order memory accesses but cannot make a thread set a flag or release a lock \
             (the program's logic must change)"
            .into(),
        crate::checker::BugKind::Misuse => "a synchronisation object is misused: fences order \
             memory accesses but cannot make a use of a lock, barrier or condition variable valid"
            .into(),
        crate::checker::BugKind::Race => "the racing accesses stay unordered even with a seq_cst \
             fence at every position: fences only synchronise along reads-from edges, and in \
             this execution no read connects the two threads in the needed direction (the \
             access needs a guard, or the program needs stronger access orders)"
            .into(),
        crate::checker::BugKind::Memory(
            crate::checker::MemoryError::UseAfterFree
            | crate::checker::MemoryError::UseAfterReturn
            | crate::checker::MemoryError::DoubleFree,
        ) => "the object's lifetime ends while another thread can still use it, even with a \
              seq_cst fence at every position: fences cannot make a free wait for the other \
              threads' accesses (the program needs a reclamation scheme — reference counts, \
              hazard pointers, freeing after the join — or a different free)"
            .into(),
        _ => "the execution stays consistent even with a seq_cst fence at every position: the \
              memory model allows it whatever fences are added (the bug is in the program's \
              logic, or needs read-modify-writes or stronger access orders)"
            .into(),
    }
}

impl Problem<'_> {
    /// The first requirement not even the strongest assignment fixes.
    fn first_unfixable(&self) -> Option<usize> {
        let top = self.top();
        (0..self.reqs.len()).find(|&ri| !self.oracle.fixes(ri, &top))
    }

    fn top(&self) -> Assignment {
        let mut a = Assignment::default();
        for c in &self.sites {
            a.set(c.site, MemOrder::SeqCst);
        }
        a
    }

    /// The first requirement `a` does not fix; `Err` if not even the strongest assignment fixes
    /// it (the program is unfixable: every assignment is below the strongest one).
    fn unfixed(&self, a: &Assignment) -> Result<Option<usize>, NoFix> {
        match (0..self.reqs.len()).find(|&ri| !self.oracle.fixes(ri, a)) {
            Some(ri) if !self.oracle.fixes(ri, &self.top()) => Err(NoFix),
            found => Ok(found),
        }
    }

    /// A clause from a requirement `r` that `a` leaves unfixed: grow `a` to a maximal assignment
    /// still leaving `r` unfixed; every fix needs a (site, order) not below it.
    fn clause(&self, r: usize, a: &Assignment) -> Vec<(usize, MemOrder)> {
        let mut grown = a.clone();
        for (i, c) in self.sites.iter().enumerate() {
            let (s, options) = (&c.site, &c.orders);
            // A site r's graph does not pass cannot fix it: raise it to the top at once.
            if !self.oracle.passes(r, i) {
                if let Some(&o) = options.last() {
                    let cur = grown.get(*s);
                    grown.set(*s, cur.map_or(o, |c| c.join(o)));
                }
                continue;
            }
            // Try the strongest orders first; stop at the first that keeps r unfixed.
            for &o in options.iter().rev() {
                // Only ever raise: the grown assignment must stay above `a`.
                let cur = grown.get(*s);
                let raised = cur.map_or(o, |c| c.join(o));
                if cur == Some(raised) {
                    continue;
                }
                let mut trial = grown.clone();
                trial.set(*s, raised);
                if !self.oracle.fixes(r, &trial) {
                    grown = trial;
                    break;
                }
            }
        }
        let mut clause = Vec::new();
        for (i, c) in self.sites.iter().enumerate() {
            let s = &c.site;
            for &o in &c.orders {
                if !grown.get(*s).is_some_and(|cur| o.le(cur)) {
                    clause.push((i, o));
                }
            }
        }
        clause
    }

    /// Cost of a (site, order) pair: (new fences, weight).
    fn cost(&self, i: usize, o: MemOrder) -> (u32, u32) {
        match self.sites[i].base {
            None => (1, o.fence_weight()),
            Some(base) if self.access(i).is_some() => (1, orders::weight(o) - orders::weight(base)),
            Some(base) => (0, o.fence_weight() - base.fence_weight()),
        }
    }

    /// The access candidate site `i` stands for, if it is one.
    fn access(&self, i: usize) -> Option<crate::trace::orders::AccessSite> {
        match self.sites[i].site {
            Site::Existing(st) if self.acc.is_candidate(st) => self.acc.get(st),
            _ => None,
        }
    }

    /// The hardware price of a (site, order) pair under the cost model: a new fence's price,
    /// or a strengthened fence's price increase.
    fn price(&self, i: usize, o: MemOrder) -> u32 {
        if let Some(a) = self.access(i) {
            let price = |o| orders::access_price(self.cost, a.kind, o);
            return price(o).saturating_sub(price(a.order));
        }
        let base = self.sites[i].base.map_or(0, |b| self.cost.price(b));
        self.cost.price(o).saturating_sub(base)
    }

    /// Cheapest assignment satisfying `clauses` and keeping every order of `floor` or above.
    fn solve(&self, clauses: &[Vec<(usize, MemOrder)>], floor: &Assignment) -> Assignment {
        let mut vars = ProblemVariables::new();
        let mut x: Vec<Vec<(MemOrder, Variable)>> = Vec::new();
        // Lexicographic costs as one objective: each component's multiplier exceeds the
        // largest possible total of the components after it.
        let n = self.sites.len() as f64;
        let max_weight = n * 3.0 + 1.0;
        let max_count = n + 1.0;
        let mut objective = Expression::from(0.0);
        for (i, c) in self.sites.iter().enumerate() {
            let mut row = Vec::new();
            for &o in &c.orders {
                let v = vars.add(variable().binary());
                let (count, weight) = self.cost(i, o);
                let (count, weight) = (count as f64, weight as f64);
                let price = self.price(i, o) as f64;
                let coefficient = match self.cost {
                    Cost::Count => count * max_weight + weight,
                    Cost::Weight => weight * max_count + count,
                    Cost::X86 | Cost::Armv8 => {
                        price * max_count * max_weight + count * max_weight + weight
                    }
                };
                // With accesses among the candidates, equal fixes prefer order changes to
                // new fences (a last component, below every other).
                let coefficient = if self.acc.is_empty() {
                    coefficient
                } else {
                    let fence = f64::from(self.sites[i].base.is_none());
                    coefficient * max_count + fence
                };
                objective += coefficient * v;
                row.push((o, v));
            }
            x.push(row);
        }
        let mut model = vars.minimise(objective).using(microlp);
        for (i, row) in x.iter().enumerate() {
            let total: Expression = row.iter().map(|(_, v)| *v).sum();
            model = model.with(total.clone().leq(1.0));
            if let Some(min) = floor.get(self.sites[i].site) {
                let at_least: Expression = row
                    .iter()
                    .filter(|(o, _)| min.le(*o))
                    .map(|(_, v)| *v)
                    .sum();
                model = model.with(at_least.geq(1.0));
            }
        }
        for clause in clauses {
            let sum: Expression = clause
                .iter()
                .filter_map(|&(i, o)| x[i].iter().find(|(oo, _)| *oo == o).map(|(_, v)| *v))
                .sum();
            model = model.with(sum.geq(1.0));
        }
        let sol = model
            .solve()
            .expect("the 0/1 program is feasible: the all-seq_cst assignment satisfies it");
        let mut a = Assignment::default();
        for (i, row) in x.iter().enumerate() {
            for (o, v) in row {
                if sol.value(*v) > 0.5 {
                    a.set(self.sites[i].site, *o);
                }
            }
        }
        a
    }

    /// The optimal assignment and the number of rounds; `None` if `deadline` passed first.
    /// `Ok(None)` if `deadline` passed first; `Err` if a requirement is unfixable.
    fn solve_optimal(
        &self,
        deadline: Option<std::time::Instant>,
    ) -> Result<Option<(Assignment, usize)>, NoFix> {
        let mut clauses = Vec::new();
        let mut rounds = 0;
        loop {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return Ok(None);
            }
            rounds += 1;
            let a = self.solve(&clauses, &Assignment::default());
            match self.unfixed(&a)? {
                None => return Ok(Some((a, rounds))),
                Some(r) => {
                    let c = self.clause(r, &a);
                    debug_assert!(
                        !c.iter().any(|&(i, o)| a.get(self.sites[i].site) == Some(o)),
                        "a clause must exclude the candidate it came from"
                    );
                    if std::env::var_os("FENSYN_DEBUG").is_some() {
                        eprintln!("round {rounds}: candidate {:?} -> clause {:?}", a.orders, c);
                    }
                    clauses.push(c)
                }
            }
        }
    }

    fn solve_fast(&self) -> Result<(Assignment, usize), NoFix> {
        let mut a = Assignment::default();
        let mut rounds = 0;
        while let Some(r) = self.unfixed(&a)? {
            rounds += 1;
            // Fix r optimally, keeping every earlier choice.
            let mut clauses = Vec::new();
            loop {
                let b = self.solve(&clauses, &a);
                if self.oracle.fixes(r, &b) {
                    a = b;
                    break;
                }
                clauses.push(self.clause(r, &b));
            }
        }
        Ok((a, rounds))
    }

    fn describe(&self, assignment: Assignment, iterations: usize) -> Solution {
        let mut fences = Vec::new();
        let mut accesses = Vec::new();
        let (mut inserted, mut strengthened, mut weight, mut price) = (0, 0, 0, 0);
        for (i, Candidate { site, base, .. }) in self.sites.iter().enumerate() {
            let Some(order) = assignment.get(*site) else {
                continue;
            };
            let without = assignment.without(*site);
            // Only a requirement whose graph passes the site can lose its fix without it; each
            // is given with how the whole assignment fixes it.
            let needed_by = (0..self.reqs.len())
                .filter(|&ri| self.oracle.passes(ri, i) && !self.oracle.fixes(ri, &without))
                .filter_map(|ri| self.oracle.how(ri, &assignment).map(|v| (ri, v)))
                .collect();
            let (count, w) = self.cost(i, order);
            if let Some(a) = self.access(i) {
                weight += w;
                price += self.price(i, order);
                accesses.push(orders::AccessChange {
                    stmt: a.stmt,
                    kind: a.kind,
                    previous: a.order,
                    order,
                    needed_by,
                });
                continue;
            }
            if count == 1 {
                inserted += 1;
            } else {
                strengthened += 1;
            }
            weight += w;
            price += self.price(i, order);
            fences.push(Fence {
                site: *site,
                order,
                previous: *base,
                needed_by,
            });
        }
        Solution {
            fences,
            accesses,
            assignment,
            inserted,
            strengthened,
            weight,
            price,
            iterations,
            mode: Mode::Optimal,
            // Filled in by the caller, which owns them (no copy).
            requirements: Vec::new(),
            lazy_after: None,
        }
    }
}
