//! The `mirante` binary as CI and operators run it.

use std::{
    path::Path,
    process::{Command, Output},
};

use tempfile::TempDir;

/// The binary, run in `cwd` with an empty environment plus `env`, so neither the developer's
/// variables nor a `mirante.toml` in the repository leak in.
fn mirante(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mirante"))
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().copied())
        .output()
        .expect("cannot run the mirante binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const VALID: &str = r#"sites:
  - id: north
    name: North
layers:
  - id: l0
    kind: layer
    number: "0"
    name: Hardware
items:
  - id: hypervisor
    name: Hypervisor
    kind: component
    layer: l0
    sites: [north]
    state: desired
"#;

/// `line:column` (1-based) of the first `needle` in `text`.
fn position(text: &str, needle: &str) -> String {
    let (n, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .expect("needle not in text");
    format!("{}:{}", n + 1, line.find(needle).unwrap() + 1)
}

fn catalog_dir(files: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new().unwrap();
    for (name, contents) in files {
        std::fs::write(dir.path().join(name), contents).unwrap();
    }
    dir
}

#[test]
fn catalog_check_on_a_valid_directory_prints_a_one_line_summary_and_exits_0() {
    let dir = catalog_dir(&[("catalog.yaml", VALID)]);

    let out = mirante(dir.path(), &["catalog", "check", "."], &[]);

    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.starts_with(". is valid: 1 items, 1 sites, 1 layers, 0 decisions, 0 tasks (hash "),
        "{stdout}"
    );
}

#[test]
fn catalog_check_on_a_broken_directory_prints_file_line_column_and_exits_1() {
    let broken = VALID.replace("state: desired", "state: wished");
    let dir = catalog_dir(&[("catalog.yaml", &broken)]);

    let out = mirante(dir.path(), &["catalog", "check", "."], &[]);

    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let at = position(&broken, "wished");
    assert!(
        stdout.contains(&format!("./catalog.yaml:{at}: ")),
        "{stdout}"
    );
    assert!(stdout.contains("wished"), "{stdout}");
    assert!(
        stdout.trim_end().ends_with(". is invalid: 1 problem(s)"),
        "{stdout}"
    );
}

#[test]
fn catalog_check_reports_every_validation_problem() {
    let broken = VALID
        .replace("layer: l0", "layer: l9")
        .replace("sites: [north]", "sites: [south]");
    let dir = catalog_dir(&[("catalog.yaml", &broken)]);

    let out = mirante(dir.path(), &["catalog", "check", "."], &[]);

    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let layer = position(&broken, "l9");
    let site = position(&broken, "south");
    assert!(
        stdout.contains(&format!("./catalog.yaml:{layer}: ")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("./catalog.yaml:{site}: ")),
        "{stdout}"
    );
    assert!(stdout.contains("`l9`"), "{stdout}");
    assert!(stdout.contains("`south`"), "{stdout}");
}

#[test]
fn catalog_check_on_a_missing_directory_exits_1() {
    let cwd = TempDir::new().unwrap();

    let out = mirante(cwd.path(), &["catalog", "check", "nowhere"], &[]);

    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("nowhere"));
}

#[test]
fn the_demo_catalog_in_the_repository_is_valid() {
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");

    let out = mirante(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["catalog", "check", catalog.to_str().unwrap()],
        &[],
    );

    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains(" is valid: "));
}

