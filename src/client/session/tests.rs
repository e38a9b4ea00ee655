//! Era negotiation and multiplexing, on an in-memory transport against scripted peers.

use super::*;
use crate::client::handler::{ClientRequestError, Unattended};
use crate::protocol::BoxFuture;
use crate::transport::memory::{pair, MemoryPeer};
use std::sync::Mutex as StdMutex;

fn spec() -> ServerSpec {
    ServerSpec::ad_hoc("scripted").unwrap()
}

fn options(known_era: Option<Era>, timeout_ms: u64) -> SessionOptions {
    SessionOptions {
        timeout: Duration::from_millis(timeout_ms),
        known_era,
        handler: Arc::new(Unattended::default()),
        reconnect: None,
    }
}

/// Runs a peer that answers each request with `answer(method, params)`; `None` stays silent.
/// Every message the client sent is recorded.
fn serve(
    mut peer: MemoryPeer,
    answer: impl Fn(&str, &Value) -> Option<Value> + Send + 'static,
) -> Arc<StdMutex<Vec<Value>>> {
    let log = Arc::new(StdMutex::new(Vec::new()));
    let seen = log.clone();
    tokio::spawn(async move {
        while let Some(message) = peer.recv().await {
            seen.lock().unwrap().push(message.clone());
            let (Some(id), Some(method)) = (
                message.get("id"),
                message.get("method").and_then(Value::as_str),
            ) else {
                continue;
            };
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            if let Some(reply) = answer(method, &params) {
                let mut reply = reply;
                reply["jsonrpc"] = json!("2.0");
                reply["id"] = id.clone();
                peer.send(reply);
            }
        }
    });
    log
}

