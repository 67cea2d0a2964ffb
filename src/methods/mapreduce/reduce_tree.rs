//! The shape and progress of a map-reduce's merge tree, apart from the LLM calls that fill it.
//!
//! Level 0 holds the map answers, one per chunk. Each level above merges consecutive groups of
//! `group_size` parts of the level below, until a level, joined, fits the budget. A merge may
//! start as soon as its group is complete *and* its level is known not to fit: either the parts
//! that have arrived already exceed the budget, or the whole level has arrived and, joined, does
//! not fit. So the tree climbs while the map is still running, and a level that fits is never
//! merged. The tree, the budgets and the answers are those of a level-by-level reduce; only the
//! order of the calls differs.

use super::ChunkBudget;
use crate::TokenCounter;

/// Between two parts joined into one text.
pub(super) const PART_SEPARATOR: &str = "\n\n";

/// The least tokens any map or merge answer is given, so that a huge fan-in cannot starve a
/// part to nothing.
pub(super) const MIN_PART_TOKENS: usize = 32;

/// How many tokens one of the parts of a level may have.
#[derive(Debug, Clone, Copy)]
pub(super) struct PartSizing {
    /// The share rule from the options.
    pub(super) chunk_budget: ChunkBudget,
    /// The most a part may have so that a group of them still fits a merge in the window.
    pub(super) part_cap: usize,
}

impl PartSizing {
    /// The budget of one of `parts` answers sharing `budget`.
    pub(super) fn for_parts(self, budget: usize, parts: usize) -> usize {
        self.chunk_budget
            .for_parts(budget, parts)
            .min(self.part_cap)
            .max(MIN_PART_TOKENS)
    }
}

/// A merge that can run now: `parts` of level `level - 1` become part `index` of `level`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Merge {
    pub(super) level: usize,
    pub(super) index: usize,
    pub(super) parts: Vec<String>,
    /// What the merge's answer is cut to.
    pub(super) budget: usize,
    /// The merge whose answer is the summary.
    pub(super) is_final: bool,
}

/// What recording a part leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Filled {
    /// These merges can start now (possibly none).
    Merges(Vec<Merge>),
    /// The parts of `level`, joined, fit the budget: `text` is the summary.
    Fits { level: usize, text: String },
    /// The parts of `level` do not fit and the pass limit allows no further level: the caller
    /// condenses `joined` another way.
    PassLimit { level: usize, joined: String },
}

#[derive(Debug)]
struct Level {
    parts: Vec<Option<String>>,
    filled: usize,
    /// Tokens of the parts filled so far, each counted alone.
    tokens: usize,
    /// Known not to fit the budget, so the level above exists (or the pass limit is reached).
    overflows: bool,
    /// What each part of this level is cut to.
    part_budget: usize,
    /// Which parts of this level have had their merge started (level 0: their map call).
    started: Vec<bool>,
}

impl Level {
    fn new(parts: usize, part_budget: usize) -> Self {
        Level {
            parts: vec![None; parts],
            filled: 0,
            tokens: 0,
            overflows: false,
            part_budget,
            started: vec![false; parts],
        }
    }

    fn is_complete(&self) -> bool {
        self.filled == self.parts.len()
    }

    fn joined(&self) -> String {
        let parts: Vec<&str> = self.parts.iter().flatten().map(String::as_str).collect();
        parts.join(PART_SEPARATOR)
    }
}

/// The merge tree of one run. See the module docs.
#[derive(Debug)]
pub(super) struct ReduceTree {
    counter: TokenCounter,
    budget: usize,
    group_size: usize,
    max_passes: usize,
    sizing: PartSizing,
    levels: Vec<Level>,
}

impl ReduceTree {
    /// A tree over `chunks` map answers of at most `map_budget` tokens each, reduced to
    /// `budget` in groups of `group_size` (at least 2) over at most `max_passes` levels.
    pub(super) fn new(
        chunks: usize,
        map_budget: usize,
        budget: usize,
        group_size: usize,
        max_passes: usize,
        sizing: PartSizing,
        counter: TokenCounter,
    ) -> Self {
        ReduceTree {
            counter,
            budget,
            group_size: group_size.max(2),
            max_passes,
            sizing,
            levels: vec![Level::new(chunks, map_budget)],
        }
    }

    /// Reduce levels opened so far (0 while only the map runs).
    pub(super) fn levels(&self) -> usize {
        self.levels.len() - 1
    }

