//! The one status line of this process's terminal (a task's status, a server's progress,
//! "starting ..."): drawn in one place, so that what writes it cannot draw over what else the
//! terminal shows. While a question is open at the terminal (a form, a yes-or-no) the line
//! is taken away and its updates are kept, not drawn, so the prompt stays where the person
//! types; it comes back once the question is answered. A line of text (a warning, an error)
//! is written on a cleared line.
//!
//! A cold command draws through it directly; a warm one's stderr arrives from the daemon as
//! text and goes through [`write`], which knows the daemon's status-line form (`\r\x1b[K`
//! then the line).

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, MutexGuard};

/// What the terminal shows of the status line.
struct Line {
    /// The line is on the terminal now.
    drawn: bool,
    /// The latest status, drawn or kept.
    text: Option<String>,
    /// Questions open at the terminal.
    questions: usize,
}

static LINE: Mutex<Line> = Mutex::new(Line {
    drawn: false,
    text: None,
    questions: 0,
});

/// How the status line is replaced on a terminal (carriage return, erase to the line's end).
const ERASE: &str = "\r\x1b[K";

fn line() -> MutexGuard<'static, Line> {
    LINE.lock().unwrap_or_else(|e| e.into_inner())
}

impl Line {
    fn erase(&mut self, err: &mut impl Write) {
        if self.drawn {
            let _ = err.write_all(ERASE.as_bytes());
            self.drawn = false;
        }
    }

    fn draw(&mut self, err: &mut impl Write) {
        if self.questions > 0 {
            return;
        }
        if let Some(text) = &self.text {
            let _ = write!(err, "{ERASE}{text}");
            let _ = err.flush();
            self.drawn = true;
        }
    }
}

/// Shows `text` as the status line, in place of the last; kept for later while a question
/// is open.
pub fn show(text: &str) {
    let mut line = line();
    line.text = Some(text.to_string());
    line.draw(&mut std::io::stderr().lock());
}

/// Takes the status line away (the work it told of is over, or an error follows).
pub fn clear() {
    let mut line = line();
    line.text = None;
    line.erase(&mut std::io::stderr().lock());
}

/// Text for stderr as a status writer sends it: `\r\x1b[K` and a line is the status line,
/// `\r\x1b[K` alone clears it, text without a final newline is a status too; whole lines
/// are written on a cleared line, and the status (if any) is drawn again below them.
pub fn write(text: &str) {
    // Without a terminal there is no line to keep: the text goes as it came.
    if !std::io::stderr().is_terminal() {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
        return;
    }
    if let Some(status) = text.strip_prefix(ERASE) {
        if status.is_empty() {
            clear();
        } else {
            show(status);
        }
        return;
    }
    if !text.ends_with('\n') {
        show(text);
        return;
    }
    let mut line = line();
    let mut err = std::io::stderr().lock();
    line.erase(&mut err);
    let _ = err.write_all(text.as_bytes());
    line.draw(&mut err);
}

/// A question open at the terminal: the status line is away until it is dropped.
pub struct Question(());

/// Opens a question: the status line is erased and its updates kept until the answer.
pub fn question() -> Question {
    let mut line = line();
    line.questions += 1;
    line.erase(&mut std::io::stderr().lock());
    Question(())
}

impl Drop for Question {
    fn drop(&mut self) {
        let mut line = line();
        line.questions = line.questions.saturating_sub(1);
        line.draw(&mut std::io::stderr().lock());
    }
}
