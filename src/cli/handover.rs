//! The caller's side of the warm path: the command this process hands to the daemon, and the
//! answers to the daemon's questions (standard input, a file, an elicitation at this
//! terminal). `warm` is the daemon's side, which runs what is handed over.

use super::terminal;
use crate::client::config::Environment;
use crate::daemon::wire::{Answer, Dirs, Question, Run, Terminal};

/// The command this process would run, to hand to the daemon: `None` when the working
/// directory cannot travel (it is not UTF-8) or a word is not UTF-8. `warned`: this process
/// printed the config's warnings already.
pub fn handover(args: &[std::ffi::OsString], warned: bool) -> Option<Run> {
    let args = args
        .iter()
        .skip(1)
        .map(|a| a.to_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()?;
    let env = Environment::current();
    if env.cwd.as_ref().is_some_and(|dir| dir.to_str().is_none()) {
        return None;
    }
    use std::io::IsTerminal;
    Some(Run {
        args,
        env,
        terminal: Terminal {
            stdin: std::io::stdin().is_terminal(),
            stdout: std::io::stdout().is_terminal(),
            stderr: std::io::stderr().is_terminal(),
        },
        dirs: Dirs::current(),
        warned,
    })
}

/// Answers the daemon's questions in the caller: standard input or a file (with the size
/// limit), or an elicitation at this terminal.
pub fn answer_question(question: Question) -> Answer {
    match question {
        Question::Input(path) => Answer::Input(super::flags::read_limited(path.as_deref())),
        Question::Elicit(params) => Answer::Elicit(Ok(terminal::answer_elicitation(&params))),
    }
}
