//! The words `find` knows about English, not about any server: words that say nothing, idioms,
//! everyday synonyms and near-words, and the actions verbs name. Every entry must hold for a
//! task phrased by anyone, on servers nobody here has seen (the held-out set checks it).

/// Words that say nothing about which tool is meant.
pub(super) fn is_stopword(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "the"
            | "to"
            | "of"
            | "for"
            | "in"
            | "on"
            | "with"
            | "and"
            | "or"
            | "by"
            | "from"
            | "my"
            | "me"
            | "i"
            | "it"
            | "its"
            | "this"
            | "that"
            | "these"
            | "those"
            | "is"
            | "be"
            | "been"
            | "was"
            | "were"
            | "am"
            | "are"
            | "please"
            | "into"
            | "at"
            | "as"
            | "can"
            | "could"
            | "would"
            | "should"
            | "will"
            | "you"
            | "your"
            | "we"
            | "our"
            | "us"
            | "they"
            | "them"
            | "their"
            | "he"
            | "she"
            | "his"
            | "her"
            | "use"
            | "using"
            | "some"
            | "all"
            | "any"
            | "do"
            | "does"
            | "did"
            | "how"
            | "what"
            | "which"
            | "who"
            | "whom"
            | "whose"
            | "where"
            | "when"
            | "why"
            | "there"
            | "here"
            | "so"
            | "then"
            | "than"
            | "just"
            | "about"
            | "want"
            | "need"
            | "let"
            | "s"
            | "t"
            | "d"
            | "ll"
            | "re"
            | "ve"
            | "m"
            | "isn"
            | "aren"
            | "don"
            | "doesn"
            | "didn"
            | "haven"
            | "hasn"
            | "won"
            | "yet"
            | "have"
            | "has"
            | "had"
            | "out"
            | "up"
            | "right"
            | "very"
            | "really"
            | "also"
            | "one"
            | "thing"
            | "things"
            | "something"
            | "stuff"
            | "tool"
    )
}

/// Idioms read as the words they mean, before words are split and stemmed. They are about
/// English, not about any server.
pub(super) const IDIOMS: &[(&str, &str)] = &[
    ("get rid of", "delete"),
    ("look up", "search"),
    ("look for", "search"),
    ("find out", "get"),
    ("money back", "refund"),
    ("how many", "count"),
    ("how much", "amount"),
    ("how big", "size"),
    ("how large", "size"),
    ("how far", "distance"),
    ("how long", "duration"),
    ("what's in", "list contents"),
    ("what is in", "list contents"),
    ("go back", "back"),
    ("back up", "backup"),
    ("where is", "location"),
    ("where are", "location"),
    ("what time is it", "current time"),
    ("who am i", "whoami current user"),
    ("go forward", "forward"),
    ("go to", "navigate"),
    ("thumbs up", "reaction emoji"),
    ("logged in as", "authenticated user"),
    ("logged in", "authenticated"),
    ("log in", "login"),
    ("sign in", "login"),
    ("sign up", "register"),
    ("set up", "create configure"),
    ("turn on", "enable"),
    ("turn off", "disable"),
    ("switch on", "enable"),
    ("switch off", "disable"),
    ("clean up", "cleanup delete"),
    ("roll back", "rollback"),
    ("check out", "checkout"),
    ("fill in", "fill"),
    ("fill out", "fill"),
    ("write down", "save"),
    ("to-do", "todo"),
    ("to do list", "todo"),
    ("e-mail", "email"),
];

