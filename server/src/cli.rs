//! The `mirante` command line: `serve` (the default), `config`, `catalog check DIR`,
//! `template check DIR`, `template render ID --values FILE --out DIR`, `openapi`, `backup FILE`
//! and `restore FILE`.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::ExitCode,
};

use clap::{Parser, Subcommand};

use mirante_domain::lint::Severity;

use crate::{
    app::catalog,
    app::evidence::{self, IacSource, LintSettings},
    config::Config,
    startup::Application,
    telemetry,
};

mod backup;
mod template;

pub use backup::{BackupError, Copied, backup, restore};

/// Mirante: the internal developer portal.
#[derive(Debug, Parser)]
#[command(name = "mirante", version, about)]
pub struct Cli {
    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the portal (the default).
    Serve,
    /// Print the effective configuration as TOML, secrets redacted.
    Config,
    /// Work with a catalog directory.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Work with self-service templates.
    #[command(subcommand)]
    Template(TemplateCommand),
    /// Print the JSON API's OpenAPI 3.1 description (what `/api/v1/openapi.json` serves), e.g.
    /// to generate a client or validate it.
    Openapi,
    /// Copy the embedded SQLite database to FILE (a new file) while the portal runs.
    Backup {
        /// The file to write; it must not exist.
        file: PathBuf,
    },
    /// Replace the embedded SQLite database by the backup FILE; refused while a portal has the
    /// database open. The replaced database is kept beside it.
    Restore {
        /// A file written by `mirante backup`.
        file: PathBuf,
    },
}

/// Catalog subcommands.
#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Validate a catalog directory: print every problem as `file:line:column: message` and
    /// exit 1; or print a one-line summary, then the consistency lint's findings, and exit 1
    /// if any finding is an error (warnings and information alone exit 0).
    Check {
        /// The directory of catalog YAML files.
        dir: PathBuf,
        /// Root of the monorepo checkout: IaC references (paths and keys) are checked in it.
        #[arg(long, value_name = "ROOT")]
        monorepo: Option<PathBuf>,
        /// Attestations older than this many days are stale.
        #[arg(long, value_name = "DAYS", default_value_t = mirante_domain::lint::DEFAULT_STALE_AFTER_DAYS)]
        stale_days: u32,
    },
}

/// Template subcommands.
#[derive(Debug, Subcommand)]
pub enum TemplateCommand {
    /// Validate a folder of templates (`<DIR>/<id>/template.yaml` + `skeleton/`): print every
    /// problem as `file:line:column: message` and exit 1, or a one-line summary and exit 0.
    Check {
        /// The folder holding one sub-folder per template.
        dir: PathBuf,
    },
    /// Render a template with values from a file into a directory, as a request would (a dry
    /// run for template authors and the monorepo's CI). Exits 1 listing every invalid value.
    Render {
        /// The template's id.
        id: String,
        /// The values: a YAML or JSON object of parameter names to values.
        #[arg(long)]
        values: PathBuf,
        /// Where to write the files (their paths start with the template's target).
        #[arg(long)]
        out: PathBuf,
        /// Folders of templates to use instead of the ones built in (repeatable; a later one
        /// replaces a template with the same id).
        #[arg(long = "templates")]
        templates: Vec<PathBuf>,
        /// The catalog directory the GPU clusters come from; by default the configured
        /// catalog (`MIRANTE_CATALOG`), else the built-in demo catalog.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// The requester's username the files name.
        #[arg(long, default_value = "template-author")]
        requester: String,
        /// The moment of the request (RFC 3339), for reproducible output; now by default.
        #[arg(long)]
        now: Option<chrono::DateTime<chrono::Utc>>,
    },
}

/// Runs the command; the process exit code is the result.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(),
        Command::Config => print_config(),
        Command::Openapi => print_openapi(),
        Command::Backup { file } => backup::backup_command(&file),
        Command::Restore { file } => backup::restore_command(&file),
        Command::Catalog(CatalogCommand::Check {
            dir,
            monorepo,
            stale_days,
        }) => {
            if let Some(root) = monorepo.as_deref().filter(|r| !r.is_dir()) {
                eprintln!(
                    "error: the monorepo root {} is not a directory",
                    root.display()
                );
                return ExitCode::FAILURE;
            }
            let mut out = std::io::stdout().lock();
            let settings = LintSettings {
                monorepo: monorepo.map_or(IacSource::None, IacSource::Dir),
                stale_after_days: stale_days,
            };
            check_catalog(&dir, &settings, &mut out)
        }
        Command::Template(TemplateCommand::Check { dir }) => {
            let mut out = std::io::stdout().lock();
            template::check(&dir, &mut out)
        }
        Command::Template(TemplateCommand::Render {
            id,
            values,
            out,
            templates,
            catalog,
            requester,
            now,
        }) => template::render(&template::RenderArgs {
            id,
            values,
            out,
            templates,
            catalog,
            requester,
            now,
        }),
    }
}

fn print_openapi() -> ExitCode {
    match crate::http::openapi_json() {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot serialize the API description: {e}");
            ExitCode::FAILURE
        }
    }
}

fn load_config() -> Option<Config> {
    match Config::load() {
        Ok(config) => Some(config),
        Err(e) => {
            eprintln!("error: {e}");
            None
        }
    }
}

fn serve() -> ExitCode {
    let Some(config) = load_config() else {
        return ExitCode::FAILURE;
    };
    // Dropped last, after the runtime: the spans still batched are sent then.
    let _telemetry = telemetry::init(config.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let app = match Application::build(config).await {
            Ok(app) => app,
            Err(e) => {
                // Printed rather than logged: it may list many catalog problems, one per line.
                eprintln!("error: {e:#}");
                return ExitCode::FAILURE;
            }
        };
        match app.run_until_stopped().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: server failed: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

fn print_config() -> ExitCode {
    let Some(config) = load_config() else {
        return ExitCode::FAILURE;
    };
    print!("{}", config.to_redacted_toml());
    ExitCode::SUCCESS
}

/// Validates the catalog in `dir`, writing the problems, or the summary and the lint's
/// findings, to `out`.
pub fn check_catalog(dir: &Path, settings: &LintSettings, out: &mut impl Write) -> ExitCode {
    let shown = dir.display();
    let result = catalog::CatalogSource::dir(dir).load();
    let written = match result {
        Ok(loaded) => {
            let snapshot = loaded.into_snapshot(None);
            let findings = evidence::findings(&snapshot, settings, evidence::today(), &[]);
            (|| {
                writeln!(out, "{shown} is valid: {}", catalog::summary(&snapshot))?;
                for f in &findings {
                    writeln!(out, "{f}")?;
                }
                let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
                let errors = count(Severity::Error);
                if !findings.is_empty() {
                    writeln!(
                        out,
                        "lint: {errors} error(s), {} warning(s), {} info",
                        count(Severity::Warning),
                        count(Severity::Info)
                    )?;
                }
                Ok(if errors > 0 {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                })
            })()
        }
        Err(diagnostics) => (|| {
            for d in &diagnostics {
                // Diagnostics name files relative to the catalog root; prefix the directory
                // as given so that editors and CI annotations can open the file.
                let file = dir.join(&d.file);
                if d.line > 0 || file.is_file() {
                    let mut d = d.clone();
                    d.file = file.display().to_string();
                    writeln!(out, "{d}")?;
                } else {
                    writeln!(out, "{d}")?;
                }
            }
            writeln!(out, "{shown} is invalid: {} problem(s)", diagnostics.len())?;
            Ok(ExitCode::FAILURE)
        })(),
    };
    written.unwrap_or_else(|e: std::io::Error| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })
}
