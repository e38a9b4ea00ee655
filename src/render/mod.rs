//! Renderings for people and models, all from the schema model and the protocol's values:
//! the listing line and `--help` (`tool`), call results and the output budget (`output`),
//! resource and prompt lines (`prompts`), and the text rules every rendering shares (`text`:
//! first sentences, control characters escaped). Used by the CLI, the meter, the skill writer
//! and serve alike; nothing here reads options or prints.

pub mod hidden;
pub mod output;
pub mod prompts;
pub mod proxy;
pub mod review;
pub mod text;
pub mod tool;

pub use tool::{json_help, line_type, listing_line, summary, tool_help};
