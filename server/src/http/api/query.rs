//! Strict query strings: every parameter must be known, given at most once and not empty, so
//! a typo (`?stat=validated`) or a half-written filter (`?state=`) is a 400 instead of a
//! silently unfiltered answer. A parameter that is not wanted is left out.

use std::collections::HashMap;

use crate::http::error::{ApiError, quoted};

/// The parameters of a query string, checked against the names a route accepts.
#[derive(Debug, Default)]
pub(crate) struct Params(HashMap<String, String>);

impl Params {
    /// Parses `raw` and refuses unknown, repeated and empty parameters.
    pub(crate) fn parse(raw: Option<&str>, allowed: &[&str]) -> Result<Self, ApiError> {
        let mut params = HashMap::new();
        for (key, value) in form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            if !allowed.contains(&key.as_ref()) {
                return Err(ApiError::BadRequest(if allowed.is_empty() {
                    format!(
                        "unknown query parameter {}; this route takes none",
                        quoted(&key)
                    )
                } else {
                    format!(
                        "unknown query parameter {}; expected one of: {}",
                        quoted(&key),
                        allowed.join(", ")
                    )
                }));
            }
            if value.trim().is_empty() {
                return Err(ApiError::BadRequest(format!(
                    "query parameter {} is empty; leave it out to mean any",
                    quoted(&key)
                )));
            }
            if params.contains_key(key.as_ref()) {
                return Err(ApiError::BadRequest(format!(
                    "query parameter {} given more than once",
                    quoted(&key)
                )));
            }
            params.insert(key.into_owned(), value.into_owned());
        }
        Ok(Params(params))
    }

    /// A parameter's value, if given.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A parameter parsed by `parse`, with a 400 naming the parameter and the accepted values
    /// when it does not parse.
    pub(crate) fn parse_with<T>(
        &self,
        key: &str,
        parse: impl Fn(&str) -> Option<T>,
        expected: &str,
    ) -> Result<Option<T>, ApiError> {
        self.get(key)
            .map(|v| {
                parse(v).ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "invalid {key} {}; expected {expected}",
                        quoted(v)
                    ))
                })
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_parameter_is_refused_by_name() {
        let err = Params::parse(Some("stat=validated"), &["state"]).unwrap_err();

        assert!(err.to_string().contains("`stat`"), "{err}");
    }

    #[test]
    fn a_repeated_parameter_is_refused() {
        let err = Params::parse(Some("state=a&state=b"), &["state"]).unwrap_err();

        assert!(err.to_string().contains("more than once"), "{err}");
    }

    #[test]
    fn an_empty_value_is_refused_by_name() {
        for raw in ["state=&q=gpu", "q=gpu&state=%20", "state"] {
            let err = Params::parse(Some(raw), &["state", "q"]).unwrap_err();

            assert!(err.to_string().contains("`state` is empty"), "{raw}: {err}");
        }
    }

    #[test]
    fn values_are_percent_decoded() {
        let params = Params::parse(Some("q=s%C3%A3o+paulo"), &["q"]).unwrap();

        assert_eq!(params.get("q"), Some("são paulo"));
    }
}
