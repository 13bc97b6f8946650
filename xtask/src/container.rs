//! `cargo xtask container`: builds the container image with Debian's podman and runs it.
//!
//! No registry is reachable here, so the base image is a Debian root file system that
//! mmdebstrap makes (cached under the target directory, made again only when missing), and the
//! image is docker/Containerfile.prebuilt: docker/Dockerfile's runtime stage around the debug
//! binary and site bundle already built, so that the test costs seconds rather than a release
//! build. The run starts the image as its non-root user on the host network, waits until its
//! HEALTHCHECK passes and `/readyz` answers 200, signs in through the development sign-in,
//! reads the catalog with the session, and removes the container whatever happened.
//!
//! Podman runs with the settings these machines need (docs in docker/README.md): vfs storage
//! under the target directory, cgroupfs, runc, and a containers.conf without default ulimits.

use std::{
    fs,
    net::TcpListener,
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};

use crate::{run_cmd, server_bin, sh, site_root, target_dir};

const BASE: &str = "localhost/mirante-base:bookworm";
const IMAGE: &str = "localhost/mirante:test";
/// The Debian packages the base gets beyond minbase: what docker/Dockerfile's runtime stage
/// installs.
const BASE_PACKAGES: &str = "ca-certificates,curl";

/// Builds the image around the debug build (which must exist) and checks a container of it.
pub fn test() -> Result<()> {
    let started = Instant::now();
    same_runtime_as_dockerfile()?;
    install_tools()?;
    let dir = target_dir().join("container");
    fs::create_dir_all(&dir)?;
    let podman = Podman::new(&dir)?;
    base_image(&podman, &dir)?;
    let context = build_context(&dir)?;
    podman.run(&[
        "build",
        "--format",
        "docker",
        // One commit at the end: with vfs storage every intermediate layer is a full copy.
        "--layers=false",
        "--network",
        "host",
        "--build-arg",
        &format!("BASE={BASE}"),
        "-f",
        "docker/Containerfile.prebuilt",
        "-t",
        IMAGE,
        context.to_str().context("a non-UTF-8 target path")?,
    ])?;
    let built = started.elapsed();
    let name = format!("mirante-test-{}", std::process::id());
    let checked = check_container(&podman, &name);
    let removed = podman.run(&["rm", "--force", "--ignore", &name]);
    // The image this run replaced: with vfs storage each one is a full copy on disk.
    let pruned = podman.run(&["image", "prune", "--force"]);
    checked?;
    removed?;
    pruned?;
    eprintln!(
        "container: image ready in {:.1} s, checked in {:.1} s",
        built.as_secs_f64(),
        (started.elapsed() - built).as_secs_f64()
    );
    Ok(())
}

/// Podman with this machine's settings and its own storage under `dir`.
struct Podman {
    args: Vec<String>,
    conf: PathBuf,
}

impl Podman {
    fn new(dir: &Path) -> Result<Self> {
        let conf = dir.join("containers.conf");
        // setrlimit is refused in this sandbox: no default ulimits.
        fs::write(&conf, "[containers]\ndefault_ulimits = []\n")?;
        let storage = dir.join("storage");
        let run = dir.join("run");
        let args = vec![
            "--storage-driver".into(),
            "vfs".into(),
            "--cgroup-manager".into(),
            "cgroupfs".into(),
            "--runtime".into(),
            "runc".into(),
            "--root".into(),
            storage.display().to_string(),
            "--runroot".into(),
            run.display().to_string(),
        ];
        Ok(Podman { args, conf })
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("podman");
        cmd.args(&self.args)
            .args(args)
            .env("CONTAINERS_CONF", &self.conf);
        cmd
    }

    fn run(&self, args: &[&str]) -> Result<()> {
        run_cmd(&mut self.command(args))
    }

    /// Runs quietly; the exit status and what it printed.
    fn output(&self, args: &[&str]) -> Result<(bool, String)> {
        let out = self
            .command(args)
            .output()
            .with_context(|| format!("running podman {}", args.join(" ")))?;
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        Ok((out.status.success(), text))
    }
}

/// Debian's podman, runc and mmdebstrap, when missing.
fn install_tools() -> Result<()> {
    let missing: Vec<&str> = [
        ("podman", "podman"),
        ("runc", "runc"),
        ("mmdebstrap", "mmdebstrap"),
    ]
    .into_iter()
    .filter(|(bin, _)| {
        Command::new("sh")
            .args(["-c", &format!("command -v {bin}")])
            .output()
            .map(|o| !o.status.success())
            .unwrap_or(true)
    })
    .map(|(_, package)| package)
    .collect();
    if missing.is_empty() {
        return Ok(());
    }
    sh("apt-get", ["update", "-q"])?;
    let mut args = vec!["install", "-y", "-q", "--no-install-recommends"];
    args.extend(missing);
    sh("apt-get", args)
}