/// Everyday synonyms and near-words: a query word also matches these, at [`NEAR_WEIGHT`](super::NEAR_WEIGHT).
/// Abbreviations people type stand here too. Entries are about language, not about any
/// server's tools.
pub(super) const NEAR_WORDS: &[(&str, &[&str])] = &[
    // Actions.
    ("make", &["create", "new", "add"]),
    ("create", &["make", "new", "add"]),
    ("new", &["create"]),
    ("add", &["create", "insert", "append", "sum"]),
    ("leave", &["add", "post", "create"]),
    ("insert", &["add", "create"]),
    ("append", &["add", "insert"]),
    ("build", &["create", "generate"]),
    ("generate", &["create", "make"]),
    ("open", &["create", "new", "navigate"]),
    ("start", &["begin", "launch", "create"]),
    ("begin", &["start"]),
    ("launch", &["start", "run"]),
    ("show", &["get", "list", "view", "display"]),
    ("view", &["get", "show", "read"]),
    ("see", &["get", "view", "list", "show"]),
    ("display", &["show", "get", "view"]),
    ("get", &["retrieve", "fetch", "read"]),
    ("retrieve", &["get", "fetch"]),
    ("fetch", &["get", "retrieve", "download"]),
    ("read", &["get", "view", "fetch"]),
    ("download", &["fetch", "get", "retrieve"]),
    ("list", &["show", "get"]),
    ("remove", &["delete", "drop"]),
    ("delete", &["remove", "drop"]),
    ("erase", &["delete", "remove"]),
    ("drop", &["delete", "remove"]),
    ("destroy", &["delete", "remove"]),
    ("discard", &["delete", "remove"]),
    ("wipe", &["delete", "clear"]),
    ("find", &["search", "query", "get"]),
    ("search", &["find", "query"]),
    ("lookup", &["search", "find", "get"]),
    ("locate", &["find", "search"]),
    ("query", &["search", "find"]),
    ("run", &["execute", "exec", "invoke", "start"]),
    ("execute", &["run", "exec"]),
    ("exec", &["execute", "run"]),
    ("invoke", &["run", "execute", "call"]),
    ("trigger", &["run", "execute", "start"]),
    ("change", &["update", "edit", "modify", "set"]),
    ("edit", &["update", "modify", "change"]),
    ("modify", &["update", "edit", "change"]),
    ("update", &["edit", "modify", "change"]),
    ("alter", &["update", "modify", "change"]),
    ("set", &["update", "put", "configure"]),
    ("put", &["set", "add", "move"]),
    ("save", &["write", "store", "set", "put"]),
    ("store", &["save", "set", "put"]),
    ("write", &["create", "save", "put"]),
    ("send", &["post", "publish"]),
    ("post", &["send", "publish", "create"]),
    ("publish", &["post", "send", "deploy", "release"]),
    ("reply", &["respond", "answer", "comment"]),
    ("respond", &["reply", "answer"]),
    ("stop", &["kill", "terminate", "cancel", "end", "halt"]),
    ("kill", &["terminate", "stop", "end"]),
    ("terminate", &["kill", "stop", "end"]),
    ("cancel", &["stop", "abort", "end"]),
    ("abort", &["cancel", "stop"]),
    ("end", &["stop", "close", "finish"]),
    ("close", &["resolve", "end", "stop"]),
    ("finish", &["complete", "end", "done"]),
    ("done", &["transition", "status", "complete", "resolve"]),
    ("complete", &["done", "finish", "resolve"]),
    ("resolve", &["close", "done", "complete"]),
    ("reopen", &["open", "restore"]),
    ("restore", &["recover", "undo"]),
    ("undo", &["revert", "reset", "rollback"]),
    ("revert", &["rollback", "undo", "reset"]),
    ("rollback", &["revert", "undo", "previous"]),
    ("pause", &["suspend", "stop"]),
    ("resume", &["continue", "restart", "start"]),
    ("restart", &["reboot", "reload", "start"]),
    ("reload", &["refresh", "restart"]),
    ("refresh", &["reload", "update"]),
    ("move", &["transfer", "relocate", "rename"]),
    ("rename", &["move"]),
    ("copy", &["duplicate", "clone"]),
    ("duplicate", &["copy", "clone"]),
    ("clone", &["copy", "fork"]),
    ("upload", &["attach", "put"]),
    ("attach", &["upload", "attachment"]),
    ("check", &["verify", "validate", "status"]),
    ("verify", &["check", "validate"]),
    ("validate", &["check", "verify", "lint"]),
    ("test", &["check", "verify"]),
    ("inspect", &["get", "describe", "details"]),
    ("describe", &["details", "info", "schema"]),
    ("explain", &["describe", "documentation"]),
    ("debug", &["inspect", "diagnose", "troubleshoot"]),
    ("deploy", &["release", "publish"]),
    ("release", &["deploy", "version"]),
    ("ship", &["deploy", "release"]),
    ("log", &["add", "record", "worklog"]),
    ("record", &["capture", "log", "start"]),
    ("capture", &["record", "take", "screenshot"]),
    ("track", &["log", "record", "monitor"]),
    ("remember", &["save", "store", "memory"]),
    ("summarize", &["summary", "summarizer"]),
    ("convert", &["transform", "translate"]),
    ("transform", &["convert"]),
    ("translate", &["convert"]),
    ("scale", &["resize", "replicas"]),
    ("resize", &["scale"]),
    ("enable", &["on", "activate"]),
    ("disable", &["off", "deactivate"]),
    ("assign", &["set", "assignee"]),
    ("watch", &["watcher", "follow", "subscribe"]),
    ("follow", &["watch", "subscribe"]),
    ("react", &["reaction", "emoji"]),
    ("visit", &["navigate", "open"]),
    ("browse", &["navigate", "list"]),
    ("type", &["fill", "enter", "input"]),
    ("fill", &["type", "enter", "input"]),
    ("enter", &["type", "fill", "input"]),
    ("press", &["click", "key"]),
    ("tap", &["click", "press"]),
    ("hover", &["mouse"]),
    ("scrape", &["crawl", "extract", "fetch"]),
    ("crawl", &["scrape", "spider"]),
    ("extract", &["scrape", "parse"]),
    ("merge", &["combine"]),
    ("refund", &["reimburse", "return"]),
    ("charge", &["payment", "pay", "bill"]),
    ("pay", &["payment", "charge"]),
    // Things.
    ("folder", &["directory", "dir"]),
    ("directory", &["folder", "dir"]),
    ("dir", &["directory", "folder"]),
    ("page", &["webpage", "document", "url"]),
    ("webpage", &["page", "web", "url"]),
    ("website", &["site", "web", "url"]),
    ("site", &["website", "web", "url", "domain", "app"]),
    ("web", &["internet", "website", "online"]),
    ("internet", &["web", "online"]),
    ("online", &["web", "internet"]),
    ("url", &["link", "address", "page"]),
    ("link", &["url"]),
    ("ticket", &["issue", "bug"]),
    ("bug", &["issue", "error"]),
    ("issue", &["ticket", "bug"]),
    ("problem", &["issue", "error"]),
    ("error", &["exception", "issue", "problem"]),
    ("exception", &["error"]),
    ("hour", &["worklog", "time"]),
    ("minute", &["time"]),
    ("worklog", &["hours", "time", "log"]),
    ("status", &["state", "transition", "health"]),
    ("state", &["status"]),
    ("health", &["status"]),
    ("picture", &["image", "photo", "screenshot"]),
    ("image", &["picture", "photo", "img"]),
    ("photo", &["image", "picture"]),
    ("img", &["image"]),
    ("screen", &["screenshot", "display"]),
    ("video", &["screencast", "recording", "movie"]),
    ("movie", &["video"]),
    ("doc", &["document", "documentation", "docs"]),
    ("docs", &["documentation", "document"]),
    ("documentation", &["docs", "doc", "reference", "manual"]),
    ("manual", &["documentation", "docs"]),
    ("document", &["doc", "file", "page", "record"]),
    ("file", &["document"]),
    ("text", &["content"]),
    ("content", &["text", "body"]),
    ("comment", &["note", "reply"]),
    ("note", &["document", "comment", "memo"]),
    ("message", &["msg", "post", "chat"]),
    ("msg", &["message"]),
    ("chat", &["message", "conversation", "channel"]),
    ("conversation", &["chat", "thread", "discussion", "history"]),
    ("discussion", &["thread", "conversation", "comment"]),
    ("thread", &["discussion", "conversation", "reply"]),
    ("history", &["log", "recent", "past"]),
    ("recent", &["latest", "last", "history"]),
    ("latest", &["recent", "newest", "last"]),
    ("last", &["latest", "recent", "previous"]),
    ("previous", &["prior", "last", "back"]),
    ("current", &["now", "active", "today"]),
    ("now", &["current"]),
    ("today", &["current", "now", "daily"]),
    ("daily", &["day", "periodic", "today"]),
    ("weekly", &["week", "periodic"]),
    ("day", &["date", "daily"]),
    ("date", &["day", "time"]),
    ("size", &["length", "bytes", "big"]),
    ("big", &["size", "large"]),
    ("large", &["size", "big"]),
    ("count", &["number", "total"]),
    ("number", &["count", "total"]),
    ("total", &["count", "sum"]),
    ("sum", &["total", "add"]),
    ("amount", &["total", "balance", "count"]),
    ("money", &["balance", "payment", "funds", "amount"]),
    ("funds", &["balance", "money"]),
    ("balance", &["funds", "money"]),
    ("price", &["cost", "pricing"]),
    ("cost", &["price", "pricing", "spend"]),
    ("pricing", &["price", "cost"]),
    ("bill", &["invoice", "billing"]),
    ("invoice", &["bill", "billing"]),
    ("discount", &["coupon", "promotion", "promo"]),
    ("coupon", &["discount", "promo"]),
    ("promo", &["coupon", "discount", "promotion"]),
    ("subscription", &["plan", "subscribe", "membership"]),
    ("plan", &["subscription", "tier"]),
    ("customer", &["client", "user"]),
    ("client", &["customer"]),
    ("user", &["account", "member", "person", "people"]),
    ("person", &["user", "people", "member"]),
    ("people", &["user", "person", "member"]),
    ("member", &["user", "member"]),
    ("account", &["user", "profile"]),
    ("profile", &["account", "user"]),
    ("team", &["group"]),
    ("group", &["team"]),
    ("organization", &["org", "company"]),
    ("org", &["organization"]),
    ("company", &["organization", "business"]),
    ("repo", &["repository"]),
    ("repository", &["repo", "project"]),
    ("project", &["repository", "workspace"]),
    ("workspace", &["project", "space"]),
    ("db", &["database"]),
    ("postgres", &["postgresql", "pg"]),
    ("postgresql", &["postgres", "pg"]),
    ("pg", &["postgres", "postgresql"]),
    ("commit", &["save", "record"]),
    ("database", &["db"]),
    ("sql", &["query", "database"]),
    ("column", &["field", "schema"]),
    ("field", &["column", "property"]),
    ("property", &["field", "attribute"]),
    ("attribute", &["property", "field"]),
    ("row", &["record", "entry"]),
    ("entry", &["record", "item"]),
    ("item", &["entry", "record"]),
    ("config", &["configuration", "settings"]),
    ("configuration", &["config", "settings"]),
    ("setting", &["config", "configuration", "option"]),
    ("option", &["setting", "choice"]),
    ("env", &["environment"]),
    ("environment", &["env"]),
    ("variable", &["var"]),
    ("var", &["variable"]),
    ("password", &["secret", "credential"]),
    ("secret", &["password", "credential", "key"]),
    ("credential", &["password", "secret", "key"]),
    ("permission", &["access", "role", "restriction"]),
    ("access", &["permission"]),
    ("login", &["signin", "authenticate", "auth"]),
    ("auth", &["authenticate", "authentication", "login"]),
    ("tag", &["label"]),
    ("label", &["tag"]),
    ("alert", &["alarm", "notification"]),
    ("alarm", &["alert"]),
    ("notification", &["alert", "notice"]),
    ("schedule", &["cron", "periodic"]),
    ("cron", &["schedule"]),
    ("job", &["task", "run"]),
    ("task", &["job", "todo"]),
    ("todo", &["task"]),
    ("process", &["program", "job"]),
    ("program", &["process", "application"]),
    ("app", &["application"]),
    ("application", &["app"]),
    ("command", &["cmd", "shell"]),
    ("cmd", &["command"]),
    ("shell", &["terminal", "command", "bash"]),
    ("terminal", &["shell", "console"]),
    ("console", &["terminal"]),
    ("code", &["script", "source"]),
    ("script", &["code"]),
    ("javascript", &["js", "script"]),
    ("js", &["javascript"]),
    ("performance", &["perf", "speed", "trace"]),
    ("slow", &["performance", "latency"]),
    ("speed", &["performance"]),
    ("memory", &["heap", "ram"]),
    ("leak", &["heap", "memory"]),
    ("heap", &["memory"]),
    ("tab", &["page", "window"]),
    ("window", &["tab", "viewport"]),
    ("dialog", &["popup", "modal", "alert"]),
    ("popup", &["dialog", "modal"]),
    ("modal", &["dialog", "popup"]),
    ("form", &["fields", "inputs"]),
    ("input", &["field"]),
    ("button", &["element", "link"]),
    ("element", &["node"]),
    ("mouse", &["hover", "pointer"]),
    ("keyboard", &["key", "press"]),
    ("key", &["keyboard"]),
    ("timezone", &["zone", "tz"]),
    ("tz", &["timezone"]),
    ("time", &["date", "clock"]),
    ("news", &["article", "headline"]),
    ("article", &["news", "post", "paper"]),
    ("paper", &["article", "publication"]),
    ("place", &["location", "local", "nearby"]),
    ("location", &["place", "local", "address"]),
    ("nearby", &["local", "near", "place"]),
    ("near", &["nearby", "local"]),
    ("local", &["nearby", "place"]),
    ("address", &["location", "url"]),
    ("distance", &["far", "route", "travel"]),
    ("far", &["distance"]),
    ("route", &["directions", "path"]),
    ("directions", &["route"]),
    ("markdown", &["md"]),
    ("md", &["markdown"]),
    ("pr", &["pull"]),
    ("mr", &["merge"]),
    ("k8s", &["kubernetes"]),
    ("info", &["information", "details"]),
    ("information", &["info", "details"]),
    ("details", &["info", "information"]),
    ("stats", &["statistics", "metrics"]),
    ("statistics", &["stats", "metrics"]),
    ("metric", &["statistics", "stats"]),
    ("email", &["mail", "message"]),
    ("mail", &["email"]),
    ("emoji", &["reaction"]),
    ("reaction", &["emoji"]),
    ("certificate", &["cert", "ssl", "tls"]),
    ("cert", &["certificate"]),
    ("domain", &["zone", "dns", "site"]),
    ("storage", &["bucket", "disk"]),
    ("bucket", &["storage"]),
    ("branch", &["ref"]),
    ("version", &["release", "revision"]),
    ("change", &["diff", "update", "modification"]),
    ("diff", &["changes", "difference"]),
    ("difference", &["diff"]),
    ("sprint", &["iteration"]),
    ("iteration", &["sprint"]),
];

