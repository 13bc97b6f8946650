//! A forge's API contract as an OpenAPI 3 document: which operation a request is (method and
//! path template), whether its path and query parameters are declared and well typed, and
//! whether its JSON body validates against the operation's request body schema (with `$ref`s
//! resolved by the `jsonschema` crate against the whole document).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use jsonschema::{Draft, Registry, Validator};
use reqwest::Method;
use serde_json::{Value, json};

/// One matched operation: its `operationId` and the path parameters, decoded.
#[derive(Debug, Clone)]
pub struct Op {
    pub id: String,
    pub params: HashMap<String, String>,
}

impl Op {
    pub fn param(&self, name: &str) -> &str {
        self.params
            .get(name)
            .map(String::as_str)
            .unwrap_or_default()
    }
}

/// A request as the fake received it.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: Method,
    /// Path segments after the API prefix, percent-decoded one by one.
    pub segments: Vec<String>,
    pub query: Vec<(String, String)>,
    pub headers: axum::http::HeaderMap,
    pub body: Option<Value>,
}

impl Req {
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a query parameter, in order.
    pub fn query_all(&self, name: &str) -> Vec<&str> {
        self.query
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn body(&self) -> &Value {
        static NULL: Value = Value::Null;
        self.body.as_ref().unwrap_or(&NULL)
    }
}

/// An OpenAPI 3 document to check requests against.
pub struct Contract {
    doc: Arc<Value>,
    uri: String,
    registry: Registry<'static>,
    /// Path parameters that may span several segments when they end the template (GitHub's
    /// `{ref}` is `heads/<branch>`, a file path may contain `/`).
    greedy: &'static [&'static str],
    validators: Mutex<HashMap<String, Arc<Validator>>>,
}

impl Contract {
    pub fn new(uri: &str, mut doc: Value, greedy: &'static [&'static str]) -> Contract {
        nullable_as_json_schema(&mut doc);
        let doc = Arc::new(doc);
        let registry = Registry::new()
            .add(uri, Draft::Draft4.create_resource((*doc).clone()))
            .expect("the contract document is a resource")
            .prepare()
            .expect("the contract document's references resolve");
        Contract {
            doc,
            uri: uri.to_owned(),
            registry,
            greedy,
            validators: Mutex::new(HashMap::new()),
        }
    }

    /// The operation this request is, or every way in which it breaks the contract.
    pub fn check(&self, req: &Req) -> Result<Op, Vec<String>> {
        let what = format!("{} /{}", req.method, req.segments.join("/"));
        let Some((template, operation, params)) = self.operation(&req.method, &req.segments) else {
            return Err(vec![format!("{what}: no such operation in the API")]);
        };
        let id = operation["operationId"]
            .as_str()
            .unwrap_or(template.as_str())
            .to_owned();
        let mut problems = Vec::new();
        let pointer = format!(
            "/paths/{}/{}",
            escape(&template),
            req.method.as_str().to_lowercase()
        );

        // Parameters: declared ones only, required ones present, values of the declared type.
        let mut declared_query = Vec::new();
        let path_item = &self.doc["paths"][template.as_str()];
        let all_params = path_item["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, p)| (p, format!("/paths/{}/parameters/{i}", escape(&template))))
            .chain(
                operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, p)| (p, format!("{pointer}/parameters/{i}"))),
            );
        for (param, at) in all_params {
            let (param, at) = self.resolve(param, at);
            let name = param["name"].as_str().unwrap_or_default();
            let required = param["required"].as_bool().unwrap_or(false);
            let schema = &param["schema"];
            // An array in the query is the parameter repeated (`refs[]=a&refs[]=b`).
            let is_array = schema["type"] == "array";
            let value = match param["in"].as_str() {
                Some("path") => params.get(name).cloned(),
                Some("query") => {
                    declared_query.push(name.to_owned());
                    let values = req.query_all(name);
                    match values.as_slice() {
                        [] => None,
                        [one] if !is_array => Some((*one).to_owned()),
                        _ if is_array => Some(values.join(",")),
                        _ => {
                            problems.push(format!("{what}: {name} is given more than once"));
                            None
                        }
                    }
                }
                Some("header") => req.header(name).map(str::to_owned),
                _ => None,
            };
            match value {
                None if required => problems.push(format!("{what}: {name} is required")),
                None => {}
                Some(value) => {
                    let typed = if is_array && param["in"] == "query" {
                        Value::Array(
                            req.query_all(name)
                                .into_iter()
                                .map(|v| typed(&schema["items"], v))
                                .collect(),
                        )
                    } else {
                        typed(schema, &value)
                    };
                    let validator = self.validator(&format!("{at}/schema"));
                    for error in validator.iter_errors(&typed) {
                        problems.push(format!("{what}: parameter {name}={value}: {error}"));
                    }
                }
            }
        }
        for (name, _) in &req.query {
            if !declared_query.contains(name) {
                problems.push(format!("{what}: query parameter {name} is not documented"));
            }
        }

        // The body: JSON valid against the request body's schema, or none at all.
        let request_body = &operation["requestBody"];
        if request_body.is_null() {
            if req.body.is_some() {
                problems.push(format!("{what}: this operation takes no body"));
            }
        } else {
            let (body_def, at) = self.resolve(request_body, format!("{pointer}/requestBody"));
            match &req.body {
                None if body_def["required"].as_bool().unwrap_or(false) => {
                    problems.push(format!("{what}: a JSON body is required"));
                }
                None => {}
                Some(body) => {
                    if !req
                        .header("content-type")
                        .is_some_and(|c| c.starts_with("application/json"))
                    {
                        problems.push(format!("{what}: Content-Type is not application/json"));
                    }
                    let schema_at = format!("{at}/content/application~1json/schema");
                    if self.doc.pointer(&schema_at).is_none() {
                        problems.push(format!("{what}: the operation takes no JSON body"));
                    } else {
                        let validator = self.validator(&schema_at);
                        for error in validator.iter_errors(body) {
                            problems.push(format!(
                                "{what}: body at {}: {error}",
                                error.instance_path()
                            ));
                        }
                    }
                }
            }
        }

        if problems.is_empty() {
            Ok(Op { id, params })
        } else {
            Err(problems)
        }
    }

    /// Matches a path against the templates; a template without greedy parameters wins.
    fn operation(
        &self,
        method: &Method,
        segments: &[String],
    ) -> Option<(String, &Value, HashMap<String, String>)> {
        let method = method.as_str().to_lowercase();
        let paths = self.doc["paths"].as_object()?;
        let mut greedy_match = None;
        for (template, item) in paths {
            let Some(operation) = item.get(&method) else {
                continue;
            };
            let parts: Vec<&str> = template.split('/').filter(|s| !s.is_empty()).collect();
            match match_template(&parts, segments, self.greedy) {
                Some((params, false)) => return Some((template.clone(), operation, params)),
                Some((params, true)) if greedy_match.is_none() => {
                    greedy_match = Some((template.clone(), operation, params));
                }
                _ => {}
            }
        }
        greedy_match
    }

    /// Follows a local `$ref` (`#/components/...`), returning the target and its pointer.
    fn resolve<'a>(&'a self, value: &'a Value, at: String) -> (&'a Value, String) {
        match value.get("$ref").and_then(Value::as_str) {
            Some(r) if r.starts_with("#/") => {
                let pointer = r[1..].to_owned();
                let target = self.doc.pointer(&pointer).unwrap_or(&Value::Null);
                self.resolve(target, pointer)
            }
            _ => (value, at),
        }
    }

    /// A validator for the schema at `pointer` in the document, built once.
    fn validator(&self, pointer: &str) -> Arc<Validator> {
        let mut cache = self.validators.lock().unwrap();
        if let Some(v) = cache.get(pointer) {
            return v.clone();
        }
        // The pointer goes in a URI fragment, where `{` and `}` must be percent-encoded.
        let fragment = pointer.replace('{', "%7B").replace('}', "%7D");
        let schema = json!({"$ref": format!("{}#{fragment}", self.uri)});
        let validator = jsonschema::options()
            .with_draft(Draft::Draft4)
            .with_registry(&self.registry)
            .build(&schema)
            .unwrap_or_else(|e| panic!("schema at {pointer} does not build: {e}"));
        let validator = Arc::new(validator);
        cache.insert(pointer.to_owned(), validator.clone());
        validator
    }
}