/// The base image: a minimal Debian bookworm with the runtime's packages, made once.
fn base_image(podman: &Podman, dir: &Path) -> Result<()> {
    if podman.output(&["image", "exists", BASE])?.0 {
        return Ok(());
    }
    let tarball = dir.join(format!(
        "debian-bookworm-{}.tar",
        BASE_PACKAGES.replace(',', "-")
    ));
    if !tarball.exists() {
        let partial = tarball.with_extension("tar.partial");
        let _ = fs::remove_file(&partial);
        sh(
            "mmdebstrap",
            [
                "--variant=minbase",
                "--format=tar",
                "--quiet",
                &format!("--include={BASE_PACKAGES}"),
                "bookworm",
                partial.to_str().context("a non-UTF-8 target path")?,
            ],
        )?;
        fs::rename(&partial, &tarball)?;
    }
    podman.run(&[
        "import",
        tarball.to_str().context("a non-UTF-8 target path")?,
        BASE,
    ])
}

/// The build context: the debug server and the site bundle (hard links where possible: the
/// binary is large).
fn build_context(dir: &Path) -> Result<PathBuf> {
    let context = dir.join("context");
    if context.exists() {
        fs::remove_dir_all(&context)?;
    }
    fs::create_dir_all(&context)?;
    let bin = server_bin("debug");
    if !bin.exists() {
        bail!(
            "{} is missing: run `cargo xtask build` first",
            bin.display()
        );
    }
    link_or_copy(&bin, &context.join("mirante"))?;
    copy_tree(&site_root(), &context.join("site"))?;
    Ok(context)
}

fn link_or_copy(from: &Path, to: &Path) -> Result<()> {
    if fs::hard_link(from, to).is_err() {
        fs::copy(from, to).with_context(|| format!("copying {}", from.display()))?;
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            link_or_copy(&entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Starts the image and checks it; the caller removes the container.
fn check_container(podman: &Podman, name: &str) -> Result<()> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let bind = format!("MIRANTE_BIND=127.0.0.1:{port}");
    // The image's own user (no --user): the test is that it is not root.
    podman.run(&[
        "run",
        "--detach",
        "--name",
        name,
        "--network",
        "host",
        // Loopback only: the development sign-in refuses other addresses.
        "--env",
        &bind,
        "--env",
        "MIRANTE_PROBE_INTERVAL_SECS=0",
        IMAGE,
    ])?;
    let (_, uid) = podman.output(&["exec", name, "id", "-u"])?;
    if uid.trim() != "10001" {
        bail!(
            "the container runs as uid {:?}, not the image's user 10001",
            uid.trim()
        );
    }

    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (healthy, text) = podman.output(&["healthcheck", "run", name])?;
        if healthy {
            break;
        }
        if Instant::now() > deadline {
            let (_, logs) = podman.output(&["logs", name])?;
            bail!("the HEALTHCHECK never passed: {}\n{logs}", text.trim());
        }
        std::thread::sleep(Duration::from_millis(500));
    }

    let base = format!("http://127.0.0.1:{port}");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let ready = loop {
        let status = agent
            .get(format!("{base}/readyz"))
            .call()
            .map(|r| r.status().as_u16());
        if let Ok(200) = status {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    if !ready {
        bail!("/readyz never answered 200");
    }

    let signed_in = agent
        .post(format!("{base}/auth/dev"))
        .header("Origin", &base)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .send("user=rui&next=%2F")
        .context("signing in")?;
    let cookie = signed_in
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|c| c.split(';').next())
        .rfind(|c| c.starts_with("mirante_session="))
        .map(str::to_owned)
        .with_context(|| {
            format!(
                "the development sign-in answered {} with no session",
                signed_in.status()
            )
        })?;
    let anonymous = agent
        .get(format!("{base}/api/v1/items"))
        .call()
        .context("reading the catalog")?
        .status()
        .as_u16();
    let mut items = agent
        .get(format!("{base}/api/v1/items"))
        .header("Cookie", &cookie)
        .call()
        .context("reading the catalog")?;
    let status = items.status().as_u16();
    let body: serde_json::Value = serde_json::from_slice(
        &items
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_vec()?,
    )
    .context("the catalog is not JSON")?;
    let count = body["total"].as_u64().unwrap_or(0);
    if anonymous != 401 || status != 200 || count == 0 {
        bail!(
            "the catalog answered {anonymous} without a session and {status} with one, \
             {count} item(s)"
        );
    }
    eprintln!("container: uid 10001, healthy, ready; signed in and read {count} catalog item(s)");
    Ok(())
}

/// The runtime lines of docker/Dockerfile (its last stage) and of
/// docker/Containerfile.prebuilt must agree, so the image tested is the image shipped.
fn same_runtime_as_dockerfile() -> Result<()> {
    fn runtime(path: &str) -> Result<Vec<String>> {
        let text = fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
        let keep = [
            "ENV ",
            "USER ",
            "WORKDIR ",
            "EXPOSE ",
            "HEALTHCHECK ",
            "ENTRYPOINT ",
            "CMD ",
        ];
        let mut lines = Vec::new();
        let mut continued = false;
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with("FROM ") {
                lines.clear();
            }
            if continued || keep.iter().any(|k| line.starts_with(k)) {
                lines.push(line.to_owned());
                continued = line.ends_with('\\');
            }
        }
        Ok(lines)
    }
    let shipped = runtime("docker/Dockerfile")?;
    let tested = runtime("docker/Containerfile.prebuilt")?;
    if shipped != tested {
        bail!(
            "docker/Containerfile.prebuilt's runtime lines differ from docker/Dockerfile's:\n\
             {shipped:#?}\n{tested:#?}"
        );
    }
    Ok(())
}
