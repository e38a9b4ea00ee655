//! A manifest (or quick mode's generated one) as a [`Provider`]: every call's arguments are
//! checked by the schema model, paths confined to the roots, values rendered into argv by the
//! template (never a shell, never an option), and the command run confined (`exec`).

use super::exec::{self, Ending, Finished, Job};
use super::provider::{invalid, not_found, tool_error, CallContext, Provider};
use super::sandbox::{self, Policy};
use crate::manifest::template::{self, Element, Piece};
use crate::manifest::{
    self, confine, input_schema, match_uri, mime_for_path, ItemKind, Manifest, MessagePart,
    OutputKind, Param, ParamKind, ResourceSource, ToolDef,
};
use crate::protocol::content::{BlockKind, Content, ContentBlock, ResourceContents};
use crate::protocol::messages::{CallToolResult, ErrorObject};
use crate::protocol::params::{Params, Reference};
use crate::protocol::BoxFuture;
use crate::protocol::{RpcError, ServerDescription};
use crate::schema::{validate, ToolSchema};
use crate::{Error, Result};
use base64::Engine;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A manifest ready to serve: its programs resolved once, at start, and the sandbox of each
/// command worked out.
pub struct ManifestProvider {
    manifest: Manifest,
    /// Each tool's schema, compiled once.
    schemas: Vec<ToolSchema>,
    /// Extra help for quick mode's tools: which CLI, and which subcommands are allowed.
    quick: Vec<(String, Option<Vec<String>>)>,
    /// The sandbox of each tool's, resource's and template's command, in the manifest's order
    /// (`None` everywhere when serving unconfined; for a file resource, unused).
    tool_sandboxes: Vec<Option<Arc<Policy>>>,
    resource_sandboxes: Vec<Option<Arc<Policy>>>,
    template_sandboxes: Vec<Option<Arc<Policy>>>,
    /// The sandbox of each prompt message's command, by (prompt, message).
    prompt_sandboxes: std::collections::HashMap<(usize, usize), Option<Arc<Policy>>>,
    /// What serve itself never reads for a resource or a prompt (ferry's own files).
    hidden: Vec<PathBuf>,
}

/// Whether commands run in the kernel sandbox.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Confinement {
    /// The kernel enforces each command's policy, as far as it can (the default).
    Kernel,
    /// `--unconfined`: the option tables and path checks alone.
    Unconfined,
}

/// A call's values, checked: paths resolved (for messages a person reads) and as the
/// command gets them.
struct Prepared {
    resolved: Map<String, Value>,
    given: Map<String, Value>,
}

/// A confined path as the command gets it: relative to the working directory (where commands
/// run) when the model gave a relative one, so output names it as the model did; `./` before a
/// name that starts with `-`, which a command would read as an option.
fn as_given(confined: &std::path::Path, text: &str, working_dir: &std::path::Path) -> String {
    if std::path::Path::new(text).is_absolute() {
        return confined.display().to_string();
    }
    match confined.strip_prefix(working_dir) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_string(),
        Ok(relative) if relative.to_string_lossy().starts_with('-') => {
            format!("./{}", relative.display())
        }
        Ok(relative) => relative.display().to_string(),
        Err(_) => confined.display().to_string(),
    }
}

/// Resolves a command's program to an absolute path, from the first root.
fn resolve_program(elements: &mut [Element], root: &std::path::Path, what: &str) -> Result<()> {
    if let Some(Element::Word(program)) = elements.first_mut() {
        let resolved =
            which::which_in(&*program, std::env::var_os("PATH"), root).map_err(|_| {
                Error::usage(format!("{what}: command {program:?} not found"))
                    .with_hint("install it, or give its full path in the manifest")
            })?;
        *program = resolved.display().to_string();
    }
    Ok(())
}