    /// Parts of `level` filled so far, and how many it has.
    pub(super) fn progress(&self, level: usize) -> (usize, usize) {
        let level = &self.levels[level];
        (level.filled, level.parts.len())
    }

    /// Records part `index` of `level` (a map answer at level 0, a merge's answer above, or
    /// what replaced a failed call) and says what follows.
    pub(super) fn fill(&mut self, level: usize, index: usize, text: String) -> Filled {
        let budget = self.budget;
        let tokens = self.counter.count(&text);
        let this = &mut self.levels[level];
        debug_assert!(
            this.parts[index].is_none(),
            "part {level}/{index} filled twice"
        );
        this.parts[index] = Some(text);
        this.filled += 1;
        this.tokens += tokens;
        let complete = this.is_complete();

        let newly_overflows = if this.overflows {
            false
        } else {
            // Joining can merge a token or so at each seam; past that slack the whole level is
            // sure not to fit, whatever the parts still to come.
            let sure = this.tokens > budget.saturating_add(this.filled);
            if complete && !sure {
                let joined = this.joined();
                if !self.counter.exceeds(&joined, budget) {
                    return Filled::Fits {
                        level,
                        text: joined,
                    };
                }
            }
            if !(sure || complete) {
                return Filled::Merges(Vec::new());
            }
            this.overflows = true;
            true
        };

        if level >= self.max_passes {
            return if complete {
                Filled::PassLimit {
                    level,
                    joined: self.levels[level].joined(),
                }
            } else {
                Filled::Merges(Vec::new())
            };
        }
        if newly_overflows {
            self.open(level + 1);
            let groups = self.levels[level + 1].parts.len();
            Filled::Merges(
                (0..groups)
                    .filter_map(|j| self.ready(level + 1, j))
                    .collect(),
            )
        } else {
            Filled::Merges(
                self.ready(level + 1, index / self.group_size)
                    .into_iter()
                    .collect(),
            )
        }
    }

    /// The parts of the group behind part `index` of `level`, joined: what a failed merge
    /// condenses instead.
    pub(super) fn group_text(&self, level: usize, index: usize) -> String {
        let parts: Vec<&str> = self
            .group(level, index)
            .iter()
            .flatten()
            .map(String::as_str)
            .collect();
        parts.join(PART_SEPARATOR)
    }

    /// The parts of level `level - 1` that merge into part `index` of `level`.
    fn group(&self, level: usize, index: usize) -> &[Option<String>] {
        let below = &self.levels[level - 1].parts;
        let end = ((index + 1) * self.group_size).min(below.len());
        &below[index * self.group_size..end]
    }

    /// Adds the level merging the groups of `level - 1`.
    fn open(&mut self, level: usize) {
        debug_assert_eq!(level, self.levels.len(), "levels open in order");
        let groups = self.levels[level - 1].parts.len().div_ceil(self.group_size);
        let part_budget = if groups == 1 {
            self.budget
        } else {
            self.sizing.for_parts(self.budget, groups)
        };
        self.levels.push(Level::new(groups, part_budget));
    }