#[test]
fn config_prints_the_effective_configuration_with_the_password_redacted() {
    let cwd = TempDir::new().unwrap();

    let out = mirante(
        cwd.path(),
        &["config"],
        &[
            (
                "DATABASE_URL",
                "postgres://mirante:s3cr3t@db.internal:5432/mirante",
            ),
            ("MIRANTE_BIND", "0.0.0.0:8080"),
            ("MIRANTE_CATALOG", "/srv/catalog"),
        ],
    );

    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("s3cr3t"), "{stdout}");
    assert!(
        stdout.contains(r#"database_url = "postgres://mirante:REDACTED@db.internal:5432/mirante""#),
        "{stdout}"
    );
    assert!(stdout.contains(r#"bind = "0.0.0.0:8080""#), "{stdout}");
    assert!(
        stdout.contains(r#"public_url = "http://0.0.0.0:8080""#),
        "{stdout}"
    );
    assert!(stdout.contains(r#"catalog = "/srv/catalog""#), "{stdout}");
}

#[test]
fn config_reads_the_file_named_by_mirante_config_and_the_environment_wins_over_it() {
    let cwd = TempDir::new().unwrap();
    std::fs::write(
        cwd.path().join("custom.toml"),
        "bind = \"127.0.0.1:4000\"\ncatalog_refresh_secs = 0\ndata_dir = \"/var/lib/mirante\"\n",
    )
    .unwrap();

    let out = mirante(
        cwd.path(),
        &["config"],
        &[
            ("MIRANTE_CONFIG", "custom.toml"),
            ("MIRANTE_BIND", "127.0.0.1:5000"),
        ],
    );

    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(r#"bind = "127.0.0.1:5000""#), "{stdout}");
    assert!(stdout.contains("catalog_refresh_secs = 0"), "{stdout}");
    assert!(
        stdout.contains(r#"database_url = "sqlite:///var/lib/mirante/mirante.db""#),
        "{stdout}"
    );
}

#[test]
fn a_typo_in_the_configuration_file_is_an_error() {
    let cwd = TempDir::new().unwrap();
    std::fs::write(
        cwd.path().join("mirante.toml"),
        "bnid = \"127.0.0.1:4000\"\n",
    )
    .unwrap();

    let out = mirante(cwd.path(), &["config"], &[]);

    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("bnid"), "{}", text(&out.stderr));
}

#[test]
fn serve_refuses_to_start_with_a_broken_catalog_and_prints_where() {
    let cwd = TempDir::new().unwrap();
    let broken = VALID.replace("state: desired", "state: wished");
    let catalog = catalog_dir(&[("catalog.yaml", &broken)]);

    let out = mirante(
        cwd.path(),
        &["serve"],
        &[
            ("MIRANTE_BIND", "127.0.0.1:0"),
            ("MIRANTE_CATALOG", catalog.path().to_str().unwrap()),
        ],
    );

    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let at = position(&broken, "wished");
    assert!(stderr.contains(&format!("catalog.yaml:{at}: ")), "{stderr}");
    // The database was created under ./data before the catalog was read.
    assert!(cwd.path().join("data/mirante.db").exists());
}

/// A `GET` over a plain socket: enough for a JSON body, and no HTTP client dependency.
fn http_get_json(port: u16, path: &str) -> serde_json::Value {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("no HTTP body");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} failed");
}

#[test]
fn serve_reloads_the_catalog_on_sighup_and_stops_cleanly_on_sigterm() {
    use std::io::{BufRead, BufReader};
    use std::time::{Duration, Instant};

    let cwd = TempDir::new().unwrap();
    let catalog = catalog_dir(&[("catalog.yaml", VALID)]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mirante"))
        .arg("serve")
        .current_dir(cwd.path())
        .env_clear()
        .env("MIRANTE_BIND", "127.0.0.1:0")
        .env("MIRANTE_CATALOG", catalog.path())
        .env("MIRANTE_CATALOG_REFRESH_SECS", "0")
        // The catalog API without signing in: this test is about signals.
        .env("MIRANTE_PUBLIC_CATALOG", "true")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // The port comes from the "listening" log line, the server having bound port 0.
    let port: u16 = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            let addr = l.split("http.addr=").nth(1)?;
            addr.split_whitespace()
                .next()?
                .rsplit(':')
                .next()?
                .parse()
                .ok()
        })
        .expect("the server never said where it listens");
    // Keep draining the log so the server never blocks on a full pipe.
    let drain = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());
    let before = http_get_json(port, "/api/v1/catalog")["hash"].clone();

    std::fs::write(
        catalog.path().join("catalog.yaml"),
        VALID.replace("name: Hypervisor", "name: Hypervisor cluster"),
    )
    .unwrap();
    signal(child.id(), "HUP");

    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = http_get_json(port, "/api/v1/catalog")["hash"].clone();
        if now != before {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "SIGHUP did not reload the catalog"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let item = http_get_json(port, "/api/v1/items/hypervisor");
    assert_eq!(item["item"]["name"], "Hypervisor cluster");

    signal(child.id(), "TERM");
    let status = child.wait().unwrap();
    let log = drain.join().unwrap().join("\n");
    assert!(status.success(), "exit {status:?}\n{log}");
    assert!(log.contains("SIGTERM received"), "{log}");
}

#[test]
fn serve_refuses_the_development_sign_in_on_a_non_loopback_address() {
    let cwd = TempDir::new().unwrap();

    let out = mirante(cwd.path(), &["serve"], &[("MIRANTE_BIND", "0.0.0.0:0")]);

    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("development sign-in"), "{stderr}");
    assert!(stderr.contains("MIRANTE_OIDC_ISSUER"), "{stderr}");
}

// --- mirante template check / render ---

fn shipped_templates() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates/self-service")
}

fn write(root: &Path, rel: &str, contents: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

const MINI_TEMPLATE: &str = r#"id: mini
title: {pt-BR: Mini, en: Mini}
description: {pt-BR: Mini, en: Mini}
approval: none
target: "apps/{{ app }}"
parameters:
  - name: app
    type: string
    format: dns-label
    required: true
    title: {pt-BR: App, en: App}
"#;

#[test]
fn template_check_on_the_shipped_templates_prints_a_summary_and_exits_0() {
    let dir = shipped_templates();

    let out = mirante(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["template", "check", dir.to_str().unwrap()],
        &[],
    );

    assert!(out.status.success(), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.ends_with(" is valid: 2 template(s): gpu-workspace, postgres-cnpg\n"),
        "{stdout}"
    );
}

#[test]
fn template_check_prints_every_problem_with_file_line_column_and_exits_1() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "mini/template.yaml", MINI_TEMPLATE);
    write(dir.path(), "mini/skeleton/a.txt", "{{ app }}\n");
    let broken = MINI_TEMPLATE
        .replace("id: mini", "id: broken")
        .replace("approval: none", "approval: maybe");
    write(dir.path(), "broken/template.yaml", &broken);
    write(dir.path(), "broken/skeleton/a.txt", "x\n");
    write(
        dir.path(),
        "jinja/template.yaml",
        &MINI_TEMPLATE.replace("id: mini", "id: jinja"),
    );
    write(dir.path(), "jinja/skeleton/a.yaml", "a: 1\nb: {{ app\n");

    let out = mirante(dir.path(), &["template", "check", "."], &[]);

    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let at = position(&broken, "maybe");
    assert!(
        stdout.contains(&format!("./broken/template.yaml:{at}: ")),
        "{stdout}"
    );
    assert!(stdout.contains("./jinja/skeleton/a.yaml:2:"), "{stdout}");
    assert!(!stdout.contains("mini"), "{stdout}");
    assert!(
        stdout.trim_end().ends_with(". is invalid: 2 problem(s)"),
        "{stdout}"
    );
}

#[test]
fn template_check_on_a_folder_without_templates_exits_1() {
    let dir = TempDir::new().unwrap();

    let out = mirante(dir.path(), &["template", "check", "."], &[]);

    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("no templates"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn template_render_writes_the_files_a_request_would_propose() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "values.json",
        r#"{"name": "corpus", "cluster": "gpu-sp-01", "namespace": "ws-nlp", "instances": 2, "databases": ["corpus", "stats"]}"#,
    );

    let out = mirante(
        dir.path(),
        &[
            "template",
            "render",
            "postgres-cnpg",
            "--values",
            "values.json",
            "--out",
            "out",
            "--requester",
            "alice",
            "--now",
            "2026-11-30T12:00:00Z",
        ],
        &[],
    );

    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("wrote out/apps/sp/gpu-sp-01/databases/ws-nlp/corpus/cluster.yaml"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "2 file(s) under apps/sp/gpu-sp-01/databases/ws-nlp/corpus (slug postgres-alice-corpus)"
        ),
        "{stdout}"
    );
    let cluster = std::fs::read_to_string(
        dir.path()
            .join("out/apps/sp/gpu-sp-01/databases/ws-nlp/corpus/cluster.yaml"),
    )
    .unwrap();
    assert!(cluster.contains("  instances: 2\n"), "{cluster}");
    assert!(
        cluster.contains("mirante.dev/requested-on: \"2026-11-30\""),
        "{cluster}"
    );
    let databases = std::fs::read_to_string(
        dir.path()
            .join("out/apps/sp/gpu-sp-01/databases/ws-nlp/corpus/databases.yaml"),
    )
    .unwrap();
    assert_eq!(
        databases.matches("kind: Database\n").count(),
        2,
        "{databases}"
    );
}