/// Verbs by the action they name: a task's verb agrees with a tool's when they share an
/// action ("log" and "add" both add something). A verb may name more than one.
pub(super) const ACTIONS: &[(&str, &[&str])] = &[
    (
        "create",
        &[
            "create",
            "make",
            "new",
            "add",
            "insert",
            "generate",
            "build",
            "write",
            "post",
            "log",
            "record",
            "register",
            "append",
            "open",
            "put",
            "set",
            "upload",
            "save",
            "store",
            "remember",
            "start",
            "init",
            "initialize",
            "define",
            "attach",
            "leave",
            "commit",
            "comment",
        ],
    ),
    (
        "read",
        &[
            "get",
            "show",
            "view",
            "read",
            "see",
            "display",
            "fetch",
            "retrieve",
            "inspect",
            "describe",
            "return",
            "check",
            "open",
            "download",
            "look",
            "explain",
            "tell",
            "identify",
            "calculate",
            "analyze",
            "count",
            "export",
            "extract",
            "scrape",
            "capture",
            "take",
            "print",
            "preview",
            "monitor",
            "list",
        ],
    ),
    ("list", &["list", "show", "enumerate", "browse", "see"]),
    (
        "update",
        &[
            "update",
            "edit",
            "change",
            "modify",
            "set",
            "patch",
            "alter",
            "rename",
            "move",
            "transition",
            "assign",
            "configure",
            "adjust",
            "replace",
            "mark",
            "resolve",
            "toggle",
            "enable",
            "disable",
            "apply",
            "put",
            "merge",
            "approve",
            "promote",
            "scale",
            "resize",
            "convert",
            "fill",
            "type",
        ],
    ),
    (
        "delete",
        &[
            "delete",
            "remove",
            "drop",
            "erase",
            "destroy",
            "purge",
            "clear",
            "discard",
            "wipe",
            "uninstall",
            "unprotect",
            "revoke",
            "cleanup",
            "unassign",
        ],
    ),
    (
        "search",
        &[
            "search", "find", "query", "lookup", "locate", "look", "discover", "filter", "research",
        ],
    ),
    (
        "run",
        &[
            "run", "execute", "exec", "invoke", "trigger", "evaluate", "eval", "launch", "perform",
            "call", "start", "deploy", "apply",
        ],
    ),
    (
        "send",
        &[
            "send", "post", "publish", "notify", "reply", "share", "forward", "message", "comment",
            "react", "respond", "email",
        ],
    ),
    (
        "stop",
        &[
            "stop",
            "cancel",
            "kill",
            "terminate",
            "abort",
            "halt",
            "end",
            "pause",
            "close",
            "disable",
            "disconnect",
            "suspend",
            "finish",
        ],
    ),
    (
        "start",
        &[
            "start",
            "begin",
            "launch",
            "resume",
            "restart",
            "enable",
            "open",
            "connect",
            "reconnect",
            "record",
            "reload",
        ],
    ),
    (
        "navigate",
        &["navigate", "go", "visit", "open", "browse", "load"],
    ),
    (
        "click",
        &[
            "click", "press", "tap", "hover", "drag", "select", "type", "fill",
        ],
    ),
    (
        "download",
        &[
            "download", "fetch", "export", "save", "pull", "scrape", "crawl",
        ],
    ),
    (
        "restore",
        &[
            "restore", "undo", "revert", "rollback", "reset", "unstage", "recover",
        ],
    ),
];
