use super::*;
use serde_json::json;

fn schema(value: Value) -> ToolSchema {
    ToolSchema::from_input_schema(&value)
}

#[test]
fn scalar_properties_keep_order_and_required_marks() {
    let s = schema(json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "head": {"type": "integer", "default": 10}},
        "required": ["path"]
    }));
    assert_eq!(signature(&s), "path:str, head?:int");
    assert_eq!(s.props[1].shape.default, Some(json!(10)));
}

#[test]
fn refs_and_defs_are_resolved_and_recursion_stops() {
    let s = schema(json!({
        "type": "object",
        "$defs": {
            "Edit": {"type": "object", "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}, "required": ["oldText", "newText"]},
            "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
        },
        "properties": {
            "edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}, "description": "the edits"},
            "tree": {"$ref": "#/$defs/Node"}
        },
        "required": ["edits"]
    }));
    assert_eq!(
        render_type(&s.props[0].shape),
        "{oldText:str, newText:str}[]"
    );
    assert_eq!(s.props[0].shape.description.as_deref(), Some("the edits"));
    assert_eq!(render_type(&s.props[1].shape), "Node");
    assert_eq!(s.defs.len(), 1);
    assert_eq!(render_type(s.def("Node").unwrap()), "{children?:Node[]}");
}

#[test]
fn unions_nullables_and_enums() {
    let s = schema(json!({
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
            "c": {"enum": ["x", "y z", 3]},
            "d": {"oneOf": [{"const": "on"}, {"const": "off"}]},
            "e": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
        }
    }));
    let types: Vec<String> = s.props.iter().map(|p| render_type(&p.shape)).collect();
    assert_eq!(
        types,
        ["str|null", "int|null", "x|\"y z\"|3", "on|off", "str|str[]"]
    );
}

#[test]
fn all_of_merges_object_parts() {
    let s = schema(json!({
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "boolean"}}}
        ]
    }));
    assert_eq!(signature(&s), "a:str, b?:bool");
}

#[test]
fn hostile_schemas_become_what_can_be_said_of_them() {
    let cases = [
        (json!(null), ""),
        (json!("string"), ""),
        (json!({"properties": 5}), ""),
        // A dangling or self reference is named, never followed forever.
        (
            json!({"properties": {"x": {"$ref": "#/nowhere"}}}),
            "x?:nowhere",
        ),
        (json!({"properties": {"x": {"$ref": "#"}}}), "x?:#"),
        (json!({"type": 7, "required": "x"}), ""),
        (
            json!({"properties": {"x": {"type": "array", "items": []}}}),
            "x?:any[]",
        ),
        (
            json!({"properties": {"x": {"$ref": "#/properties/x"}}}),
            "x?:x",
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(signature(&schema(value.clone())), expected, "{value}");
    }
}

#[test]
fn deep_nesting_is_cut_not_overflowed() {
    let mut node = json!({"type": "string"});
    for _ in 0..500 {
        node = json!({"type": "object", "properties": {"n": node}});
    }
    let s = schema(json!({"type": "object", "properties": {"deep": node}}));
    assert!(render_type(&s.props[0].shape).contains("any"));
}

#[test]
fn shared_definitions_are_named_once() {
    let s = schema(json!({
        "type": "object",
        "$defs": {"Point": {"type": "object", "description": "A point", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]}},
        "properties": {
            "from": {"$ref": "#/$defs/Point", "description": "Start"},
            "to": {"$ref": "#/$defs/Point"},
            "path": {"type": "array", "items": {"$ref": "#/$defs/Point"}}
        }
    }));
    let types: Vec<String> = s.props.iter().map(|p| render_type(&p.shape)).collect();
    assert_eq!(types, ["Point", "Point", "Point[]"]);
    assert_eq!(s.props[0].shape.description.as_deref(), Some("Start"));
    assert_eq!(s.defs.len(), 1);
    let point = s.def("Point").unwrap();
    assert_eq!(render_type(point), "{x:num, y:num}");
    assert_eq!(point.description.as_deref(), Some("A point"));
}

/// zod-to-json-schema's default points `$ref`s at a shape's first occurrence in the body; the
/// shape is then named and spelled out once, not expanded at every use.
#[test]
fn references_into_the_body_are_named_once() {
    let color = json!({"type": "string", "pattern": "^#[0-9a-f]{6}$"});
    let action = json!({"type": "object", "properties": {
        "label": {"type": "string"}, "color": color}, "required": ["label"]});
    let s = schema(json!({
        "type": "object",
        "properties": {
            "header": {"type": "object", "properties": {"action": action, "title": {"type": "string"}}},
            "footer": {"type": "object", "properties": {
                "action": {"$ref": "#/properties/header/properties/action"},
                "accent": {"$ref": "#/properties/header/properties/action/properties/color"}}},
            "buttons": {"type": "array", "items": {"$ref": "#/properties/header/properties/action"}}
        }
    }));
    assert_eq!(s.defs.len(), 1, "{:?}", s.defs);
    let action = s
        .def("action")
        .expect("the shared shape is named after its property");
    assert_eq!(render_type(action), "{label:str, color?:str}");
    let types: Vec<String> = s.props.iter().map(|p| render_type(&p.shape)).collect();
    assert_eq!(
        types,
        [
            "{action?:action, title?:str}",
            "{action?:action, accent?:str}",
            "action[]"
        ]
    );
    // Only a body reference is rewritten; a schema without one is read as it is.
    assert!(super::hoist_body_targets(&json!({"properties": {"a": {"type": "string"}}})).is_none());
}