impl ManifestProvider {
    /// Prepares a manifest: every command is resolved to an absolute path now, so a missing
    /// one is a start-up error naming it and PATH is never looked up per call.
    pub fn new(mut manifest: Manifest, confinement: Confinement) -> Result<ManifestProvider> {
        let root = manifest.server.roots.working_dir().clone();
        for tool in &mut manifest.tools {
            resolve_program(&mut tool.command, &root, &format!("tool {:?}", tool.name))?;
        }
        for resource in &mut manifest.resources {
            if let ResourceSource::Command(command, _) = &mut resource.source {
                resolve_program(command, &root, &format!("resource {:?}", resource.uri))?;
            }
        }
        for template in &mut manifest.templates {
            resolve_program(
                &mut template.command,
                &root,
                &format!("resource template {:?}", template.uri_template),
            )?;
        }
        for prompt in &mut manifest.prompts {
            let what = format!("prompt {:?}", prompt.name);
            for message in &mut prompt.messages {
                if let MessagePart::Command(command) = &mut message.part {
                    resolve_program(command, &root, &what)?;
                }
            }
        }
        let schemas = manifest
            .tools
            .iter()
            .map(|t| ToolSchema::from_input_schema(&input_schema(&t.params)))
            .collect();
        let roots = manifest.server.roots.all().to_vec();
        let path = std::env::var_os("PATH");
        let policy = |what: String,
                      command: &[Element],
                      permissions: &manifest::Permissions,
                      writes: &[PathBuf]|
         -> Result<Option<Arc<Policy>>> {
            if confinement == Confinement::Unconfined {
                return Ok(None);
            }
            let Some(Element::Word(program)) = command.first() else {
                return Ok(None);
            };
            Policy::new(
                std::path::Path::new(program),
                permissions,
                writes,
                &roots,
                path.as_deref(),
            )
            .map(|p| Some(Arc::new(p)))
            .map_err(|why| {
                Error::usage(format!("{what}: {why}"))
                    .with_hint("install it, or fix exec in the manifest")
                    .with_source(why)
            })
        };
        let mut tool_sandboxes = Vec::new();
        for tool in &manifest.tools {
            let writes = match &tool.permissions.writes {
                Some(declared) => declared.clone(),
                None if tool.read_only() => Vec::new(),
                None => roots.clone(),
            };
            tool_sandboxes.push(policy(
                format!("tool {:?}", tool.name),
                &tool.command,
                &tool.permissions,
                &writes,
            )?);
        }
        let mut resource_sandboxes = Vec::new();
        for resource in &manifest.resources {
            resource_sandboxes.push(match &resource.source {
                ResourceSource::Command(command, permissions) => policy(
                    format!("resource {:?}", resource.uri),
                    command,
                    permissions,
                    &[],
                )?,
                ResourceSource::File(_) => None,
            });
        }
        let mut template_sandboxes = Vec::new();
        for template in &manifest.templates {
            template_sandboxes.push(policy(
                format!("resource template {:?}", template.uri_template),
                &template.command,
                &template.permissions,
                &[],
            )?);
        }
        let mut prompt_sandboxes = std::collections::HashMap::new();
        for (i, prompt) in manifest.prompts.iter().enumerate() {
            for (j, message) in prompt.messages.iter().enumerate() {
                if let MessagePart::Command(command) = &message.part {
                    let what = format!("prompt {:?}", prompt.name);
                    let policy = policy(what, command, &prompt.permissions, &[])?;
                    prompt_sandboxes.insert((i, j), policy);
                }
            }
        }
        Ok(ManifestProvider {
            manifest,
            schemas,
            quick: Vec::new(),
            prompt_sandboxes,
            tool_sandboxes,
            resource_sandboxes,
            template_sandboxes,
            hidden: sandbox::never_readable(),
        })
    }

    /// Each tool's name and sandbox policy, in order (for `--check-sandbox`).
    pub fn sandboxes(&self) -> Vec<(String, Option<Arc<Policy>>)> {
        let tools = self
            .manifest
            .tools
            .iter()
            .zip(&self.tool_sandboxes)
            .map(|(t, p)| (format!("tool {}", t.name), p.clone()));
        let resources = self
            .manifest
            .resources
            .iter()
            .zip(&self.resource_sandboxes)
            .filter(|(_, p)| p.is_some())
            .map(|(r, p)| (format!("resource {}", r.uri), p.clone()));
        let templates = self
            .manifest
            .templates
            .iter()
            .zip(&self.template_sandboxes)
            .map(|(t, p)| (format!("resource template {}", t.uri_template), p.clone()));
        let mut prompts: Vec<_> = self
            .prompt_sandboxes
            .iter()
            .map(|(&(i, j), p)| ((i, j), p.clone()))
            .collect();
        prompts.sort_by_key(|(at, _)| *at);
        let prompts = prompts.into_iter().map(|((i, j), p)| {
            (
                format!("prompt {} message {}", self.manifest.prompts[i].name, j + 1),
                p,
            )
        });
        tools
            .chain(resources)
            .chain(templates)
            .chain(prompts)
            .collect()
    }

    /// Quick mode: one tool per CLI; `--allow` limits a CLI to named subcommands.
    pub fn quick(
        clis: &[manifest::quick::QuickCli],
        dir: PathBuf,
        network: bool,
        confinement: Confinement,
    ) -> Result<ManifestProvider> {
        let manifest = manifest::quick::manifest(clis, dir, network);
        let quick = clis
            .iter()
            .map(|cli| (cli.program.clone(), cli.allowed.clone()))
            .collect();
        let mut provider = ManifestProvider::new(manifest, confinement)?;
        provider.quick = quick;
        Ok(provider)
    }

    /// The manifest served.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// How many calls may run at once.
    pub fn concurrency(&self) -> usize {
        self.manifest.server.concurrency
    }

    /// The environment a command gets: the base allowlist and the manifest's globs, from
    /// ferry's own environment (never from a call's values).
    fn environment(&self) -> BTreeMap<String, String> {
        let globs: Vec<&str> = manifest::BASE_ENV
            .iter()
            .copied()
            .chain(self.manifest.server.env.iter().map(String::as_str))
            .collect();
        // The HTTP token guards the server the command runs under: never the command's.
        crate::words::utf8_env()
            .filter(|(name, _)| name != "FERRY_SERVE_TOKEN")
            .filter(|(name, _)| globs.iter().any(|g| crate::words::glob_match(g, name)))
            .collect()
    }

