//! Binary relations over the events of one execution graph, as dense bit matrices.
//!
//! Graphs of the programs fensyn handles have tens to a few hundred events, so an n×n bit matrix
//! (n²/64 words) makes composition and transitive closure cheap and branch-free. Every derived
//! relation of shared/docs/memory-models.md (fr, eco, rs, sw, hb, psc) is computed with these
//! operations.

/// A relation on `0..n`, stored row-major as bit sets.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Rel {
    n: usize,
    words: usize,
    bits: Vec<u64>,
}

impl std::fmt::Debug for Rel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.pairs()).finish()
    }
}

impl Rel {
    /// The empty relation on `0..n`.
    pub fn new(n: usize) -> Rel {
        let words = n.div_ceil(64).max(1);
        Rel {
            n,
            words,
            bits: vec![0; n * words],
        }
    }

    /// The identity on the elements satisfying `pred`: `[A]`.
    pub fn identity_on(n: usize, pred: impl Fn(usize) -> bool) -> Rel {
        let mut r = Rel::new(n);
        for i in 0..n {
            if pred(i) {
                r.add(i, i);
            }
        }
        r
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|w| *w == 0)
    }

    #[inline]
    pub fn add(&mut self, a: usize, b: usize) {
        self.bits[a * self.words + b / 64] |= 1u64 << (b % 64);
    }

    #[inline]
    pub fn remove(&mut self, a: usize, b: usize) {
        self.bits[a * self.words + b / 64] &= !(1u64 << (b % 64));
    }

    #[inline]
    pub fn has(&self, a: usize, b: usize) -> bool {
        self.bits[a * self.words + b / 64] & (1u64 << (b % 64)) != 0
    }

    fn row(&self, a: usize) -> &[u64] {
        &self.bits[a * self.words..(a + 1) * self.words]
    }

    /// Successors of `a`, in increasing order.
    pub fn succs(&self, a: usize) -> impl Iterator<Item = usize> + '_ {
        Bits {
            row: self.row(a),
            word: 0,
            cur: 0,
        }
    }

    /// All pairs, in row-major order.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.n).flat_map(move |a| self.succs(a).map(move |b| (a, b)))
    }

    /// `self ∪= other`.
    pub fn union_with(&mut self, other: &Rel) {
        debug_assert_eq!(self.n, other.n);
        for (x, y) in self.bits.iter_mut().zip(&other.bits) {
            *x |= *y;
        }
    }

    pub fn union(&self, other: &Rel) -> Rel {
        let mut r = self.clone();
        r.union_with(other);
        r
    }

    /// `self \ other`.
    pub fn minus(&self, other: &Rel) -> Rel {
        let mut r = self.clone();
        for (x, y) in r.bits.iter_mut().zip(&other.bits) {
            *x &= !*y;
        }
        r
    }

    /// `self ∩ other`.
    pub fn intersect(&self, other: &Rel) -> Rel {
        let mut r = self.clone();
        for (x, y) in r.bits.iter_mut().zip(&other.bits) {
            *x &= *y;
        }
        r
    }

    /// Relational composition `self ; other`.
    pub fn seq(&self, other: &Rel) -> Rel {
        let mut r = Rel::new(self.n);
        let w = self.words;
        for a in 0..self.n {
            let dst = &mut r.bits[a * w..(a + 1) * w];
            for m in self.succs(a) {
                for (d, s) in dst.iter_mut().zip(&other.bits[m * w..(m + 1) * w]) {
                    *d |= *s;
                }
            }
        }
        r
    }

    /// The inverse relation.
    pub fn inverse(&self) -> Rel {
        let mut r = Rel::new(self.n);
        for (a, b) in self.pairs() {
            r.add(b, a);
        }
        r
    }

    /// Keeps the pairs `(a, b)` with `keep(a, b)`.
    pub fn filter(&self, keep: impl Fn(usize, usize) -> bool) -> Rel {
        let mut r = Rel::new(self.n);
        for (a, b) in self.pairs() {
            if keep(a, b) {
                r.add(a, b);
            }
        }
        r
    }

    /// `[dom] ; self ; [cod]`.
    pub fn restrict(&self, dom: impl Fn(usize) -> bool, cod: impl Fn(usize) -> bool) -> Rel {
        let w = self.words;
        let mut mask = vec![0u64; w];
        for b in (0..self.n).filter(|&b| cod(b)) {
            mask[b / 64] |= 1u64 << (b % 64);
        }
        let mut r = Rel::new(self.n);
        for a in (0..self.n).filter(|&a| dom(a)) {
            let (dst, src) = (
                &mut r.bits[a * w..(a + 1) * w],
                &self.bits[a * w..(a + 1) * w],
            );
            for ((d, s), m) in dst.iter_mut().zip(src).zip(&mask) {
                *d = *s & *m;
            }
        }
        r
    }

    /// Transitive closure `self⁺` (Warshall's algorithm on bit rows).
    pub fn plus(&self) -> Rel {
        let mut r = self.clone();
        let w = self.words;
        let mut krow = vec![0u64; w];
        for k in 0..self.n {
            let (kw, kb) = (k / 64, 1u64 << (k % 64));
            krow.copy_from_slice(&r.bits[k * w..(k + 1) * w]);
            if krow.iter().all(|&x| x == 0) {
                continue;
            }
            for (i, row) in r.bits.chunks_exact_mut(w).enumerate() {
                if row[kw] & kb != 0 && i != k {
                    for (d, s) in row.iter_mut().zip(&krow) {
                        *d |= *s;
                    }
                }
            }
        }
        r
    }

    /// Reflexive closure `self?`.
    pub fn opt(&self) -> Rel {
        let mut r = self.clone();
        for i in 0..self.n {
            r.add(i, i);
        }
        r
    }

    pub fn is_irreflexive(&self) -> bool {
        (0..self.n).all(|i| !self.has(i, i))
    }

    pub fn is_acyclic(&self) -> bool {
        self.plus().is_irreflexive()
    }

    /// A shortest cycle through the relation, as a list of elements, if one exists.
    pub fn find_cycle(&self) -> Option<Vec<usize>> {
        let closure = self.plus();
        let start = (0..self.n).find(|&i| closure.has(i, i))?;
        // BFS from `start` back to `start`.
        let mut prev = vec![usize::MAX; self.n];
        let mut queue = std::collections::VecDeque::from([start]);
        let mut seen = vec![false; self.n];
        while let Some(a) = queue.pop_front() {
            for b in self.succs(a) {
                if b == start {
                    let mut cycle = vec![a];
                    let mut cur = a;
                    while cur != start {
                        cur = prev[cur];
                        cycle.push(cur);
                    }
                    cycle.reverse();
                    return Some(cycle);
                }
                if !seen[b] {
                    seen[b] = true;
                    prev[b] = a;
                    queue.push_back(b);
                }
            }
        }
        None
    }
}

