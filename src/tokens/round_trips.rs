//! Round trips: the calls an agent makes from a task to its first tool call, on each path the
//! meter prices. Tokens say what a path costs; round trips say how long it takes (each is a
//! model turn, seconds of latency, and one more chance to go wrong).

use super::meter::Session;

/// The calls one path makes from a task to the tool's first call, in order; a `+` joins what
/// one answer carries (ferry's `find` prints the top hit's help with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Steps(pub &'static [&'static str]);

/// Every definition is in the context: the model calls the tool at once.
pub const EAGER: Steps = Steps(&["call"]);
/// A host's deferred loading: a tool search returns the definition, then the call.
pub const DEFERRED: Steps = Steps(&["search", "call"]);
/// ferry's CLI: `ferry find` prints the top hit's help inline, then the call.
pub const FERRY: Steps = Steps(&["find+help", "call"]);
/// ferry's proxy: `find` returns the top hit's schema (what `describe` gives), then `call`.
pub const PROXY: Steps = Steps(&["find+describe", "call"]);
/// A list-then-help path: `ferry find`, then `ferry SERVER TOOL --help`, then the call.
pub const FIND_THEN_HELP: Steps = Steps(&["find", "help", "call"]);

impl Steps {
    /// Round trips per task: one per call.
    pub fn per_task(self) -> usize {
        self.0.len()
    }

    /// Model turns spent finding the tool before its call.
    pub fn lookups(self) -> usize {
        self.per_task().saturating_sub(1)
    }

    /// Round trips over a session: each distinct tool used is found and called once.
    pub fn over(self, session: Session) -> usize {
        session.tools_used * self.per_task()
    }

    /// The steps as the table shows them: `search, call`.
    pub fn shown(self) -> String {
        self.0.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::meter::{LOOKUPS_EAGER, LOOKUPS_ONE_STEP, LOOKUPS_TWO_STEP};

    #[test]
    fn round_trips_agree_with_the_lookups_the_session_model_prices() {
        assert_eq!(EAGER.lookups(), LOOKUPS_EAGER);
        for steps in [DEFERRED, FERRY, PROXY] {
            assert_eq!(steps.lookups(), LOOKUPS_ONE_STEP);
        }
        assert_eq!(FIND_THEN_HELP.lookups(), LOOKUPS_TWO_STEP);
        let session = Session {
            tools_used: 5,
            turns: 20,
            prompt_cache: true,
        };
        assert_eq!(FIND_THEN_HELP.over(session), 15);
        assert_eq!(DEFERRED.shown(), "search, call");
    }
}
