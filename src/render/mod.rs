//! Renderings for people and models, all from the schema model and the protocol's values:
//! the listing line and `--help` (`tool`), call results and the output budget (`output`, which
//! saves images and long output to files), resource and prompt lines (`prompts`), the lazy
//! proxy's three tools and catalog (`proxy`), a changed tool's review (`review`), text a
//! person cannot see (`hidden`), and the text rules every rendering shares (`text`: first
//! sentences, control characters escaped). Used by the CLI, the meter, the skill writer and
//! serve alike; nothing here reads options or prints.

pub mod hidden;
pub mod output;
pub mod prompts;
pub mod proxy;
pub mod review;
pub mod text;
pub mod tool;

pub use tool::{json_help, line_type, listing_line, listing_lines, summary, tool_help};
