//! The wire between `ferry ask` and serve. The channel is private to one call: serve gives
//! each command one end of a socket pair (`FERRY_ASK_FD`), inherited and reachable by
//! nothing else (the sandbox lets a command make no socket of its own but a pair). Each
//! `ferry ask` sends one SEQPACKET message on it: the question, and one end of a fresh pair
//! of its own attached (SCM_RIGHTS) for the answer, so asks that run at once never read each
//! other's answers. The answer is one JSON object on that socket.

use super::{Answer, Ask, Asker, Question};
use crate::protocol::json_schema::SchemaView;
use serde_json::{json, Map, Value};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

/// The variable that names the call's channel in a command's environment.
pub const ASK_FD_VAR: &str = "FERRY_ASK_FD";
/// The largest question accepted, in bytes.
const MESSAGE_LIMIT: usize = 64 * 1024;
/// How many questions one call may ask.
pub const ASKS_PER_CALL: usize = 64;

/// The question as sent on the wire.
pub(super) fn encode(ask: &Ask) -> Value {
    let mut message = match &ask.question {
        Question::Confirm { message } => json!({"confirm": message}),
        Question::Elicit { message, schema } => json!({"elicit": message, "schema": schema}),
        Question::Sample {
            text,
            system,
            max_tokens,
        } => json!({"sample": text, "system": system, "max_tokens": max_tokens}),
        Question::Roots => json!({"roots": true}),
    };
    if let Some(key) = &ask.key {
        message["key"] = json!(key);
    }
    message
}

/// What is wrong with a question from the wire (`ferry ask`'s message, or its form).
#[derive(Debug, thiserror::Error)]
pub enum BadQuestion {
    #[error("{0}")]
    NotJson(#[from] serde_json::Error),
    #[error("a key is 1 to 64 letters, digits, '_', '-' or '.'")]
    Key,
    #[error("no question")]
    NoQuestion,
    #[error("--schema must be a JSON object schema")]
    SchemaNotObject,
    #[error("--schema must say \"type\": \"object\"")]
    SchemaType,
    #[error("--schema needs \"properties\"")]
    SchemaProperties,
    #[error("--schema property {0:?} must be a string, number, integer, boolean or an array of choices: a form has no nested objects")]
    NestedProperty(String),
}

/// A question from the wire; `Err` says what is wrong with it.
pub(super) fn decode(message: &Value) -> Result<Ask, BadQuestion> {
    let text = |key: &str| message.get(key).and_then(Value::as_str).map(str::to_string);
    let key = text("key");
    if let Some(key) = &key {
        let valid = !key.is_empty()
            && key.len() <= 64
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        if !valid {
            return Err(BadQuestion::Key);
        }
    }
    let question = if let Some(message) = text("confirm") {
        Question::Confirm { message }
    } else if let Some(message_text) = text("elicit") {
        let schema = message.get("schema").cloned().unwrap_or(Value::Null);
        check_form_schema(&schema)?;
        Question::Elicit {
            message: message_text,
            schema,
        }
    } else if let Some(text_) = text("sample") {
        Question::Sample {
            text: text_,
            system: text("system"),
            max_tokens: message
                .get("max_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(1000),
        }
    } else if message.get("roots").is_some() {
        Question::Roots
    } else {
        return Err(BadQuestion::NoQuestion);
    };
    Ok(Ask { key, question })
}

/// A form's schema: an object schema whose properties are flat (what elicitation allows).
pub fn check_form_schema(schema: &Value) -> Result<(), BadQuestion> {
    let Some(object) = schema.as_object() else {
        return Err(BadQuestion::SchemaNotObject);
    };
    let object = SchemaView::of(object);
    if object.type_name() != Some("object") {
        return Err(BadQuestion::SchemaType);
    }
    let Some(properties) = object.properties() else {
        return Err(BadQuestion::SchemaProperties);
    };
    for (name, property) in properties {
        let property = SchemaView::new(property);
        let kind = property.and_then(|p| p.type_name());
        let flat = matches!(kind, Some("string" | "number" | "integer" | "boolean"))
            || (kind == Some("array") && property.and_then(|p| p.items()).is_some());
        if !flat {
            return Err(BadQuestion::NestedProperty(name.clone()));
        }
    }
    Ok(())
}

/// Sends one datagram with a descriptor attached.
fn send_with_fd(socket: i32, bytes: &[u8], fd: i32) -> std::io::Result<()> {
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // SAFETY: CMSG_SPACE is a pure size computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: the header and its control buffer are set up as sendmsg(2) and cmsg(3) say, and
    // live for the call.
    unsafe {
        let mut header: libc::msghdr = std::mem::zeroed();
        header.msg_iov = &mut iov;
        header.msg_iovlen = 1;
        header.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        header.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&header);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<i32>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut i32, fd);
        if libc::sendmsg(socket, &header, libc::MSG_NOSIGNAL) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives one datagram and the descriptor attached to it, if any. `Ok(None)`: the other
/// end is closed.
fn receive_with_fd(socket: i32) -> std::io::Result<Option<(Vec<u8>, Option<OwnedFd>)>> {
    let mut buffer = vec![0u8; MESSAGE_LIMIT + 1];
    let mut iov = libc::iovec {
        iov_base: buffer.as_mut_ptr() as *mut libc::c_void,
        iov_len: buffer.len(),
    };
    // SAFETY: as in send_with_fd; the kernel fills at most what the buffers hold.
    unsafe {
        let space = libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32 * 4) as usize;
        let mut control = vec![0u8; space];
        let mut header: libc::msghdr = std::mem::zeroed();
        header.msg_iov = &mut iov;
        header.msg_iovlen = 1;
        header.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        header.msg_controllen = space as _;
        let n = libc::recvmsg(
            socket,
            &mut header,
            libc::MSG_CMSG_CLOEXEC | libc::MSG_DONTWAIT,
        );
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // Every descriptor attached is taken, so none leaks; the first is the answer's.
        let mut fds = Vec::new();
        let mut cmsg = libc::CMSG_FIRSTHDR(&header);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg) as *const i32;
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                    / std::mem::size_of::<i32>();
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&header, cmsg);
        }
        if n == 0 && fds.is_empty() {
            return Ok(None);
        }
        let truncated = header.msg_flags & libc::MSG_TRUNC != 0;
        let n = if truncated { buffer.len() } else { n as usize };
        buffer.truncate(n);
        Ok(Some((buffer, fds.into_iter().next())))
    }
}