#[test]
fn template_render_lists_every_invalid_value_and_writes_nothing() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "values.yaml",
        "name: nlp\ncluster: gpu-sp-01\ngpus: 2\npurpose: \"a\\nb: c\"\nextra: 1\n",
    );

    let out = mirante(
        dir.path(),
        &[
            "template",
            "render",
            "gpu-workspace",
            "--values",
            "values.yaml",
            "--out",
            "out",
        ],
        &[],
    );

    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("values.yaml: gpus: 2 asked for, but gpu-sp-01 has 1 (1× NVIDIA RTX A5000) [exceeds_capacity]"),
        "{stderr}"
    );
    assert!(
        stderr.contains("values.yaml: purpose: ") && stderr.contains("[forbidden_character]"),
        "{stderr}"
    );
    assert!(
        stderr.contains("values.yaml: extra: no such parameter in this template [unknown_field]"),
        "{stderr}"
    );
    assert!(stderr.contains("error: 3 invalid value(s)"), "{stderr}");
    assert!(!dir.path().join("out").exists());
}

#[test]
fn template_render_takes_gpu_clusters_from_the_configured_catalog() {
    let dir = TempDir::new().unwrap();
    let catalog = VALID.replace(
        "    state: desired\n",
        "    state: validated\n    gpus:\n      - model: NVIDIA A100\n        count: 4\n",
    );
    write(dir.path(), "catalog/catalog.yaml", &catalog);
    write(
        dir.path(),
        "values.yaml",
        "name: big\ncluster: hypervisor\ngpus: 4\n",
    );

    let out = mirante(
        dir.path(),
        &[
            "template",
            "render",
            "gpu-workspace",
            "--values",
            "values.yaml",
            "--out",
            "out",
        ],
        &[("MIRANTE_CATALOG", "catalog")],
    );

    assert!(out.status.success(), "{}", text(&out.stderr));
    let quota = std::fs::read_to_string(
        dir.path()
            .join("out/clusters/hypervisor/workspaces/big/resourcequota.yaml"),
    )
    .unwrap();
    assert!(quota.contains("requests.nvidia.com/gpu: \"4\""), "{quota}");
}

