//! Credential lookup, as whole decisions.

use super::*;

fn env(pairs: &[(&str, &str)]) -> Env {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}
fn reg(s: &str) -> Registry {
    Registry::parse(s).unwrap()
}
fn basic(u: &str, p: &str, source: &str) -> Found {
    Found { credential: Credential::Basic { username: u.into(), password: p.into() }, source: source.into() }
}

#[test]
fn files_are_searched_podman_first_then_docker() {
    let e = env(&[("HOME", "/h"), ("XDG_RUNTIME_DIR", "/run/user/0"), ("REGISTRY_AUTH_FILE", "/a.json")]);
    assert_eq!(
        candidate_files(&e),
        vec![
            PathBuf::from("/a.json"),
            PathBuf::from("/run/user/0/containers/auth.json"),
            PathBuf::from("/h/.config/containers/auth.json"),
            PathBuf::from("/h/.docker/config.json"),
        ]
    );
    assert_eq!(candidate_files(&env(&[("HOME", "/h"), ("DOCKER_CONFIG", "/d")])).last(), Some(&PathBuf::from("/d/config.json")));
}

#[test]
fn environment_wins_and_devcontainers_variable_matches_by_host() {
    let r = reg("ghcr.io");
    let e = env(&[(REGISTRY_USERNAME, "u"), (REGISTRY_PASSWORD, "p"), (DEVCONTAINERS_OCI_AUTH, "ghcr.io|x|y")]);
    assert_eq!(lookup_env(&r, &e), Some(basic("u", "p", "AGENT_SANDBOX_REGISTRY_USERNAME/AGENT_SANDBOX_REGISTRY_PASSWORD")));
    let e = env(&[(DEVCONTAINERS_OCI_AUTH, "example.com|a|b,ghcr.io|x|y|z")]);
    assert_eq!(lookup_env(&r, &e), Some(basic("x", "y|z", DEVCONTAINERS_OCI_AUTH)));
    assert_eq!(lookup_env(&reg("quay.io"), &e), None);
    assert_eq!(lookup_env(&r, &env(&[(REGISTRY_TOKEN, "t")])).unwrap().credential, Credential::Bearer("t".into()));
}

#[test]
fn github_token_only_for_ghcr() {
    let e = env(&[(GITHUB_TOKEN, "gh")]);
    assert_eq!(lookup_github(&reg("ghcr.io"), &e), Some(basic("USERNAME", "gh", GITHUB_TOKEN)));
    assert_eq!(lookup_github(&reg("localhost:5000"), &e), None);
}

#[test]
fn auth_entries_decode_and_keys_are_normalised() {
    let p = Path::new("/h/.docker/config.json");
    // "user:pa:ss"
    let doc = r#"{"auths": {"https://localhost:5000/v1/": {"auth": "dXNlcjpwYTpzcw=="}}}"#;
    assert_eq!(lookup_file(&reg("localhost:5000"), p, doc).unwrap(), FileLookup::Credential(basic("user", "pa:ss", "/h/.docker/config.json")));
    assert_eq!(lookup_file(&reg("localhost:5001"), p, doc).unwrap(), FileLookup::NotFound);
    let doc = r#"{"auths": {"https://index.docker.io/v1/": {"username": "d", "password": "e"}}}"#;
    assert_eq!(lookup_file(&reg("docker.io"), p, doc).unwrap(), FileLookup::Credential(basic("d", "e", "/h/.docker/config.json")));
}

#[test]
fn helpers_take_precedence_per_file() {
    let p = Path::new("/c.json");
    let doc = r#"{"auths": {"ghcr.io": {}}, "credHelpers": {"ghcr.io": "gh"}, "credsStore": "desktop"}"#;
    assert_eq!(lookup_file(&reg("ghcr.io"), p, doc).unwrap(), FileLookup::Helper { helper: "gh".into(), source: "/c.json".into() });
    assert_eq!(lookup_file(&reg("quay.io"), p, doc).unwrap(), FileLookup::Helper { helper: "desktop".into(), source: "/c.json".into() });
}

#[test]
fn broken_files_are_errors_naming_the_file() {
    let e = lookup_file(&reg("ghcr.io"), Path::new("/c.json"), "{").unwrap_err();
    assert!(e.to_string().contains("/c.json"), "{e}");
    let e = lookup_file(&reg("ghcr.io"), Path::new("/c.json"), r#"{"auths":{"ghcr.io":{"auth":"!!"}}}"#).unwrap_err();
    assert!(e.to_string().contains("not base64"), "{e}");
}

#[test]
fn helper_answers_parse() {
    assert_eq!(parse_helper_output(r#"{"ServerURL":"x","Username":"u","Secret":"s"}"#), Some(Credential::Basic { username: "u".into(), password: "s".into() }));
    assert_eq!(parse_helper_output(r#"{"Username":"<token>","Secret":"t"}"#), Some(Credential::Bearer("t".into())));
    assert_eq!(parse_helper_output("nope"), None);
}

#[test]
fn debug_never_shows_secrets() {
    let c = Credential::Basic { username: "u".into(), password: "hunter2".into() };
    assert!(!format!("{c:?}").contains("hunter2"));
    assert!(!format!("{:?}", Credential::Bearer("tok".into())).contains("tok"));
}

#[test]
fn resolve_falls_back_to_anonymous() {
    let dir = tempfile::tempdir().unwrap();
    let e = env(&[("HOME", dir.path().to_str().unwrap())]);
    assert_eq!(resolve(&reg("localhost:5000"), &e).unwrap().credential, Credential::Anonymous);
    std::fs::create_dir_all(dir.path().join(".docker")).unwrap();
    std::fs::write(dir.path().join(".docker/config.json"), r#"{"auths":{"localhost:5000":{"auth":"YTpi"}}}"#).unwrap();
    assert_eq!(resolve(&reg("localhost:5000"), &e).unwrap().credential, Credential::Basic { username: "a".into(), password: "b".into() });
}
