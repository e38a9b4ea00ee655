//! What travels on the daemon's socket: one JSON message per line, each a type below.
//!
//! A connection opens with a [`Hello`] each way (the caller may send its operation in the same
//! write): a daemon of another identity runs nothing and is stopped by the caller, never
//! reused. The hellos and `{"op": "stop"}` are as every earlier ferry wrote them, so a new
//! ferry can stop an old daemon. Then one operation:
//! - [`ToDaemon::Run`]: a `ferry <server> ...` command handed over whole (its words, the
//!   caller's directory, environment and terminals). The daemon parses it, calls the warm
//!   server and renders the output as a cold `ferry` would, and sends [`ToCaller::Out`] and
//!   [`ToCaller::Err`] text to write, [`ToCaller::Ask`] for what only the caller has (its
//!   standard input, an `@file`, its terminal for elicitation; answered with
//!   [`ToDaemon::Answer`]), and ends with [`ToCaller::Done`], or with [`ToCaller::Cold`]
//!   before any output when the command is to run in the caller instead. A caller that
//!   hangs up cancels the command.
//! - [`ToDaemon::Status`] and [`ToDaemon::Stop`].

use crate::client::config::Environment;
use crate::client::handler::ClientRequestError;
use crate::{Error, Outcome};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// The first message each way: who speaks (`daemon::identity`), and the daemon's process id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub hello: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

/// A message from a caller to the daemon, after its hello. The operation's name comes first
/// and its fields under `with`, so the daemon reads a command in one pass (an internal tag
/// would have serde buffer the whole message first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", content = "with", rename_all = "snake_case")]
pub enum ToDaemon {
    Run(Box<Run>),
    Status,
    Stop,
    /// The answer to an [`ToCaller::Ask`].
    Answer {
        id: u64,
        answer: Answer,
    },
}

/// A message from the daemon to a caller, after its hello.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToCaller {
    /// Text for the caller's standard output, as it is.
    Out(String),
    /// Text for the caller's standard error, as it is.
    Err(String),
    /// Something only the caller can answer.
    Ask {
        id: u64,
        question: Question,
    },
    /// Run the command in the caller (nothing was written): the reason, for diagnostics.
    Cold(String),
    /// The command's end: what `ferry` reports and exits with.
    Done(std::result::Result<Outcome, Error>),
    Status(Status),
    /// How many servers a stop stopped.
    Stopped(usize),
    /// The daemon cannot run this for the caller (another ferry's operation, other
    /// directories): why. The caller goes cold with a warning.
    Refused(String),
}

/// A `ferry <server> ...` command handed to the daemon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The words after `ferry`, as typed.
    pub args: Vec<String>,
    /// The caller's working directory and environment (its `${VAR}`s, the server's
    /// environment, `FERRY_LOG`...).
    pub env: Environment,
    pub terminal: Terminal,
    /// Where the caller keeps ferry's files: a daemon keeping others runs nothing for it.
    pub dirs: Dirs,
    /// The caller has printed the config's warnings already (it read the config itself).
    #[serde(default)]
    pub warned: bool,
}

/// Which of the caller's standard streams are terminals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Terminal {
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
}

/// The directories ferry's files live in, as a process sees them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dirs {
    pub home: PathBuf,
    pub config: PathBuf,
    pub cache: PathBuf,
}

impl Dirs {
    /// This process's.
    pub fn current() -> Dirs {
        Dirs {
            home: crate::paths::home_dir(),
            config: crate::paths::config_dir(),
            cache: crate::paths::cache_dir(),
        }
    }
}

/// What the daemon asks of a caller during a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Question {
    /// The text of standard input (`None`) or of a file (`@path`, from the caller's
    /// directory), with ferry's size limit.
    Input(Option<String>),
    /// A server's `elicitation/create` params, for the person at the caller's terminal.
    Elicit(Value),
}

/// A caller's answer to a [`Question`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Input(std::result::Result<String, Error>),
    Elicit(std::result::Result<Value, ClientRequestError>),
}

/// `ferry daemon status`'s facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub pid: u32,
    pub identity: String,
    pub up_ms: u64,
    pub rss_kb: u64,
    pub servers: Vec<crate::client::pool::ServerStatus>,
}