/// A socket pair of `kind` whose ends close on exec.
fn pair(kind: i32) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: socketpair fills the two descriptors it is given.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            kind | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: descriptors socketpair just returned.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A call's end of its channel: what its command's `ferry ask`s send.
pub struct Channel {
    socket: OwnedFd,
}

impl Channel {
    /// A new channel and the end a command inherits.
    pub fn open() -> std::io::Result<(Channel, OwnedFd)> {
        let (mine, theirs) = pair(libc::SOCK_SEQPACKET)?;
        // SAFETY: fcntl on a descriptor this function owns.
        unsafe {
            let flags = libc::fcntl(mine.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(mine.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        Ok((Channel { socket: mine }, theirs))
    }

    /// Answers the questions that come until every holder of the other end has gone (the
    /// call is over), each through `asker`, at most [`ASKS_PER_CALL`] of them.
    pub async fn serve(self, asker: Arc<dyn Asker>) {
        // SAFETY: the AsyncFd owns the descriptor for its whole life.
        let Ok(socket) = (unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(
                self.socket,
                tokio::io::Interest::READABLE,
            )
        }) else {
            return;
        };
        let mut asked = 0usize;
        loop {
            let Ok(mut ready) = socket.readable().await else {
                return;
            };
            let received = match ready.try_io(|s| receive_with_fd(s.as_raw_fd())) {
                Ok(Ok(Some(received))) => received,
                Ok(Ok(None)) => return,
                Ok(Err(_)) => return,
                Err(_would_block) => continue,
            };
            let (bytes, Some(reply)) = received else {
                continue; // no socket to answer on: nothing to do
            };
            asked += 1;
            let answer = if asked > ASKS_PER_CALL {
                Some(Answer::cannot(format!(
                    "a call may ask at most {ASKS_PER_CALL} questions"
                )))
            } else if bytes.len() > MESSAGE_LIMIT {
                Some(Answer::cannot(format!(
                    "a question is at most {MESSAGE_LIMIT} bytes"
                )))
            } else {
                None
            };
            let asker = asker.clone();
            tokio::spawn(async move {
                let answer = match answer {
                    Some(refused) => refused,
                    None => match serde_json::from_slice::<Value>(&bytes)
                        .map_err(BadQuestion::from)
                        .and_then(|m| decode(&m))
                    {
                        Ok(ask) => super::ask(asker.as_ref(), ask).await,
                        Err(why) => Answer::cannot(format!("a question ferry cannot read: {why}")),
                    },
                };
                reply_with(reply, &answer).await;
            });
        }
    }
}

/// Writes an answer to a `ferry ask`'s own socket.
async fn reply_with(socket: OwnedFd, answer: &Answer) {
    let message = json!({"exit": answer.exit, "out": answer.out, "error": answer.error});
    let stream = std::os::unix::net::UnixStream::from(socket);
    if stream.set_nonblocking(true).is_err() {
        return;
    }
    let Ok(mut stream) = tokio::net::UnixStream::from_std(stream) else {
        return;
    };
    use tokio::io::AsyncWriteExt;
    let _ = stream.write_all(message.to_string().as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// `ferry ask`'s side: sends `ask` on the channel `FERRY_ASK_FD` names and waits for the
/// answer (as long as the call lasts: serve stops the command when it times out).
pub fn ask_serve(ask: &Ask) -> Answer {
    let not_served =
        || Answer::cannot("ferry ask works only inside a command that ferry serve runs for a call");
    let Some(fd) = std::env::var(ASK_FD_VAR)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .filter(|fd| *fd > 2)
    else {
        return not_served();
    };
    let (mine, theirs) = match pair(libc::SOCK_STREAM) {
        Ok(pair) => pair,
        Err(e) => return Answer::cannot(format!("cannot make the answer's socket: {e}")),
    };
    let bytes = encode(ask).to_string();
    if send_with_fd(fd, bytes.as_bytes(), theirs.as_raw_fd()).is_err() {
        return not_served();
    }
    drop(theirs);
    let mut reply = Vec::new();
    use std::io::Read;
    let mut stream = std::os::unix::net::UnixStream::from(mine);
    if stream
        .by_ref()
        .take(16 * 1024 * 1024)
        .read_to_end(&mut reply)
        .is_err()
    {
        return Answer::cannot("the call ended before its answer came");
    }
    let Ok(message) = serde_json::from_slice::<Map<String, Value>>(&reply) else {
        return Answer::cannot("the call ended before its answer came");
    };
    Answer {
        exit: message
            .get("exit")
            .and_then(Value::as_i64)
            .map_or(3, |n| n as i32),
        out: message
            .get("out")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        error: message
            .get("error")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::BoxFuture;
    use crate::serve::ask::{Answer, Ask, Asker, ClientRequest, Question, Unanswered};
    use std::sync::Arc;

    #[test]
    fn a_form_schema_is_flat() {
        assert!(check_form_schema(
            &json!({"type": "object", "properties": {"a": {"type": "string"}}})
        )
        .is_ok());
        assert!(check_form_schema(
            &json!({"type": "object", "properties": {"a": {"type": "object"}}})
        )
        .is_err());
        assert!(check_form_schema(&json!("x")).is_err());
    }

    #[tokio::test]
    async fn questions_and_answers_cross_the_channel_without_mixing() {
        struct Echo;
        impl Asker for Echo {
            fn request(&self, request: ClientRequest) -> BoxFuture<'_, Result<Value, Unanswered>> {
                // Roots named by the question's key: each ask must get its own back.
                let key = request.key.unwrap_or_default();
                Box::pin(async move { Ok(json!({"roots": [{"uri": format!("file:///{key}")}]})) })
            }
        }
        let (channel, theirs) = Channel::open().unwrap();
        let served = tokio::spawn(channel.serve(Arc::new(Echo)));
        let fd = theirs.as_raw_fd();
        // SAFETY: set for this test's own process; the asks below read it.
        unsafe { std::env::set_var(ASK_FD_VAR, fd.to_string()) };
        let asks: Vec<_> = (0..8)
            .map(|i| {
                tokio::task::spawn_blocking(move || {
                    ask_serve(&Ask {
                        key: Some(format!("k{i}")),
                        question: Question::Roots,
                    })
                })
            })
            .collect();
        for (i, ask) in asks.into_iter().enumerate() {
            assert_eq!(ask.await.unwrap(), Answer::yes(format!("/k{i}\n")));
        }
        drop(theirs);
        served.await.unwrap();
    }
}