    fn job(
        &self,
        argv: Vec<String>,
        stdin: Option<Vec<u8>>,
        timeout: Option<Duration>,
        progress: Option<&str>,
        sandbox: &Option<Arc<Policy>>,
        asker: &Arc<dyn super::ask::Asker>,
    ) -> Job {
        Job {
            argv,
            env: self.environment(),
            cwd: self.manifest.server.roots.working_dir().clone(),
            stdin,
            timeout: timeout.unwrap_or(self.manifest.server.timeout),
            max_output: self.manifest.server.max_output,
            progress: progress.and_then(|p| fancy_regex::Regex::new(p).ok()),
            sandbox: sandbox.clone(),
            asker: asker.clone(),
        }
    }

    /// Checks a call's values against its parameters, fills defaults and resolves paths;
    /// `Err` is what to tell the model. The values come twice: with paths resolved (what a
    /// person confirms), and with paths as the command gets them (see [`as_given`]).
    fn prepare(
        &self,
        params: &[Param],
        schema: &ToolSchema,
        mut arguments: Map<String, Value>,
    ) -> std::result::Result<Prepared, Unfit> {
        validate::numbers_from_text(schema, &mut arguments);
        validate::check_arguments(schema, &arguments).map_err(Unfit::Schema)?;
        let mut values = arguments;
        for param in params {
            if !values.contains_key(&param.name) {
                if let Some(default) = &param.default {
                    values.insert(param.name.clone(), default.clone());
                }
            }
        }
        if let Some(name) = values
            .iter()
            .find(|(_, v)| contains_nul(v))
            .map(|(k, _)| k.clone())
        {
            return Err(Unfit::Nul(name));
        }
        let roots = &self.manifest.server.roots;
        let mut given = values.clone();
        for param in params {
            let is_path = matches!(
                param.kind,
                ParamKind::Path | ParamKind::Array(ItemKind::Path)
            );
            let (Some(value), Some(as_command)) = (
                values.get_mut(&param.name).filter(|_| is_path),
                given.get_mut(&param.name),
            ) else {
                continue;
            };
            let resolve = |text: &str| -> std::result::Result<(Value, Value), Unfit> {
                let path = roots.working_dir().join(text);
                let confined =
                    confine(&path, roots.all(), param.exists).map_err(|why| Unfit::Path {
                        param: param.name.clone(),
                        text: text.to_string(),
                        why,
                    })?;
                Ok((
                    Value::String(confined.display().to_string()),
                    Value::String(as_given(&confined, text, roots.working_dir())),
                ))
            };
            match value {
                Value::String(text) => {
                    let (resolved, relative) = resolve(text)?;
                    *as_command = relative;
                    *value = resolved;
                }
                Value::Array(items) => {
                    let Value::Array(command_items) = as_command else {
                        continue;
                    };
                    for (item, command_item) in items.iter_mut().zip(command_items.iter_mut()) {
                        if let Value::String(text) = item {
                            let (resolved, relative) = resolve(text)?;
                            *command_item = relative;
                            *item = resolved;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(Prepared {
            resolved: values,
            given,
        })
    }

    /// The help a model needs to fix its arguments, in its own terms: JSON property names
    /// (`count int required [1..10]`), not the command line's `--count`.
    fn help_for(&self, tool: &ToolDef) -> String {
        crate::render::json_help(&tool.to_tool())
    }

    async fn call_tool(
        &self,
        index: usize,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> std::result::Result<Value, RpcError> {
        let tool = &self.manifest.tools[index];
        let Prepared {
            resolved: values,
            given,
        } = match self.prepare(&tool.params, &self.schemas[index], arguments) {
            Ok(prepared) => prepared,
            Err(why) => {
                return Ok(tool_error(format!(
                    "Invalid arguments for {}: {why}\n{}",
                    tool.name,
                    self.help_for(tool)
                )))
            }
        };
        let argv = match template::render(&tool.command, &given, &tool.params) {
            Ok(argv) => argv,
            Err(template::Refusal(why)) => return Ok(tool_error(format!("Refused: {why}"))),
        };
        // Quick mode's tools are its CLIs, one each and in order: a tool's own CLI is checked,
        // whatever the names.
        if let Some((program, allowed)) = self.quick.get(index) {
            if let Err(why) = manifest::quick::check_args(program, &argv[1..], allowed.as_deref()) {
                return Ok(tool_error(format!("Refused: {why}")));
            }
        }
        // `confirm`: the person decides before anything runs; no, or a client that cannot ask,
        // runs nothing.
        if let Some(confirm) = &tool.confirm {
            let message = fill_text(confirm, &values);
            let question = super::ask::Ask {
                key: Some("confirm".into()),
                question: super::ask::Question::Confirm { message },
            };
            ctx.asker.watch(super::ask::Asking::Ferry);
            // The person gets as long as the command would: a question never answered holds
            // the call no longer than its timeout.
            let wait = tool.timeout.unwrap_or(self.manifest.server.timeout);
            let asked = tokio::time::timeout(wait, super::ask::ask(ctx.asker.as_ref(), question))
                .await
                .unwrap_or_else(|_| {
                    super::ask::Answer::no(format!(
                        "no answer within the tool's timeout ({}s)",
                        wait.as_secs_f64()
                    ))
                });
            match asked.exit {
                0 => {}
                1 => {
                    return Ok(tool_error(format!(
                        "{} was not confirmed ({}): nothing was run",
                        tool.name,
                        asked.error.as_deref().unwrap_or("declined")
                    )))
                }
                _ => {
                    return Ok(tool_error(format!(
                        "{} asks the person to confirm first, and {}: nothing was run",
                        tool.name,
                        asked.error.as_deref().unwrap_or("the client cannot ask")
                    )))
                }
            }
        }
        let stdin = tool
            .stdin
            .as_ref()
            .and_then(|name| values.get(name))
            .map(|v| template::value_text(v).into_bytes());
        let sandbox = &self.tool_sandboxes[index];
        // The slot is taken only now that the command is to run, and given back while the
        // command waits for its client (`ferry ask`): a question to the person holds none.
        let (_slot, asker) = super::provider::Yielding::hold(&ctx).await?;
        let job = self.job(
            argv,
            stdin,
            tool.timeout,
            tool.progress.as_deref(),
            sandbox,
            &asker,
        );
        let timeout = job.timeout;
        let progress_ctx = ctx.clone();
        let log_ctx = ctx.clone();
        let logger = tool.name.clone();
        let finished = exec::run(
            job,
            move |done, total| progress_ctx.progress(done, total, None),
            move |line| log_ctx.log("info", &logger, json!(line)),
        )
        .await;
        match finished {
            Ok(finished) => {
                let removed = finished.removed_git.clone();
                let refused = sandbox.as_ref().and_then(|policy| {
                    let failed = !matches!(finished.ending, Ending::Exited(code) if tool.ok_exit.contains(&code));
                    // A refusal is said whatever the exit code (`find -exec` denied still exits
                    // 0 or 1); on success only stderr counts, stdout being the command's data.
                    let said = if failed {
                        format!("{}\n{}", finished.stderr.text(), finished.stdout.text())
                    } else {
                        finished.stderr.text()
                    };
                    sandbox::explain_denial(policy, self.manifest.server.roots.working_dir(), &said)
                });
                let result = call_result(tool, finished, timeout, ctx.era.is_stateless())?;
                let result = match refused {
                    Some(denial) => {
                        super::metrics::record_refusal(denial.rule);
                        with_first_line(result, &denial.line)
                    }
                    None => result,
                };
                Ok(match removed.is_empty() {
                    true => result,
                    false => {
                        let mut result = with_first_line(result, &format!(
                            "refused by the sandbox: a served command may not make a git repository (.git) where it writes; removed: {}",
                            removed.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")
                        ));
                        result["isError"] = json!(true);
                        result
                    }
                })
            }
            Err(e) => Ok(tool_error(format!(
                "{} could not be started: {e}",
                tool.name
            ))),
        }
    }

    /// Runs a resource's or a template's command and returns its stdout, or an error.
    async fn run_for_resource(
        &self,
        argv: Vec<String>,
        what: &str,
        sandbox: &Option<Arc<Policy>>,
        ctx: &CallContext,
    ) -> std::result::Result<Vec<u8>, RpcError> {
        let (_slot, asker) = super::provider::Yielding::hold(ctx).await?;
        let job = self.job(argv, None, None, None, sandbox, &asker);
        let finished = exec::run(job, |_, _| {}, |_| {})
            .await
            .map_err(|e| internal(format!("{what} could not be started: {e}")))?;
        match finished.ending {
            Ending::Exited(0) => finished.stdout.whole().ok_or_else(|| {
                internal(format!(
                    "{what}'s output is over max_output ({} bytes)",
                    self.manifest.server.max_output
                ))
            }),
            Ending::Exited(code) => Err(internal(format!(
                "{what} failed (exit code {code}): {}",
                finished.stderr.last_lines(5)
            ))),
            Ending::Signaled(signal) => {
                Err(internal(format!("{what} was killed by signal {signal}")))
            }
            Ending::TimedOut => Err(internal(format!("{what} timed out and was stopped"))),
        }
    }

    /// Reads a file the manifest names (a static resource, a prompt's image) as it is now:
    /// where it leads is checked on the opened file, so a file that became a link to
    /// somewhere outside the roots since serving started is refused.
    async fn read_file(
        &self,
        path: &std::path::Path,
    ) -> std::result::Result<Vec<u8>, manifest::PathRefusal> {
        let path = path.to_path_buf();
        let roots = self.manifest.server.roots.all().to_vec();
        let hidden = self.hidden.clone();
        let limit = self.manifest.server.max_output;
        tokio::task::spawn_blocking(move || manifest::read_confined(&path, &roots, &hidden, limit))
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?
    }

    async fn read_uri(&self, uri: &str, ctx: &CallContext) -> std::result::Result<Value, RpcError> {
        if let Some(index) = self.manifest.resources.iter().position(|r| r.uri == uri) {
            let resource = &self.manifest.resources[index];
            let (bytes, guessed) = match &resource.source {
                ResourceSource::File(path) => (
                    self.read_file(path)
                        .await
                        .map_err(|why| internal(format!("cannot read {uri}: {why}")))?,
                    mime_for_path(path),
                ),
                ResourceSource::Command(command, _) => {
                    let argv = template::render(command, &Map::new(), &Vec::<Param>::new())
                        .map_err(|r| internal(r.0))?;
                    let sandbox = &self.resource_sandboxes[index];
                    (
                        self.run_for_resource(argv, uri, sandbox, ctx).await?,
                        "text/plain",
                    )
                }
            };
            let mime = resource.mime_type.as_deref().unwrap_or(guessed);
            return Ok(json!({"contents": [contents(uri, mime, bytes)]}));
        }
        for (index, template) in self.manifest.templates.iter().enumerate() {
            let path_like = |name: &str| {
                template
                    .params
                    .iter()
                    .any(|p| p.name == name && p.kind == ParamKind::Path)
            };
            let Some(values) = match_uri(&template.uri_template, uri, path_like) else {
                continue;
            };
            let schema = ToolSchema::from_input_schema(&input_schema(&template.params));
            // Template values arrive as text: numbers are read as numbers where declared.
            let values: Map<String, Value> = values
                .into_iter()
                .map(|(name, value)| {
                    let kind = template
                        .params
                        .iter()
                        .find(|p| p.name == name)
                        .map(|p| &p.kind);
                    let typed = match (kind, value.as_str()) {
                        (Some(ParamKind::Integer | ParamKind::Number), Some(text)) => {
                            validate::parse_number(text).unwrap_or(value)
                        }
                        _ => value,
                    };
                    (name, typed)
                })
                .collect();
            let values = self
                .prepare(&template.params, &schema, values)
                .map_err(|why| invalid(format!("{uri}: {why}")))?
                .given;
            let argv = template::render(&template.command, &values, &template.params)
                .map_err(|r| invalid(format!("{uri}: {}", r.0)))?;
            let sandbox = &self.template_sandboxes[index];
            let bytes = self.run_for_resource(argv, uri, sandbox, ctx).await?;
            let mime = template.mime_type.as_deref().unwrap_or("text/plain");
            return Ok(json!({"contents": [contents(uri, mime, bytes)]}));
        }
        Err(not_found(uri))
    }
}

fn contains_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(contains_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || contains_nul(v)),
        _ => false,
    }
}

fn internal(message: String) -> RpcError {
    RpcError {
        code: crate::protocol::INTERNAL_ERROR,
        message,
        data: None,
    }
}

/// A tool result with `line` put before its first text block (what the sandbox refused).
fn with_first_line(mut result: Value, line: &str) -> Value {
    match result.pointer_mut("/content/0/text") {
        Some(Value::String(text)) => *text = format!("{line}\n{text}"),
        _ => return tool_error(line),
    }
    result
}

fn is_text_mime(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json"
                | "application/toml"
                | "application/xml"
                | "application/yaml"
                | "application/javascript"
        )
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
}

/// One entry of `contents`: text when the type is text and the bytes are UTF-8, else a blob.
fn contents(uri: &str, mime: &str, bytes: Vec<u8>) -> Value {
    if is_text_mime(mime) {
        if let Ok(text) = String::from_utf8(bytes.clone()) {
            return ResourceContents::text(uri, mime, text).to_value();
        }
    }
    ResourceContents::blob(
        uri,
        mime,
        base64::engine::general_purpose::STANDARD.encode(bytes),
    )
    .to_value()
}

/// Why a call's arguments do not fit its parameters (told to the model).
#[derive(Debug, thiserror::Error)]
enum Unfit {
    #[error("{}", .0.message())]
    Schema(validate::Violation),
    #[error("{0} contains a NUL byte")]
    Nul(String),
    #[error("{param} {text:?}: {why}")]
    Path {
        param: String,
        text: String,
        why: manifest::PathRefusal,
    },
}

/// Why content blocks a command printed are not MCP content.
#[derive(Debug, thiserror::Error)]
enum BlockError {
    #[error("block {0} has no \"type\"")]
    NoType(usize),
    #[error("block {n} has an unknown type {kind:?}")]
    UnknownType { n: usize, kind: String },
    #[error("block {n} ({kind}) is missing a field it needs, or its data is not base64")]
    Incomplete { n: usize, kind: String },
}

/// Checks content blocks a command printed (output = "content").
fn check_blocks(blocks: &[Value]) -> std::result::Result<(), BlockError> {
    for (i, block) in blocks.iter().enumerate() {
        let n = i + 1;
        let kind = BlockKind::read(block).kind.ok_or(BlockError::NoType(n))?;
        let ok = match (kind.as_str(), Content::read(block)) {
            ("text", Content::Block(ContentBlock::Text(_))) => true,
            (
                "image" | "audio",
                Content::Block(ContentBlock::Image(m) | ContentBlock::Audio(m)),
            ) => m.mime_type.is_some() && base64_ok(&m.data),
            ("resource_link", Content::Block(ContentBlock::ResourceLink(_))) => true,
            ("resource", Content::Block(ContentBlock::Resource(r))) => r.resource.is_complete(),
            ("text" | "image" | "audio" | "resource_link" | "resource", _) => false,
            (other, _) => {
                return Err(BlockError::UnknownType {
                    n,
                    kind: other.to_string(),
                })
            }
        };
        if !ok {
            return Err(BlockError::Incomplete {
                n,
                kind: kind.to_string(),
            });
        }
    }
    Ok(())
}

fn base64_ok(data: &str) -> bool {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .is_ok()
}

/// A finished command as a `CallToolResult`.
/// A finished command as the call's answer: a `CallToolResult`, or, for `output = "content"`
/// whose command printed a JSON-RPC error object (`{"error": {"code": ..., "message": ...}}`),
/// that protocol error (a script written for MCP says when it failed as a server would).
fn call_result(
    tool: &ToolDef,
    finished: Finished,
    timeout: Duration,
    modern: bool,
) -> std::result::Result<Value, RpcError> {
    if tool.output == OutputKind::Content && finished.ending == Ending::Exited(0) {
        let printed = finished
            .stdout
            .whole()
            .and_then(|bytes| serde_json::from_slice::<Map<String, Value>>(&bytes).ok());
        if let Some(error) = printed
            .filter(|o| !o.contains_key("content"))
            .and_then(|mut o| o.remove("error"))
        {
            let error = ErrorObject::read(&error);
            if let (Some(code), Some(message)) = (error.code, error.message) {
                return Err(RpcError {
                    code,
                    message,
                    data: error.data,
                });
            }
        }
    }
    Ok(tool_result(tool, finished, timeout, modern))
}

/// Lines and characters of a successful command's stderr shown beside its output.
const STDERR_TAIL_LINES: usize = 10;
const STDERR_TAIL_CHARS: usize = 2000;

fn tool_result(tool: &ToolDef, finished: Finished, timeout: Duration, modern: bool) -> Value {
    let stderr_tail = || {
        let tail = finished.stderr.last_lines(10);
        if tail.trim().is_empty() {
            String::new()
        } else {
            format!("\nstderr (last lines):\n{tail}")
        }
    };
    match finished.ending {
        Ending::TimedOut => {
            return tool_error(format!(
                "{} timed out after {}s and was stopped (with everything it started){}",
                tool.name,
                timeout.as_secs_f64(),
                stderr_tail()
            ))
        }
        Ending::Signaled(signal) => {
            return tool_error(format!(
                "{} was killed by signal {signal}{}",
                tool.name,
                stderr_tail()
            ))
        }
        Ending::Exited(code) if !tool.ok_exit.contains(&code) => {
            let out = finished.stdout.text();
            let out = if out.trim().is_empty() {
                String::new()
            } else {
                format!("{}\n", out.trim_end())
            };
            return tool_error(format!(
                "{out}{} failed: exit code {code}{}",
                tool.name,
                stderr_tail()
            ));
        }
        Ending::Exited(_) => {}
    }
    let whole = || {
        finished.stdout.whole().ok_or_else(|| {
            tool_error(format!(
                "{}'s output is over max_output ({} bytes kept); raise max_output in the manifest",
                tool.name,
                finished.stdout.head.len() + finished.stdout.tail.len()
            ))
        })
    };
    // What a successful command wrote on stderr (warnings, partial failures) reaches the model
    // as a second block, its last lines only.
    let stderr_block = || {
        let tail = finished.stderr.last_lines(STDERR_TAIL_LINES);
        let tail: String = tail.chars().take(STDERR_TAIL_CHARS).collect();
        (!tail.trim().is_empty())
            .then(|| Content::text(format!("stderr (last lines):\n{}", tail.trim_end())))
    };
    match &tool.output {
        OutputKind::Text => {
            let mut content = vec![Content::text(finished.stdout.text())];
            content.extend(stderr_block());
            CallToolResult::of(content).to_value()
        }
        OutputKind::Json => {
            let bytes = match whole() {
                Ok(b) => b,
                Err(e) => return e,
            };
            let text = String::from_utf8_lossy(&bytes).into_owned();
            // Nothing printed is no rows (a query that matched nothing), not broken JSON.
            if text.trim().is_empty() {
                return CallToolResult::default().to_value();
            }
            match serde_json::from_str::<Value>(&text) {
                Ok(value) => {
                    let mut result = CallToolResult::of(vec![Content::text(text)]);
                    // Clients of the handshake era accept only an object here.
                    if modern || value.is_object() {
                        result.structured_content = Some(value);
                    }
                    result.to_value()
                }
                Err(e) => tool_error(format!(
                    "{} printed output that is not JSON ({e}):\n{text}",
                    tool.name
                )),
            }
        }
        OutputKind::Content => {
            let bytes = match whole() {
                Ok(b) => b,
                Err(e) => return e,
            };
            let parsed = serde_json::from_slice::<Value>(&bytes);
            let (blocks, structured) = match parsed {
                Ok(Value::Array(blocks)) => (blocks, None),
                Ok(Value::Object(mut map)) => match map.remove("content") {
                    Some(Value::Array(blocks)) => (blocks, map.remove("structuredContent")),
                    _ => return tool_error(format!("{}'s output is not MCP content: an object needs a \"content\" list", tool.name)),
                },
                Ok(_) => return tool_error(format!("{}'s output is not MCP content: it must be a list of blocks or an object with \"content\"", tool.name)),
                Err(e) => return tool_error(format!("{}'s output is not MCP content: not JSON ({e})", tool.name)),
            };
            if let Err(why) = check_blocks(&blocks) {
                return tool_error(format!("{}'s output is not MCP content: {why}", tool.name));
            }
            let mut result = json!({"content": blocks});
            if let Some(structured) = structured.filter(|s| modern || s.is_object()) {
                result["structuredContent"] = structured;
            }
            result
        }
        OutputKind::Mime(mime) => {
            let bytes = match whole() {
                Ok(b) => b,
                Err(e) => return e,
            };
            let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
            let block = if mime.starts_with("image/") {
                Content::image(data, mime)
            } else if mime.starts_with("audio/") {
                Content::audio(data, mime)
            } else {
                Content::resource(ResourceContents::blob(
                    format!("ferry://{}/output", tool.name),
                    mime,
                    data,
                ))
            };
            CallToolResult::of(vec![block]).to_value()
        }
    }
}

/// A prompt text with its `{param}` values in place.
fn fill_text(text: &str, values: &Map<String, Value>) -> String {
    match template::parse_element(text) {
        Ok(Element::Word(word)) => word,
        Ok(Element::Whole(name)) => values
            .get(&name)
            .map(template::value_text)
            .unwrap_or_default(),
        Ok(Element::Mixed(pieces)) => pieces
            .iter()
            .map(|piece| match piece {
                Piece::Text(t) => t.clone(),
                Piece::Param(n) => values.get(n).map(template::value_text).unwrap_or_default(),
            })
            .collect(),
        _ => text.to_string(),
    }
}

impl Provider for ManifestProvider {
    fn description(&self) -> ServerDescription {
        let mut capabilities = json!({"tools": {}, "completions": {}, "logging": {}});
        if !self.manifest.resources.is_empty() || !self.manifest.templates.is_empty() {
            capabilities["resources"] = json!({});
        }
        if !self.manifest.prompts.is_empty() {
            capabilities["prompts"] = json!({});
        }
        let tasks = self
            .manifest
            .tools
            .iter()
            .any(|t| t.task != manifest::TaskSupport::Never);
        if tasks {
            capabilities["extensions"] = json!({super::tasks::EXTENSION: {}});
        }
        ServerDescription {
            server_info: json!({"name": self.manifest.server.name, "version": env!("CARGO_PKG_VERSION")}),
            capabilities,
            instructions: self.manifest.server.instructions.clone(),
        }
    }

    fn task_support(&self, name: &str) -> manifest::TaskSupport {
        self.manifest
            .tools
            .iter()
            .find(|t| t.name == name)
            .map_or(manifest::TaskSupport::Never, |t| t.task)
    }

    fn tools(&self) -> Vec<Value> {
        self.manifest
            .tools
            .iter()
            .map(|t| t.to_tool().raw)
            .collect()
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, std::result::Result<Value, RpcError>> {
        Box::pin(async move {
            let Some(index) = self.manifest.tools.iter().position(|t| t.name == name) else {
                // A result, not a protocol error: the model reads it and can correct itself.
                let near = crate::words::closest(
                    name,
                    self.manifest.tools.iter().map(|t| t.name.as_str()),
                )
                .map(|n| format!("; did you mean {n}?"))
                .unwrap_or_default();
                return Ok(tool_error(format!("Unknown tool: {name}{near}")));
            };
            // A tool that needs what the client did not declare is refused before anything
            // runs: in this era with the error the spec names, before it as the tool's own.
            let tool = &self.manifest.tools[index];
            let missing: Vec<&String> = tool
                .needs
                .iter()
                .filter(|c| !super::ask::client_can(&ctx.client_capabilities, c))
                .collect();
            if !missing.is_empty() {
                let names: Vec<&str> = missing.iter().map(|c| c.as_str()).collect();
                let message = format!(
                    "{} needs the client's {} capability, which this client did not declare",
                    tool.name,
                    names.join(" and ")
                );
                if ctx.era.is_stateless() {
                    let required: Map<String, Value> =
                        names.iter().map(|c| (c.to_string(), json!({}))).collect();
                    return Err(RpcError {
                        code: crate::protocol::MISSING_CAPABILITY,
                        message,
                        data: Some(json!({"requiredCapabilities": required})),
                    });
                }
                return Ok(tool_error(message));
            }
            self.call_tool(index, arguments, ctx).await
        })
    }

    fn resources(&self) -> Vec<Value> {
        self.manifest
            .resources
            .iter()
            .map(|r| {
                let mut value = json!({"uri": r.uri, "name": r.name});
                put(&mut value, "title", &r.title);
                put(&mut value, "description", &r.description);
                let mime = r.mime_type.clone().or_else(|| match &r.source {
                    ResourceSource::File(path) => Some(mime_for_path(path).to_string()),
                    ResourceSource::Command(..) => None,
                });
                put(&mut value, "mimeType", &mime);
                value
            })
            .collect()
    }

    fn resource_templates(&self) -> Vec<Value> {
        self.manifest
            .templates
            .iter()
            .map(|t| {
                let mut value = json!({"uriTemplate": t.uri_template, "name": t.name});
                put(&mut value, "title", &t.title);
                put(&mut value, "description", &t.description);
                put(&mut value, "mimeType", &t.mime_type);
                value
            })
            .collect()
    }

    fn watched_file(&self, uri: &str) -> Option<PathBuf> {
        self.manifest
            .resources
            .iter()
            .find(|r| r.uri == uri)
            .and_then(|r| match &r.source {
                ResourceSource::File(path) => Some(path.clone()),
                ResourceSource::Command(..) => None,
            })
    }

    fn read<'a>(
        &'a self,
        uri: &'a str,
        ctx: CallContext,
    ) -> BoxFuture<'a, std::result::Result<Value, RpcError>> {
        Box::pin(async move { self.read_uri(uri, &ctx).await })
    }

    fn prompts(&self) -> Vec<Value> {
        self.manifest
            .prompts
            .iter()
            .map(|p| {
                let mut value = json!({"name": p.name});
                put(&mut value, "title", &p.title);
                put(&mut value, "description", &p.description);
                if !p.params.is_empty() {
                    value["arguments"] = Value::Array(
                        p.params
                            .iter()
                            .map(|a| {
                                let mut arg = json!({"name": a.name, "required": a.required && a.default.is_none()});
                                put(&mut arg, "description", &a.description);
                                arg
                            })
                            .collect(),
                    );
                }
                value
            })
            .collect()
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, std::result::Result<Value, RpcError>> {
        Box::pin(async move {
            let Some(index) = self.manifest.prompts.iter().position(|p| p.name == name) else {
                return Err(invalid(format!("Unknown prompt: {name}")));
            };
            let prompt = &self.manifest.prompts[index];
            let schema = ToolSchema::from_input_schema(&input_schema(&prompt.params));
            let Prepared {
                resolved: values,
                given,
            } = self
                .prepare(&prompt.params, &schema, arguments)
                .map_err(|why| invalid(format!("Invalid arguments for prompt {name}: {why}")))?;
            let mut messages = Vec::new();
            for (position, message) in prompt.messages.iter().enumerate() {
                let content = match &message.part {
                    MessagePart::Text(text) => {
                        json!({"type": "text", "text": fill_text(text, &values)})
                    }
                    MessagePart::Resource(uri) => {
                        let read = self.read_uri(uri, &ctx).await?;
                        json!({"type": "resource", "resource": read["contents"][0]})
                    }
                    MessagePart::Image(path) => {
                        let bytes = self.read_file(path).await.map_err(|why| {
                            internal(format!("cannot read {}: {why}", path.display()))
                        })?;
                        json!({"type": "image", "data": base64::engine::general_purpose::STANDARD.encode(bytes), "mimeType": mime_for_path(path)})
                    }
                    MessagePart::Command(command) => {
                        let argv = template::render(command, &given, &prompt.params)
                            .map_err(|r| invalid(format!("prompt {name}: {}", r.0)))?;
                        let sandbox = self
                            .prompt_sandboxes
                            .get(&(index, position))
                            .cloned()
                            .flatten();
                        let what = format!("prompt {name}'s command");
                        let bytes = self.run_for_resource(argv, &what, &sandbox, &ctx).await?;
                        json!({"type": "text", "text": String::from_utf8_lossy(&bytes)})
                    }
                };
                messages.push(json!({"role": message.role, "content": content}));
            }
            let mut result = json!({"messages": messages});
            put(&mut result, "description", &prompt.description);
            Ok(result)
        })
    }

    fn complete(&self, params: &Value) -> std::result::Result<Value, RpcError> {
        let reference = Reference::new(Params::new(params).reference().unwrap_or(&Value::Null));
        let argument = params
            .pointer("/argument/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let typed = params
            .pointer("/argument/value")
            .and_then(Value::as_str)
            .unwrap_or("");
        let params_of: Option<&[Param]> = match reference.kind() {
            Some("ref/prompt") => {
                let name = reference.name().unwrap_or("");
                match self.manifest.prompts.iter().find(|p| p.name == name) {
                    Some(p) => Some(&p.params),
                    None => return Err(invalid(format!("Unknown prompt: {name}"))),
                }
            }
            Some("ref/resource") => {
                let uri = reference.uri().unwrap_or("");
                self.manifest
                    .templates
                    .iter()
                    .find(|t| t.uri_template == uri)
                    .map(|t| t.params.as_slice())
            }
            _ => return Err(invalid("ref must be a ref/prompt or ref/resource")),
        };
        let values: Vec<String> = params_of
            .and_then(|ps| ps.iter().find(|p| p.name == argument))
            .map(|p| {
                p.enum_values
                    .iter()
                    .map(template::value_text)
                    .filter(|v| v.starts_with(typed))
                    .collect()
            })
            .unwrap_or_default();
        let total = values.len();
        let shown: Vec<String> = values.into_iter().take(100).collect();
        Ok(json!({"completion": {"values": shown, "total": total, "hasMore": total > 100}}))
    }
}

fn put(value: &mut Value, key: &str, field: &Option<String>) {
    if let Some(text) = field {
        value[key] = json!(text);
    }
}