/// The methods the client sent, once the peer has seen at least `n` messages (or 2 s passed).
async fn methods_after(log: &Arc<StdMutex<Vec<Value>>>, n: usize) -> Vec<String> {
    for _ in 0..200 {
        if log.lock().unwrap().len() >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    methods(log)
}

fn methods(log: &Arc<StdMutex<Vec<Value>>>) -> Vec<String> {
    log.lock()
        .unwrap()
        .iter()
        .filter_map(|m| m.get("method").and_then(Value::as_str).map(str::to_string))
        .collect()
}

fn initialize_result() -> Value {
    json!({"result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "old", "version": "1"}}})
}

#[tokio::test]
async fn a_stateless_server_is_found_by_the_probe() {
    let (transport, peer) = pair();
    let log = serve(peer, |method, _| match method {
        "server/discover" => Some(
            json!({"result": {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "new", "version": "2"}}}}),
        ),
        "tools/list" => Some(json!({"result": {"tools": [], "resultType": "complete"}})),
        _ => None,
    });
    let session = Session::open_on(&spec(), transport, options(None, 5000))
        .await
        .unwrap();
    assert_eq!(session.era(), Era::Stateless("2026-07-28".into()));
    assert_eq!(session.description().name(), Some("new"));
    session.request("tools/list", json!({})).await.unwrap();
    assert_eq!(methods(&log), ["server/discover", "tools/list"]);
    let list = log.lock().unwrap()[1].clone();
    assert_eq!(list["params"]["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
    assert_eq!(list["params"]["_meta"][META_CLIENT_INFO]["name"], "ferry");
}

#[tokio::test]
async fn a_refused_probe_falls_back_to_the_handshake() {
    let (transport, peer) = pair();
    let log = serve(peer, |method, _| match method {
        "server/discover" => {
            Some(json!({"error": {"code": -32601, "message": "Method not found"}}))
        }
        "initialize" => Some(initialize_result()),
        "tools/list" => Some(json!({"result": {"tools": []}})),
        _ => None,
    });
    let session = Session::open_on(&spec(), transport, options(None, 5000))
        .await
        .unwrap();
    assert_eq!(session.era(), Era::Handshake("2025-11-25".into()));
    session.request("tools/list", json!({})).await.unwrap();
    assert_eq!(
        methods(&log),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
    let list = log.lock().unwrap()[3].clone();
    assert!(
        list["params"].get("_meta").is_none(),
        "no stateless _meta in the handshake era"
    );
}

#[tokio::test]
async fn a_silent_probe_falls_back_to_the_handshake_in_time() {
    let (transport, peer) = pair();
    let log = serve(peer, |method, _| match method {
        "initialize" => Some(initialize_result()),
        _ => None,
    });
    let started = std::time::Instant::now();
    // The probe waits at most the request limit (here 300 ms, below its own 2 s).
    let session = Session::open_on(&spec(), transport, options(None, 300))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(session.era(), Era::Handshake("2025-11-25".into()));
    assert_eq!(methods(&log)[..2], ["server/discover", "initialize"]);
}

#[tokio::test]
async fn a_remembered_era_skips_the_probe_and_a_wrong_one_is_found_out() {
    let (transport, peer) = pair();
    let log = serve(peer, |method, _| match method {
        "server/discover" => {
            Some(json!({"error": {"code": -32601, "message": "Method not found"}}))
        }
        "initialize" => Some(initialize_result()),
        // Before initialize this server refuses requests as "not initialized".
        "tools/list" => Some(json!({"result": {"tools": [{"name": "t"}]}})),
        _ => None,
    });
    let stale = Some(Era::Stateless("2026-07-28".into()));
    let session = Session::open_on(&spec(), transport, options(stale, 5000))
        .await
        .unwrap();
    assert!(
        methods(&log).is_empty(),
        "a remembered era sends nothing before the request"
    );
    assert_eq!(session.era(), Era::Stateless("2026-07-28".into()));
    session.request("tools/list", json!({})).await.unwrap();
    assert_eq!(methods(&log), ["tools/list"]);

    // The same server, remembered wrongly: a refusal that means "wrong era" probes again.
    let (transport, peer) = pair();
    let calls = Arc::new(StdMutex::new(0));
    let count = calls.clone();
    let log = serve(peer, move |method, _| match method {
        "server/discover" => {
            Some(json!({"error": {"code": -32601, "message": "Method not found"}}))
        }
        "initialize" => Some(initialize_result()),
        "tools/list" => {
            let mut n = count.lock().unwrap();
            *n += 1;
            if *n == 1 {
                Some(json!({"error": {"code": -32002, "message": "Not initialized"}}))
            } else {
                Some(json!({"result": {"tools": []}}))
            }
        }
        _ => None,
    });
    let stale = Some(Era::Stateless("2026-07-28".into()));
    let session = Session::open_on(&spec(), transport, options(stale, 5000))
        .await
        .unwrap();
    session.request("tools/list", json!({})).await.unwrap();
    assert_eq!(session.era(), Era::Handshake("2025-11-25".into()));
    assert_eq!(
        methods(&log),
        [
            "tools/list",
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
}

#[tokio::test]
async fn a_refused_version_is_retried_with_one_the_server_lists() {
    let (transport, peer) = pair();
    let log = serve(peer, |method, params| match method {
        "initialize" if params["protocolVersion"] == "2025-06-18" => Some(json!({"result": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}})),
        "initialize" => Some(
            json!({"error": {"code": -32602, "message": "Unsupported protocol version",
            "data": {"supported": ["2025-06-18", "2024-11-05"]}}}),
        ),
        _ => None,
    });
    let known = Some(Era::Handshake("2025-11-25".into()));
    let session = Session::open_on(&spec(), transport, options(known, 5000))
        .await
        .unwrap();
    assert_eq!(session.era(), Era::Handshake("2025-06-18".into()));
    assert_eq!(
        methods_after(&log, 3).await,
        ["initialize", "initialize", "notifications/initialized"]
    );
}

/// Answers elicitation with a fixed value.
struct Answers;

impl ClientHandler for Answers {
    fn answer<'a>(
        &'a self,
        method: &'a str,
        _params: &'a Value,
    ) -> BoxFuture<'a, std::result::Result<Value, ClientRequestError>> {
        Box::pin(async move {
            assert_eq!(method, "elicitation/create");
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        })
    }
}

#[tokio::test]
async fn input_required_rounds_are_answered_and_resent() {
    let (transport, peer) = pair();
    let log = serve(peer, |method, params| match method {
        "tools/call" if params.get("inputResponses").is_none() => Some(json!({"result": {
            "resultType": "input_required",
            "inputRequests": {"who": {"method": "elicitation/create", "params": {"message": "Name?"}}},
            "requestState": "opaque-1"}})),
        "tools/call" => Some(json!({"result": {"resultType": "complete",
            "content": [{"type": "text", "text": format!("hello {}", params["inputResponses"]["who"]["content"]["name"].as_str().unwrap_or("?"))}]}})),
        _ => None,
    });
    let session = Session::open_on(
        &spec(),
        transport,
        options(Some(Era::Stateless("2026-07-28".into())), 5000),
    )
    .await
    .unwrap();
    let context = RequestContext {
        handler: Arc::new(Answers),
        timeout: Duration::from_secs(5),
        progress: false,
        headers: Vec::new(),
        tasks: false,
    };
    let result = session
        .request_with(
            "tools/call",
            json!({"name": "greet", "arguments": {}}),
            &context,
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "hello Ada");
    let second = log.lock().unwrap()[1].clone();
    assert_eq!(second["params"]["requestState"], "opaque-1");
    assert_eq!(
        second["params"]["inputResponses"]["who"]["action"],
        "accept"
    );
}

#[tokio::test]
async fn concurrent_requests_share_one_connection() {
    let (transport, mut peer) = pair();
    let session = Session::open_on(
        &spec(),
        transport,
        options(Some(Era::Stateless("2026-07-28".into())), 5000),
    )
    .await
    .unwrap();
    // Answer in reverse order of arrival, once all three have arrived.
    tokio::spawn(async move {
        let mut got = Vec::new();
        while got.len() < 3 {
            got.push(peer.recv().await.unwrap());
        }
        for message in got.iter().rev() {
            let n = message["params"]["arguments"]["n"].clone();
            peer.send(
                json!({"jsonrpc": "2.0", "id": message["id"], "result": {"content": [], "n": n}}),
            );
        }
    });
    let call = |n: i64| {
        let session = &session;
        async move {
            session
                .request("tools/call", json!({"name": "t", "arguments": {"n": n}}))
                .await
                .unwrap()["n"]
                .clone()
        }
    };
    let (a, b, c) = tokio::join!(call(1), call(2), call(3));
    assert_eq!((a, b, c), (json!(1), json!(2), json!(3)));
}

#[tokio::test]
async fn unusable_replies_fail_at_once_not_at_the_timeout() {
    let (transport, peer) = pair();
    serve(peer, |method, _| match method {
        "tools/list" => Some(json!({})),
        _ => None,
    });
    let session = Session::open_on(
        &spec(),
        transport,
        options(Some(Era::Stateless("2026-07-28".into())), 10_000),
    )
    .await
    .unwrap();
    let started = std::time::Instant::now();
    let error = session.request("tools/list", json!({})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(error.kind, ErrorKind::Server);
    assert_eq!(
        error.message,
        "scripted answered tools/list with neither a result nor an error"
    );
}

#[tokio::test]
async fn a_closed_peer_fails_what_waits() {
    let (transport, peer) = pair();
    let session = Session::open_on(
        &spec(),
        transport,
        options(Some(Era::Stateless("2026-07-28".into())), 10_000),
    )
    .await
    .unwrap();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        peer.event(Event::Closed("it crashed".into()));
    });
    let error = session.request("tools/list", json!({})).await.unwrap_err();
    assert_eq!(error.message, "scripted stopped: it crashed");
    assert!(!session.is_alive());
}