#[test]
fn template_render_with_a_values_file_that_does_not_parse_names_its_line_and_column() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "values.yaml",
        "name: nlp\ncluster: [gpu-sp-01\n",
    );

    let out = mirante(
        dir.path(),
        &[
            "template",
            "render",
            "gpu-workspace",
            "--values",
            "values.yaml",
            "--out",
            "out",
        ],
        &[],
    );

    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("values.yaml:3:1: ") || stderr.starts_with("values.yaml:2:"),
        "{stderr}"
    );
}

#[test]
fn template_render_refuses_to_write_through_a_symbolic_link_out_of_the_directory() {
    let dir = TempDir::new().unwrap();
    let elsewhere = TempDir::new().unwrap();
    write(dir.path(), "values.yaml", "name: nlp\ncluster: gpu-sp-01\n");
    std::fs::create_dir_all(dir.path().join("out")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("out/apps")).unwrap();

    let out = mirante(
        dir.path(),
        &[
            "template",
            "render",
            "gpu-workspace",
            "--values",
            "values.yaml",
            "--out",
            "out",
        ],
        &[],
    );

    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("refusing to write through the symbolic link out/apps"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn template_render_of_an_unknown_template_names_the_available_ones() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "values.yaml", "{}\n");

    let out = mirante(
        dir.path(),
        &[
            "template",
            "render",
            "nope",
            "--values",
            "values.yaml",
            "--out",
            "out",
        ],
        &[],
    );

    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no template `nope` (available: gpu-workspace, postgres-cnpg)"),
        "{}",
        text(&out.stderr)
    );
}