/// OpenAPI 3.0's `nullable: true` beside a `type` means the value may also be null; JSON
/// Schema (which the validator speaks) says so with `null` among the types.
fn nullable_as_json_schema(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("nullable") == Some(&Value::Bool(true))
                && let Some(Value::String(kind)) = map.get("type").cloned()
            {
                map.insert("type".into(), json!([kind, "null"]));
            }
            map.values_mut().for_each(nullable_as_json_schema);
        }
        Value::Array(items) => items.iter_mut().for_each(nullable_as_json_schema),
        _ => {}
    }
}

fn match_template(
    parts: &[&str],
    segments: &[String],
    greedy: &[&str],
) -> Option<(HashMap<String, String>, bool)> {
    let mut params = HashMap::new();
    for (i, part) in parts.iter().enumerate() {
        let is_last = i == parts.len() - 1;
        let param = part.strip_prefix('{').and_then(|p| p.strip_suffix('}'));
        match param {
            Some(name) if is_last && segments.len() > parts.len() && greedy.contains(&name) => {
                params.insert(name.to_owned(), segments[i..].join("/"));
                return Some((params, true));
            }
            Some(name) => {
                let segment = segments.get(i)?;
                if segment.is_empty() {
                    return None;
                }
                params.insert(name.to_owned(), segment.clone());
            }
            None if segments.get(i).map(String::as_str) == Some(part) => {}
            None => return None,
        }
    }
    (segments.len() == parts.len()).then_some((params, false))
}

/// A parameter's text as the JSON value its schema describes.
fn typed(schema: &Value, value: &str) -> Value {
    match schema["type"].as_str() {
        Some("integer") => value
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(value.to_owned())),
        Some("boolean") => match value {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(value.to_owned()),
        },
        _ => Value::String(value.to_owned()),
    }
}

/// JSON-pointer escaping of one token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