    /// The merge for part `index` of `level`, if its group is complete and it has not started.
    fn ready(&mut self, level: usize, index: usize) -> Option<Merge> {
        if self.levels[level].started[index] {
            return None;
        }
        let parts: Vec<String> = self
            .group(level, index)
            .iter()
            .cloned()
            .collect::<Option<_>>()?;
        let this = &mut self.levels[level];
        this.started[index] = true;
        Some(Merge {
            level,
            index,
            parts,
            budget: this.part_budget,
            is_final: this.parts.len() == 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(chunks: usize, budget: usize, max_passes: usize) -> ReduceTree {
        let sizing = PartSizing {
            chunk_budget: ChunkBudget::Share { floor: 40 },
            part_cap: 10_000,
        };
        ReduceTree::new(
            chunks,
            40,
            budget,
            4,
            max_passes,
            sizing,
            TokenCounter::default(),
        )
    }

    /// About `tokens` tokens of text.
    fn words(tokens: usize) -> String {
        " word".repeat(tokens)
    }

    fn merges(filled: Filled) -> Vec<Merge> {
        match filled {
            Filled::Merges(merges) => merges,
            other => panic!("expected merges, got {other:?}"),
        }
    }

    #[test]
    fn a_level_that_fits_is_the_answer_and_is_never_merged() {
        let mut tree = tree(3, 100, 8);
        assert!(merges(tree.fill(0, 2, "c".into())).is_empty());
        assert!(merges(tree.fill(0, 0, "a".into())).is_empty());
        assert_eq!(
            tree.fill(0, 1, "b".into()),
            Filled::Fits {
                level: 0,
                text: "a\n\nb\n\nc".into()
            }
        );
        assert_eq!(tree.levels(), 0);
    }

    #[test]
    fn merges_start_once_the_arrived_parts_exceed_the_budget() {
        let mut tree = tree(8, 40, 8);
        // Group 0 is complete, but 4 × 10 tokens may still fit 40: nothing starts.
        for i in 0..4 {
            assert!(merges(tree.fill(0, i, words(10))).is_empty());
        }
        // The fifth part makes 50 > 40 + 5: the level cannot fit, group 0 starts at once.
        let started = merges(tree.fill(0, 4, words(10)));
        assert_eq!(started.len(), 1);
        assert_eq!((started[0].level, started[0].index), (1, 0));
        assert_eq!(started[0].parts.len(), 4);
        assert!(!started[0].is_final);
        // Group 1 starts with its last part, whatever the order.
        assert!(merges(tree.fill(0, 7, words(10))).is_empty());
        assert!(merges(tree.fill(0, 5, words(10))).is_empty());
        let started = merges(tree.fill(0, 6, words(10)));
        assert_eq!(started.len(), 1);
        assert_eq!((started[0].level, started[0].index), (1, 1));
        assert_eq!(tree.levels(), 1);
        // Two merges above: the next is the final one, with the whole budget.
        let finals = merges(tree.fill(1, 1, words(30)));
        assert!(finals.is_empty(), "30 tokens alone may still fit");
        let finals = merges(tree.fill(1, 0, words(30)));
        assert_eq!(finals.len(), 1);
        assert!(finals[0].is_final);
        assert_eq!(finals[0].budget, 40);
        assert_eq!(
            tree.fill(2, 0, "done".into()),
            Filled::Fits {
                level: 2,
                text: "done".into()
            }
        );
    }

    #[test]
    fn a_complete_level_that_does_not_fit_opens_the_next_one() {
        // 2 parts of 26 tokens: 52 ≤ 50 + 2 is not sure, but joined they do not fit.
        let mut tree = tree(2, 50, 8);
        assert!(merges(tree.fill(0, 0, words(26))).is_empty());
        let started = merges(tree.fill(0, 1, words(26)));
        assert_eq!(started.len(), 1);
        assert!(started[0].is_final);
    }

    #[test]
    fn the_pass_limit_hands_back_the_joined_level() {
        let mut tree = tree(5, 10, 0);
        for i in 0..4 {
            assert!(merges(tree.fill(0, i, words(20))).is_empty());
        }
        match tree.fill(0, 4, words(20)) {
            Filled::PassLimit { level: 0, joined } => assert!(joined.contains("word")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_failed_merge_condenses_its_own_group() {
        let mut tree = tree(5, 10, 8);
        for i in 0..5 {
            tree.fill(0, i, format!("part {i}"));
        }
        assert_eq!(tree.group_text(1, 1), "part 4");
        assert_eq!(
            tree.group_text(1, 0),
            "part 0\n\npart 1\n\npart 2\n\npart 3"
        );
    }

    #[test]
    fn every_tree_from_1_to_300_chunks_merges_each_group_once_in_any_arrival_order() {
        for chunks in 1..=300 {
            let mut tree = tree(chunks, 10, 8);
            // Arrivals in a scrambled but deterministic order, each part too big to fit.
            let mut queue: Vec<(usize, usize)> =
                (0..chunks).map(|i| (0, (i * 7919) % chunks)).collect();
            let mut merged = 0;
            let mut finished = None;
            while let Some((level, index)) = queue.pop() {
                match tree.fill(level, index, words(20)) {
                    Filled::Merges(started) => {
                        merged += started.len();
                        queue.splice(0..0, started.into_iter().map(|m| (m.level, m.index)));
                    }
                    Filled::Fits { level, .. } | Filled::PassLimit { level, .. } => {
                        finished = Some(level);
                        break;
                    }
                }
            }
            // Every part is 20 tokens against a budget of 10: only a single part can end it,
            // and a single 20-token part does not fit either, so the tree runs to the limit.
            let expected: usize = {
                let (mut parts, mut total) = (chunks, 0);
                for _ in 0..8 {
                    parts = parts.div_ceil(4);
                    total += parts;
                }
                total
            };
            assert_eq!(merged, expected, "{chunks} chunks");
            assert_eq!(finished, Some(8), "{chunks} chunks");
        }
    }
}
