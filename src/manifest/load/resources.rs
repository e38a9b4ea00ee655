//! `[[resources]]` and `[[resource_templates]]`: a file or a command's output, by URI.

use super::Reader;
use crate::manifest::files::confine;
use crate::manifest::model::*;
use crate::manifest::toml_tree::Node;
use crate::manifest::uri::uri_variables;

impl Reader {
    pub(super) fn resource(
        &self,
        node: &Node,
        server: &ServerDef,
    ) -> Result<ResourceDef, ManifestError> {
        self.keys(
            node,
            &[
                "uri",
                "name",
                "title",
                "description",
                "mime_type",
                "file",
                "command",
                "reads",
                "exec",
                "network",
            ],
            "a resource",
        )?;
        let uri = self.required_string(node, "uri", "a resource")?;
        if !uri.contains(':') {
            return Err(self.fail(
                node.line_of("uri"),
                format!("resource uri {uri:?} needs a scheme, such as repo://readme"),
            ));
        }
        let what = format!("resource {uri:?}");
        let source = match (node.get("file"), node.get("command")) {
            (Some(f), None) => {
                let file = self.string(f, "file")?;
                let root = server.roots.working_dir();
                let path = confine(&root.join(&file), server.roots.all(), true)
                    .map_err(|why| self.fail(f.line, format!("{what}: file {file:?}: {why}")))?;
                ResourceSource::File(path)
            }
            (None, Some(c)) => {
                let command = self.command(c, &what)?;
                self.program_first(&command, c.line, &what)?;
                let mut named = Vec::new();
                command.iter().for_each(|e| e.params(&mut named));
                if let Some((name, _)) = named.first() {
                    return Err(self.fail(c.line, format!("{what}: a resource's command takes no parameters ({{{name}}}); use a resource template")));
                }
                ResourceSource::Command(command, self.permissions(node, &what, server, false)?)
            }
            _ => {
                return Err(self.fail(
                    node.line,
                    format!("{what} needs exactly one of file or command"),
                ))
            }
        };
        Ok(ResourceDef {
            name: self
                .opt_string(node, "name", &what)?
                .unwrap_or_else(|| uri.clone()),
            title: self.opt_string(node, "title", &what)?,
            description: self.opt_string(node, "description", &what)?,
            mime_type: self.opt_string(node, "mime_type", &what)?,
            uri,
            source,
        })
    }

    pub(super) fn template(
        &self,
        node: &Node,
        server: &ServerDef,
    ) -> Result<TemplateDef, ManifestError> {
        self.keys(
            node,
            &[
                "uri_template",
                "name",
                "title",
                "description",
                "mime_type",
                "command",
                "params",
                "reads",
                "exec",
                "network",
            ],
            "a resource template",
        )?;
        let uri_template = self.required_string(node, "uri_template", "a resource template")?;
        let what = format!("resource template {uri_template:?}");
        let command_node = node
            .get("command")
            .ok_or_else(|| self.fail(node.line, format!("{what} needs a command")))?;
        let command = self.command(command_node, &what)?;
        self.program_first(&command, command_node.line, &what)?;
        let mut params = self.params(
            node.get("params"),
            &what,
            &["string", "integer", "number", "path"],
        )?;
        self.no_headers(node, &params, &what)?;
        // Placeholders of the URI template are parameters too (strings unless declared).
        for name in uri_variables(&uri_template)
            .map_err(|why| self.fail(node.line, format!("{what}: {why}")))?
        {
            match params.iter_mut().find(|p| p.name == name) {
                Some(p) => p.required = true,
                None => params.push(string_param(&name)),
            }
        }
        for param in &params {
            if !uri_variables(&uri_template)
                .unwrap_or_default()
                .contains(&param.name)
            {
                return Err(self.fail(
                    node.line,
                    format!(
                        "{what}: parameter {:?} is not in the URI template",
                        param.name
                    ),
                ));
            }
        }
        self.check_placeholders(&command, &params, None, command_node.line, &what)?;
        self.check_code_arguments(&command, &params, command_node.line, &what)?;
        Ok(TemplateDef {
            name: self.required_string(node, "name", &what)?,
            title: self.opt_string(node, "title", &what)?,
            description: self.opt_string(node, "description", &what)?,
            mime_type: self.opt_string(node, "mime_type", &what)?,
            permissions: self.permissions(node, &what, server, false)?,
            uri_template,
            command,
            params,
        })
    }
}

/// A string parameter as a URI template variable.
fn string_param(name: &str) -> Param {
    Param::new(name, ParamKind::String)
}