/// One message as a line.
pub fn line<T: Serialize>(message: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use serde_json::json;

    fn round_trip<T: Serialize + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug>(
        message: T,
    ) {
        let bytes = line(&message);
        assert_eq!(bytes.last(), Some(&b'\n'));
        assert_eq!(bytes.iter().filter(|b| **b == b'\n').count(), 1, "one line");
        let back: T = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back, message);
    }

    #[test]
    fn every_message_to_the_daemon_comes_back_as_it_went() {
        round_trip(Hello {
            hello: "ferry 0.1.0 1.2.3".into(),
            pid: None,
        });
        round_trip(ToDaemon::Run(Box::new(Run {
            args: vec![
                "ev".into(),
                "echo".into(),
                "--message".into(),
                "a\nb".into(),
            ],
            env: Environment {
                vars: [("PATH".to_string(), "/bin".to_string())].into(),
                cwd: Some("/tmp/x y".into()),
            },
            terminal: Terminal {
                stdin: true,
                stdout: false,
                stderr: true,
            },
            dirs: Dirs {
                home: "/home/me".into(),
                config: "/home/me/.config/ferry".into(),
                cache: "/home/me/.cache/ferry".into(),
            },
            warned: true,
        })));
        round_trip(ToDaemon::Status);
        round_trip(ToDaemon::Stop);
        round_trip(ToDaemon::Answer {
            id: 3,
            answer: Answer::Input(Ok("text".into())),
        });
        round_trip(ToDaemon::Answer {
            id: 4,
            answer: Answer::Input(Err(Error::usage("cannot read @x: gone").with_hint("h"))),
        });
        round_trip(ToDaemon::Answer {
            id: 5,
            answer: Answer::Elicit(Ok(json!({"action": "accept", "content": {"a": 1}}))),
        });
        round_trip(ToDaemon::Answer {
            id: 6,
            answer: Answer::Elicit(Err(ClientRequestError {
                code: -1,
                message: "no".into(),
            })),
        });
    }

    /// Earlier ferrys' daemons read `{"hello": ...}` and `{"op": "stop"}`, and answer
    /// `{"hello": ..., "pid": ...}`: a new ferry can still tell one apart and stop it.
    #[test]
    fn hellos_and_stop_are_as_earlier_ferrys_wrote_them() {
        let hello = Hello {
            hello: "ferry x".into(),
            pid: None,
        };
        assert_eq!(
            serde_json::to_value(&hello).unwrap(),
            json!({"hello": "ferry x"})
        );
        assert_eq!(
            serde_json::from_value::<Hello>(json!({"hello": "ferry y", "pid": 9})).unwrap(),
            Hello {
                hello: "ferry y".into(),
                pid: Some(9)
            }
        );
        assert_eq!(
            serde_json::to_value(ToDaemon::Stop).unwrap(),
            json!({"op": "stop"})
        );
        assert_eq!(
            serde_json::to_value(ToDaemon::Status).unwrap(),
            json!({"op": "status"})
        );
    }

    #[test]
    fn every_message_to_a_caller_comes_back_as_it_went() {
        round_trip(Hello {
            hello: "ferry 0.1.0 1.2.3".into(),
            pid: Some(42),
        });
        round_trip(ToCaller::Out("Echo: \u{1b}[31m\n".into()));
        round_trip(ToCaller::Err("\r\u{1b}[Kprogress 1/2".into()));
        round_trip(ToCaller::Ask {
            id: 1,
            question: Question::Input(None),
        });
        round_trip(ToCaller::Ask {
            id: 2,
            question: Question::Input(Some("args.json".into())),
        });
        round_trip(ToCaller::Ask {
            id: 3,
            question: Question::Elicit(json!({"message": "name?", "requestedSchema": {}})),
        });
        round_trip(ToCaller::Cold("keepAlive is false".into()));
        round_trip(ToCaller::Done(Ok(Outcome::ToolReportedError)));
        let mut error = Error::new(ErrorKind::Timeout, "slow did not answer")
            .with_hint("raise the limit")
            .with_detail("last words");
        round_trip(ToCaller::Done(Err(error.clone())));
        error.kind = ErrorKind::ClosedPipe;
        round_trip(ToCaller::Done(Err(error)));
        round_trip(ToCaller::Status(Status {
            pid: 7,
            identity: "ferry".into(),
            up_ms: 1000,
            rss_kb: 6000,
            servers: vec![crate::client::pool::ServerStatus {
                name: "ev".into(),
                identity: "stdio\0node".into(),
                pid: Some(99),
                alive: true,
                idle_ms: 5,
                up_ms: 6,
                idle_limit_ms: 600_000,
                calls: 3,
                in_flight: 1,
                transport: "stdio".into(),
                rss_kb: None,
                dir: Some("/src/repo".into()),
                apart: vec!["$AWS_PROFILE".into()],
                command_line: false,
            }],
        }));
        round_trip(ToCaller::Stopped(2));
        round_trip(ToCaller::Refused("unknown".into()));
    }
}
