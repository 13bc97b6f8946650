//! A set of entry positions (items, decisions, tasks), one bit per entry: what the snapshot's
//! filters and the text index combine, with word-wise ANDs and ORs and a popcount.

/// A set of positions below a length fixed when it is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bits(Vec<u64>);

impl Bits {
    /// No position of `len`.
    pub(crate) fn empty(len: usize) -> Self {
        Bits(vec![0; len.div_ceil(64)])
    }

    /// Every position of `len`.
    pub(crate) fn full(len: usize) -> Self {
        let mut b = Bits(vec![u64::MAX; len.div_ceil(64)]);
        if let Some(last) = b.0.last_mut()
            && !len.is_multiple_of(64)
        {
            *last = (1u64 << (len % 64)) - 1;
        }
        b
    }

    pub(crate) fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Keeps the positions also in `other`.
    pub(crate) fn and(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a &= b;
        }
    }

    /// Removes the positions for which `keep` is false.
    pub(crate) fn retain(&mut self, keep: impl Fn(usize) -> bool) {
        for (k, word) in self.0.iter_mut().enumerate() {
            for i in ones(k, *word) {
                if !keep(i) {
                    *word &= !(1u64 << (i % 64));
                }
            }
        }
    }

    /// How many positions the set holds.
    pub(crate) fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The positions in the set, ascending.
    pub(crate) fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &w)| ones(k, w))
    }

    /// The positions in the set, ascending, consuming it.
    pub(crate) fn into_positions(self) -> impl Iterator<Item = usize> {
        self.0.into_iter().enumerate().flat_map(|(k, w)| ones(k, w))
    }
}

/// The positions of the bits set in `word`, the `k`-th word of a set, ascending.
fn ones(k: usize, mut word: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if word == 0 {
            return None;
        }
        let bit = word.trailing_zeros() as usize;
        word &= word - 1;
        Some(k * 64 + bit)
    })
}