const LINTED: &str = r#"layers:
  - {id: l0, kind: layer, number: "0", name: Hardware}
items:
  - {id: runs, name: Runs, kind: component, layer: l0, state: validated}
  - {id: ha, name: HA, kind: component, layer: l0, state: declared,
     iac: {path: pulumi/Pulumi.sp.yaml, key: config.traefik-sp.ha}}
"#;

#[test]
fn catalog_check_prints_lint_warnings_after_the_summary_and_still_exits_0() {
    let dir = catalog_dir(&[("catalog.yaml", LINTED)]);

    let out = mirante(dir.path(), &["catalog", "check", "."], &[]);

    assert!(out.status.success(), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with(". is valid: 2 items"), "{stdout}");
    assert_eq!(
        lines[1],
        "warning: runs: validated, but no evidence (probe, Argo CD application, attestation or \
         reference) [validated-without-evidence]"
    );
    assert_eq!(
        lines[2],
        "info: ha: declared in `pulumi/Pulumi.sp.yaml` (key `config.traefik-sp.ha`), but not \
         validated in production [declared-not-real]"
    );
    assert_eq!(lines[3], "lint: 0 error(s), 1 warning(s), 1 info");
}

#[test]
fn catalog_check_with_a_monorepo_fails_on_a_missing_iac_key() {
    let dir = catalog_dir(&[("catalog.yaml", LINTED)]);
    let repo = TempDir::new().unwrap();
    std::fs::create_dir(repo.path().join("pulumi")).unwrap();
    let stack = repo.path().join("pulumi/Pulumi.sp.yaml");
    std::fs::write(&stack, "config:\n  traefik-sp:\n    vip: 10.0.0.1\n").unwrap();
    let root = repo.path().to_str().unwrap();

    let missing = mirante(
        dir.path(),
        &["catalog", "check", ".", "--monorepo", root],
        &[],
    );
    std::fs::write(&stack, "config:\n  traefik-sp:\n    ha: true\n").unwrap();
    let present = mirante(
        dir.path(),
        &["catalog", "check", ".", "--monorepo", root],
        &[],
    );

    assert_eq!(missing.status.code(), Some(1));
    let stdout = text(&missing.stdout);
    assert!(
        stdout.lines().next().unwrap().starts_with(". is valid:"),
        "{stdout}"
    );
    // Errors come first.
    assert_eq!(
        stdout.lines().nth(1).unwrap(),
        "error: ha: IaC key `config.traefik-sp.ha` not found in `pulumi/Pulumi.sp.yaml` \
         [iac-key-missing]"
    );
    assert!(present.status.success(), "{}", text(&present.stdout));
    assert!(!text(&present.stdout).contains("iac-key-missing"));
}

#[test]
fn catalog_check_refuses_a_monorepo_root_that_is_not_a_directory() {
    let dir = catalog_dir(&[("catalog.yaml", LINTED)]);

    let out = mirante(
        dir.path(),
        &["catalog", "check", ".", "--monorepo", "no-such-dir"],
        &[],
    );

    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no-such-dir is not a directory"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_demo_catalog_passes_the_check_with_traefik_sp_ha_flagged() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");

    let out = mirante(&demo, &["catalog", "check", "."], &[]);

    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l
                .starts_with("info: traefik-sp-ha: declared in `pulumi/proxmox/Pulumi.sp.yaml`")),
        "{stdout}"
    );
    assert!(!stdout.lines().any(|l| l.starts_with("error:")), "{stdout}");
}
