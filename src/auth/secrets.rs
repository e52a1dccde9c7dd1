//! Secrets are write-only: an answer shows a stored secret as [`MASK`], never its value (a
//! webhook's signing secret, a password or key inside a remote layer's URL). The stored value
//! stays in use; a write that sends [`MASK`] back means "keep the stored one".

/// What answers show in place of a secret.
pub const MASK: &str = "***";

/// Query parameters whose value is a credential (compared without case, `-` and `_`).
const SECRET_PARAMETERS: &[&str] = &[
    "apikey",
    "key",
    "token",
    "accesstoken",
    "authtoken",
    "password",
    "passwd",
    "pwd",
    "secret",
    "clientsecret",
    "signature",
    "sig",
    "auth",
    "authorization",
    "credentials",
];

fn is_secret_parameter(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_PARAMETERS.contains(&folded.as_str())
}

/// `url` as an answer may show it: the user name kept, the password and the values of
/// credential-like query parameters (`apikey`, `token`, `password`, ...) replaced by [`MASK`].
/// Text that is not a URL is answered as it is (it holds no userinfo to hide).
pub fn masked_url(url: &str) -> String {
    let Ok(mut parsed) = reqwest::Url::parse(url) else {
        return url.to_owned();
    };
    let mut changed = false;
    if parsed.password().is_some() {
        changed |= parsed.set_password(Some(MASK)).is_ok();
    }
    let pairs: Vec<(String, String)> = parsed
        .query_pairs()
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect();
    if pairs.iter().any(|(name, _)| is_secret_parameter(name)) {
        let masked = pairs.into_iter().map(|(name, value)| {
            if is_secret_parameter(&name) {
                (name, MASK.to_owned())
            } else {
                (name, value)
            }
        });
        parsed.query_pairs_mut().clear().extend_pairs(masked);
        changed = true;
    }
    if changed {
        parsed.to_string()
    } else {
        url.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::masked_url;

    #[test]
    fn passwords_and_credential_parameters_are_masked() {
        assert_eq!(
            masked_url("https://ann:pw@h/wfs?map=a.map&API_KEY=k1&token=t"),
            "https://ann:***@h/wfs?map=a.map&API_KEY=***&token=***"
        );
        assert_eq!(masked_url("https://h/ogc"), "https://h/ogc");
        assert_eq!(masked_url("not a url"), "not a url");
    }
}
