//! Which backend a resource URI belongs to. A URI is routed to the server that listed it, or
//! that returned it (a `resource_link` or an embedded resource in a call's result) when no
//! other server lists it or has a template it fits; else to the one server whose resource
//! template it fits, else to the one server with resources at all. A result never takes a URI
//! from the server that listed it: one backend cannot capture another's resources.

use crate::protocol::content::uri_of;
use crate::protocol::messages::{ListView, ResultView};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// How many URIs are remembered; past this the oldest are forgotten first (a host that reads
/// a URI from a listing lists again).
const URIS_KEPT: usize = 20_000;

/// How a server came to own a URI.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    Listed,
    Returned,
}

#[derive(Default)]
struct Known {
    /// URI to (server, how, when learned).
    owners: HashMap<String, (String, Source, u64)>,
    /// (when learned, URI), oldest first; stale pairs are skipped when forgetting.
    order: VecDeque<(u64, String)>,
    next: u64,
}

impl Known {
    fn insert(&mut self, uri: &str, server: &str, source: Source) {
        self.next += 1;
        let at = self.next;
        self.owners
            .insert(uri.to_string(), (server.to_string(), source, at));
        self.order.push_back((at, uri.to_string()));
        while self.owners.len() > URIS_KEPT {
            let Some((when, oldest)) = self.order.pop_front() else {
                break;
            };
            if self
                .owners
                .get(&oldest)
                .is_some_and(|(_, _, at)| *at == when)
            {
                self.owners.remove(&oldest);
            }
        }
        // Pairs left by URIs learned again are dropped once they outnumber the URIs.
        if self.order.len() > 2 * URIS_KEPT {
            let owners = &self.owners;
            self.order
                .retain(|(when, uri)| owners.get(uri).is_some_and(|(_, _, at)| at == when));
        }
    }
}

#[derive(Default)]
pub struct Routes {
    uris: Mutex<Known>,
    /// (server, URI template), as listed.
    templates: Mutex<Vec<(String, String)>>,
}

impl Routes {
    /// `server` lists `uri`: it is `server`'s, whoever returned it before.
    pub fn learn(&self, server: &str, uri: &str) {
        let mut uris = self.uris.lock().unwrap_or_else(|e| e.into_inner());
        uris.insert(uri, server, Source::Listed);
    }

    /// The URIs a call's result names (resource links, embedded resources) belong to `server`
    /// unless another server listed them or has a template they fit.
    pub fn learn_from_result(&self, server: &str, result: &Value) {
        for block in ResultView::new(result).content().into_iter().flatten() {
            let Some(uri) = uri_of(block) else {
                continue;
            };
            let templated_elsewhere = self
                .templates
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|(s, template)| s != server && fits(template, uri));
            let mut uris = self.uris.lock().unwrap_or_else(|e| e.into_inner());
            let taken = uris.owners.get(uri).is_some_and(|(owner, source, _)| {
                owner != server && (*source == Source::Listed || templated_elsewhere)
            });
            if !taken && !templated_elsewhere {
                uris.insert(uri, server, Source::Returned);
            }
        }
    }

    /// `server`'s resource templates, as listed (replacing what it listed before).
    pub fn learn_templates(&self, server: &str, templates: &[Value]) {
        let mut known = self.templates.lock().unwrap_or_else(|e| e.into_inner());
        known.retain(|(s, _)| s != server);
        known.extend(
            templates
                .iter()
                .filter_map(|t| ListView::new(t).uri_template())
                .map(|t| (server.to_string(), t.to_string())),
        );
    }

    /// The server `uri` belongs to, if that can be told; `with_resources` are the servers
    /// that may have resources at all.
    pub fn route(&self, uri: &str, with_resources: &[String]) -> Option<String> {
        if let Some((server, _, _)) = self
            .uris
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .owners
            .get(uri)
        {
            return Some(server.clone());
        }
        let fitting: Vec<String> = {
            let templates = self.templates.lock().unwrap_or_else(|e| e.into_inner());
            let mut servers: Vec<String> = templates
                .iter()
                .filter(|(_, template)| fits(template, uri))
                .map(|(server, _)| server.clone())
                .collect();
            servers.dedup();
            servers
        };
        match (fitting.as_slice(), with_resources) {
            ([one], _) => Some(one.clone()),
            ([], [only]) => Some(only.clone()),
            _ => None,
        }
    }
}

/// Whether `uri` could come from `template` (RFC 6570): its literal parts appear in order,
/// the first at the start and the last at the end.
fn fits(template: &str, uri: &str) -> bool {
    let mut literals = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        literals.push(&rest[..open]);
        match rest[open..].find('}') {
            Some(close) => rest = &rest[open + close + 1..],
            None => return false,
        }
    }
    literals.push(rest);
    let (first, last) = (literals[0], literals[literals.len() - 1]);
    if literals.len() == 1 {
        return uri == first;
    }
    if !uri.starts_with(first) || !uri[first.len()..].ends_with(last) {
        return false;
    }
    let mut middle = &uri[first.len()..uri.len() - last.len()];
    for literal in &literals[1..literals.len() - 1] {
        match middle.find(literal) {
            Some(at) => middle = &middle[at + literal.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uris_go_where_they_came_from() {
        let routes = Routes::default();
        routes.learn("a", "demo://resource/static/1");
        routes.learn_templates(
            "b",
            &[json!({"uriTemplate": "notes://{name}/v{version}.txt"})],
        );
        routes.learn_from_result(
            "c",
            &json!({"content": [{"type": "resource_link", "uri": "file:///x", "name": "x"},
                {"type": "resource", "resource": {"uri": "mem://y", "text": "y"}}]}),
        );
        let all = ["a".to_string(), "b".to_string(), "c".to_string()];
        assert_eq!(
            routes.route("demo://resource/static/1", &all).as_deref(),
            Some("a")
        );
        assert_eq!(
            routes.route("notes://todo/v2.txt", &all).as_deref(),
            Some("b")
        );
        assert_eq!(routes.route("notes://todo/2.txt", &all), None);
        assert_eq!(routes.route("file:///x", &all).as_deref(), Some("c"));
        assert_eq!(routes.route("mem://y", &all).as_deref(), Some("c"));
        assert_eq!(routes.route("other://z", &all), None);
        assert_eq!(routes.route("other://z", &all[..1]).as_deref(), Some("a"));
        // Another server's result takes neither a listed URI nor one of a template's.
        routes.learn_from_result(
            "c",
            &json!({"content": [{"type": "resource_link", "uri": "demo://resource/static/1", "name": "x"},
                {"type": "resource_link", "uri": "notes://todo/v3.txt", "name": "y"}]}),
        );
        assert_eq!(
            routes.route("demo://resource/static/1", &all).as_deref(),
            Some("a")
        );
        assert_eq!(
            routes.route("notes://todo/v3.txt", &all).as_deref(),
            Some("b")
        );
    }

    #[test]
    fn past_the_limit_the_oldest_uris_go_first() {
        let routes = Routes::default();
        for n in 0..URIS_KEPT + 10 {
            routes.learn("a", &format!("x://{n}"));
        }
        let none: [String; 0] = [];
        assert_eq!(routes.route("x://0", &none), None);
        assert_eq!(routes.route("x://9", &none), None);
        assert_eq!(routes.route("x://10", &none).as_deref(), Some("a"));
        let last = format!("x://{}", URIS_KEPT + 9);
        assert_eq!(routes.route(&last, &none).as_deref(), Some("a"));
    }
}