/// The set bits of a row, in increasing order.
struct Bits<'a> {
    row: &'a [u64],
    /// Index of the word after `cur`'s.
    word: usize,
    /// The bits of the current word not returned yet.
    cur: u64,
}

impl Iterator for Bits<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.cur == 0 {
            self.cur = *self.row.get(self.word)?;
            self.word += 1;
        }
        let b = self.cur.trailing_zeros() as usize;
        self.cur &= self.cur - 1;
        Some((self.word - 1) * 64 + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closure_and_cycles() {
        let mut r = Rel::new(70);
        r.add(0, 1);
        r.add(1, 65);
        r.add(65, 3);
        let c = r.plus();
        assert!(c.has(0, 3) && c.has(1, 3) && !c.has(3, 0));
        assert!(r.is_acyclic());
        r.add(3, 0);
        assert!(!r.is_acyclic());
        assert_eq!(r.find_cycle().unwrap().len(), 4);
    }

    #[test]
    fn composition_and_inverse() {
        let mut a = Rel::new(4);
        a.add(0, 1);
        let mut b = Rel::new(4);
        b.add(1, 2);
        b.add(1, 3);
        let ab = a.seq(&b);
        assert_eq!(ab.pairs().collect::<Vec<_>>(), vec![(0, 2), (0, 3)]);
        assert_eq!(
            ab.inverse().pairs().collect::<Vec<_>>(),
            vec![(2, 0), (3, 0)]
        );
        assert!(b.seq(&a).is_empty());
        assert_eq!(a.opt().pairs().count(), 5);
    }
}
