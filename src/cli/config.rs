//! `fensyn.toml`: per-project defaults for the command-line options.
//!
//! For each input file the configuration is the first `fensyn.toml` found in the file's
//! directory or one of its ancestors (one file, never merged with another); `--config FILE`
//! names one for every input and `--no-config` uses none. A value given on the command line
//! beats the file's, and the file's beats the built-in default ([`Settings::resolve`]).
//!
//! Keys are the long option names with `_` for `-`: `model`, `lang`, `mode`, `cost`, `unroll`,
//! `recursion`, `max_executions`, `timeout`, `optimal_timeout`, `collect_limit`,
//! `spurious_cas`, `leaks`, `liveness`, `comments`,
//! `equiv`, `jobs`, and `include` (a list of directories searched for `#include`, relative to
//! the file's directory; after the command line's `-I`).
//! An unknown key, a
//! value of the wrong type or a value outside the option's choices is an error at its
//! `file:line:column` (exit code 3), never ignored.
//!
//! Two keys select files rather than set options, both with globs relative to the directory
//! of the configuration file ([`Globs`]):
//!
//! * `exclude = ["vendor", "gen/*.c"]`: files a directory search (and `--pre-commit`) skips;
//!   a file named on the command line is still taken (as ruff does without
//!   `--force-exclude`);
//! * `[[per-file]]` tables, `path = "GLOB"` and `unroll = N`: the loop bound of the files that
//!   match (the first table that matches wins; `--unroll` on the command line beats it).

use super::LangArg;
use crate::checker::Model;
use crate::synth::{Cost, Mode};
use clap::ValueEnum;
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use toml::Spanned;

/// The name searched for.
pub const FILE_NAME: &str = "fensyn.toml";

/// The values one configuration file sets (`None`: not set).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    pub lang: Option<LangArg>,
    pub model: Option<Model>,
    pub mode: Option<Mode>,
    pub cost: Option<Cost>,
    /// `fix --by`: fences, orders or both.
    pub by: Option<crate::synth::orders::By>,
    pub unroll: Option<u32>,
    /// The recursion bound (`--recursion`).
    pub recursion: Option<u32>,
    pub max_executions: Option<u64>,
    pub timeout: Option<f64>,
    pub optimal_timeout: Option<f64>,
    pub collect_limit: Option<usize>,
    pub spurious_cas: Option<bool>,
    pub leaks: Option<bool>,
    pub liveness: Option<bool>,
    pub comments: Option<bool>,
    pub equiv: Option<crate::checker::Equiv>,
    pub jobs: Option<usize>,
    /// `-D NAME=VALUE` macros (command line only).
    pub defines: Vec<(String, i64)>,
    /// `-I DIR` (command line) / `include = [...]` (file, resolved against its directory).
    pub include: Vec<PathBuf>,
    /// `-U NAME` (command line only).
    pub undefs: Vec<String>,
    /// `--link FILE` (command line only).
    pub link: Vec<PathBuf>,
    /// `--compile-commands PATH` (command line only).
    pub compile_commands: Option<PathBuf>,
    /// `--std NAME` (command line only).
    pub std: Option<crate::ir::LangStd>,
    /// `exclude = [...]` (file only).
    pub exclude: Option<Globs>,
    /// `[[per-file]]` tables (file only), in the file's order.
    pub per_file: Vec<PerFile>,
}

/// One `[[per-file]]` table: settings for the files `path` matches.
#[derive(Clone, Debug, PartialEq)]
pub struct PerFile {
    pub path: Globs,
    pub unroll: Option<u32>,
    /// `accept-bound = true`: executions cut at the loop bound do not make a run of these
    /// files incomplete (exit 0 instead of 4, with a note saying so).
    pub accept_bound: bool,
}

/// Glob patterns relative to a directory `root` (the configuration file's), matched the way
/// `.gitignore` matches: a pattern with a `/` is matched against the path below `root` (`*`
/// stays within one directory, `**` crosses them), one without a `/` against every file and
/// directory name of that path; a pattern that matches a directory matches everything in it.
#[derive(Clone, Debug)]
pub struct Globs {
    root: PathBuf,
    patterns: Vec<String>,
    anchored: globset::GlobSet,
    names: globset::GlobSet,
}

impl PartialEq for Globs {
    fn eq(&self, other: &Globs) -> bool {
        self.root == other.root && self.patterns == other.patterns
    }
}

impl Globs {
    /// Compiles `patterns`; the error names the pattern at fault.
    pub fn new(root: &Path, patterns: &[String]) -> Result<Globs, (usize, String)> {
        let mut anchored = globset::GlobSetBuilder::new();
        let mut names = globset::GlobSetBuilder::new();
        for (i, p) in patterns.iter().enumerate() {
            let trimmed = p.trim_start_matches("./").trim_end_matches('/');
            let glob = globset::GlobBuilder::new(trimmed)
                .literal_separator(true)
                .build()
                .map_err(|e| (i, format!("bad glob \"{p}\": {}", e.kind())))?;
            if trimmed.contains('/') {
                anchored.add(glob);
            } else {
                names.add(glob);
            }
        }
        let built = |b: globset::GlobSetBuilder| b.build().map_err(|e| (0, e.to_string()));
        Ok(Globs {
            root: root.to_path_buf(),
            patterns: patterns.to_vec(),
            anchored: built(anchored)?,
            names: built(names)?,
        })
    }

    /// Whether `file` (a path as given, relative to the working directory or absolute) is
    /// below the root and matched. Both are compared after resolving `..` and symbolic
    /// links; a file outside the root never matches.
    pub fn matches(&self, file: &Path) -> bool {
        let root = self
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.root.clone());
        let Ok(file) = file.canonicalize() else {
            return false;
        };
        let Ok(rel) = file.strip_prefix(&root) else {
            return false;
        };
        let anchored = rel
            .ancestors()
            .any(|a| !a.as_os_str().is_empty() && self.anchored.is_match(a));
        anchored || rel.components().any(|c| self.names.is_match(c.as_os_str()))
    }
}

/// A bad configuration file: printed `path:line:column: error: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.path, self.line, self.column, self.message
        )
    }
}

/// The file as written; enumerations are checked after parsing so that their errors carry
/// the value's position too.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    lang: Option<Spanned<String>>,
    model: Option<Spanned<String>>,
    mode: Option<Spanned<String>>,
    cost: Option<Spanned<String>>,
    by: Option<Spanned<String>>,
    unroll: Option<u32>,
    recursion: Option<u32>,
    max_executions: Option<u64>,
    timeout: Option<Spanned<f64>>,
    optimal_timeout: Option<Spanned<f64>>,
    collect_limit: Option<usize>,
    spurious_cas: Option<bool>,
    leaks: Option<bool>,
    liveness: Option<bool>,
    comments: Option<bool>,
    equiv: Option<Spanned<String>>,
    jobs: Option<Spanned<usize>>,
    include: Option<Vec<String>>,
    exclude: Option<Spanned<Vec<String>>>,
    #[serde(rename = "per-file")]
    per_file: Option<Vec<RawPerFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPerFile {
    path: Spanned<String>,
    unroll: Option<u32>,
    #[serde(rename = "accept-bound")]
    accept_bound: Option<bool>,
}

/// 1-based line and (byte) column of byte offset `at` of `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text.as_bytes()[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (line, at - start + 1)
}

/// The value of key `key`, one of `T`'s choices, or an error at the value.
fn choice<T: ValueEnum>(
    key: &str,
    v: Option<Spanned<String>>,
    error: &dyn Fn(usize, String) -> ConfigError,
) -> Result<Option<T>, ConfigError> {
    let Some(v) = v else { return Ok(None) };
    T::from_str(v.get_ref(), false).map(Some).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|x| x.to_possible_value())
            .map(|p| format!("\"{}\"", p.get_name()))
            .collect();
        error(
            v.span().start,
            format!(
                "`{key}` must be one of {}, not \"{}\"",
                names.join(", "),
                v.get_ref()
            ),
        )
    })
}

/// The keys that select files: `exclude` and the `[[per-file]]` tables, their globs relative
/// to the directory of the configuration file `path`.
fn file_selection(
    path: &str,
    exclude: Option<Spanned<Vec<String>>>,
    tables: Option<Vec<RawPerFile>>,
    error: &dyn Fn(usize, String) -> ConfigError,
) -> Result<(Option<Globs>, Vec<PerFile>), ConfigError> {
    let dir = Path::new(path).parent().unwrap_or(Path::new(""));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let exclude = match exclude {
        None => None,
        Some(v) => Some(Globs::new(dir, v.get_ref()).map_err(|(_, m)| error(v.span().start, m))?),
    };
    let mut per_file = Vec::new();
    for t in tables.unwrap_or_default() {
        let globs = Globs::new(dir, std::slice::from_ref(t.path.get_ref()))
            .map_err(|(_, m)| error(t.path.span().start, m))?;
        per_file.push(PerFile {
            path: globs,
            unroll: t.unroll,
            accept_bound: t.accept_bound.unwrap_or(false),
        });
    }
    Ok((exclude, per_file))
}

/// Parses the text of configuration file `path` (named in errors as given).
pub fn parse(path: &str, text: &str) -> Result<Config, ConfigError> {
    let error = |at: usize, message: String| {
        let (line, column) = line_column(text, at);
        ConfigError {
            path: path.to_string(),
            line,
            column,
            message,
        }
    };
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        error(at, e.message().trim().to_string())
    })?;
    let seconds = |key: &str, v: Option<Spanned<f64>>| -> Result<Option<f64>, ConfigError> {
        match v {
            None => Ok(None),
            Some(v) if v.get_ref().is_finite() && *v.get_ref() >= 0.0 => Ok(Some(*v.get_ref())),
            Some(v) => Err(error(
                v.span().start,
                format!("`{key}` must be a number of seconds, at least 0"),
            )),
        }
    };
    let (exclude, per_file) = file_selection(path, raw.exclude, raw.per_file, &error)?;
    Ok(Config {
        exclude,
        per_file,
        lang: choice("lang", raw.lang, &error)?,
        model: choice("model", raw.model, &error)?,
        mode: choice("mode", raw.mode, &error)?,
        cost: choice("cost", raw.cost, &error)?,
        by: choice("by", raw.by, &error)?,
        unroll: raw.unroll,
        recursion: raw.recursion,
        max_executions: raw.max_executions,
        timeout: seconds("timeout", raw.timeout)?,
        optimal_timeout: seconds("optimal_timeout", raw.optimal_timeout)?,
        collect_limit: raw.collect_limit,
        spurious_cas: raw.spurious_cas,
        leaks: raw.leaks,
        liveness: raw.liveness,
        comments: raw.comments,
        equiv: choice("equiv", raw.equiv, &error)?,
        jobs: match raw.jobs {
            Some(j) if *j.get_ref() == 0 => {
                return Err(error(j.span().start, "`jobs` must be at least 1".into()))
            }
            j => j.map(|j| *j.get_ref()),
        },
        defines: Vec::new(),
        include: {
            let dir = Path::new(path).parent().unwrap_or(Path::new(""));
            raw.include
                .unwrap_or_default()
                .iter()
                .map(|d| dir.join(d))
                .collect()
        },
        undefs: Vec::new(),
        link: Vec::new(),
        compile_commands: None,
        std: None,
    })
}

impl Config {
    /// Whether the configuration's `exclude` matches `file`.
    pub fn excludes(&self, file: &Path) -> bool {
        self.exclude.as_ref().is_some_and(|g| g.matches(file))
    }

    /// Whether the first `[[per-file]]` table matching `file` accepts the loop bound.
    pub fn bound_accepted_for(&self, file: &Path) -> bool {
        self.per_file
            .iter()
            .find(|p| p.path.matches(file))
            .is_some_and(|p| p.accept_bound)
    }

    /// The loop bound the first `[[per-file]]` table matching `file` sets.
    pub fn unroll_for(&self, file: &Path) -> Option<u32> {
        self.per_file
            .iter()
            .find(|p| p.path.matches(file))
            .and_then(|p| p.unroll)
    }
}

/// Reads and parses configuration file `path`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let name = path.to_string_lossy().into_owned();
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&name, &text),
        Err(e) => Err(ConfigError {
            path: name,
            line: 1,
            column: 1,
            message: format!("cannot read the configuration file: {e}"),
        }),
    }
}

/// A configuration found for an input: where it came from and what it says.
pub type Found = Option<(PathBuf, Rc<Result<Config, ConfigError>>)>;

/// Finds and caches the configuration of each input file.
pub struct Finder {
    /// `--config FILE`: the one configuration of every input.
    explicit: Option<(PathBuf, Rc<Result<Config, ConfigError>>)>,
    disabled: bool,
    /// Per directory searched: the file found from it upwards.
    by_dir: HashMap<PathBuf, Option<PathBuf>>,
    loaded: HashMap<PathBuf, Rc<Result<Config, ConfigError>>>,
    cwd: Option<PathBuf>,
}

impl Finder {
    /// `explicit`: `--config FILE`; `disabled`: `--no-config`.
    pub fn new(explicit: Option<&Path>, disabled: bool) -> Finder {
        Finder {
            explicit: explicit.map(|p| (p.to_path_buf(), Rc::new(load(p)))),
            disabled,
            by_dir: HashMap::new(),
            loaded: HashMap::new(),
            cwd: std::env::current_dir()
                .ok()
                .and_then(|d| d.canonicalize().ok()),
        }
    }

    /// The configuration for input `file`: the explicit one, or the first `fensyn.toml` in
    /// the file's directory and its ancestors.
    pub fn for_file(&mut self, file: &Path) -> Found {
        if self.disabled {
            return None;
        }
        if let Some(e) = &self.explicit {
            return Some(e.clone());
        }
        let dir = file
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = dir.canonicalize().ok()?;
        let found = self.search(&dir)?;
        let cfg = self
            .loaded
            .entry(found.clone())
            .or_insert_with(|| {
                // Errors name the file relative to the working directory when it is below it.
                let shown = self
                    .cwd
                    .as_ref()
                    .and_then(|c| found.strip_prefix(c).ok())
                    .map_or(found.clone(), Path::to_path_buf);
                Rc::new(match std::fs::read_to_string(&found) {
                    Ok(text) => parse(&shown.to_string_lossy(), &text),
                    Err(_) => load(&shown),
                })
            })
            .clone();
        Some((found, cfg))
    }

    fn search(&mut self, dir: &Path) -> Option<PathBuf> {
        if let Some(hit) = self.by_dir.get(dir) {
            return hit.clone();
        }
        let candidate = dir.join(FILE_NAME);
        let hit = if candidate.is_file() {
            Some(candidate)
        } else {
            dir.parent().and_then(|p| self.search(p))
        };
        self.by_dir.insert(dir.to_path_buf(), hit.clone());
        hit
    }
}

/// The options of one run of one file after merging the command line, the configuration and
/// the defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub lang: LangArg,
    pub model: Model,
    pub mode: Mode,
    pub cost: Cost,
    pub by: crate::synth::orders::By,
    pub unroll: u32,
    /// A `[[per-file]]` table accepts the loop bound for this file (`accept-bound = true`).
    pub accept_bound: bool,
    pub max_executions: Option<u64>,
    pub timeout: Option<f64>,
    pub optimal_timeout: f64,
    /// `--collect-limit` ([`crate::synth::SynthOptions::collect_limit`]).
    pub collect_limit: usize,
    pub spurious_cas: bool,
    /// `--leaks`: report heap objects never freed.
    pub leaks: bool,
    /// `--liveness` / `--no-liveness`: report threads spinning forever (`None`: the command's
    /// default — on for `check` and `explain`, off for `fix`).
    pub liveness: Option<bool>,
    /// Whether inserted fences get an explanatory comment (`comments` in the configuration).
    pub comments: bool,
    /// `None`: rf where it is sound, else graph (see `checker::resolve_equiv`).
    pub equiv: Option<crate::checker::Equiv>,
    /// Exploration threads.
    pub jobs: usize,
    /// `-D NAME=VALUE` macros (command line only).
    pub defines: Vec<(String, i64)>,
    /// `-I` (command line, then the file's `include`) and `-U`.
    pub pp: crate::ir::PpOptions,
    pub compile_commands: Option<PathBuf>,
}

impl Settings {
    /// [`Settings::resolve`] for input `file`: a `[[per-file]]` table's `unroll` beats the
    /// file's top-level `unroll` (the command line's still beats both).
    pub fn for_file(cli: &Config, cfg: Option<&Config>, file: &Path) -> Settings {
        let mut s = Settings::resolve(cli, cfg);
        s.accept_bound = cfg.is_some_and(|c| c.bound_accepted_for(file));
        if cli.unroll.is_none() {
            if let Some(n) = cfg.and_then(|c| c.unroll_for(file)) {
                s.unroll = n;
            }
        }
        s
    }

    /// The command line's value where given (`cli`), else the configuration's, else the default.
    pub fn resolve(cli: &Config, cfg: Option<&Config>) -> Settings {
        let empty = Config::default();
        let cfg = cfg.unwrap_or(&empty);
        Settings {
            lang: cli.lang.or(cfg.lang).unwrap_or(LangArg::Auto),
            model: cli.model.or(cfg.model).unwrap_or(Model::Rc11),
            mode: cli.mode.or(cfg.mode).unwrap_or(Mode::Auto),
            cost: cli.cost.or(cfg.cost).unwrap_or(Cost::Count),
            by: cli.by.or(cfg.by).unwrap_or_default(),
            unroll: cli
                .unroll
                .or(cfg.unroll)
                .unwrap_or(crate::checker::DEFAULT_UNROLL),
            accept_bound: false,
            max_executions: cli.max_executions.or(cfg.max_executions),
            timeout: cli.timeout.or(cfg.timeout),
            optimal_timeout: cli
                .optimal_timeout
                .or(cfg.optimal_timeout)
                .unwrap_or(crate::synth::AUTO_OPTIMAL_SECONDS as f64),
            collect_limit: cli
                .collect_limit
                .or(cfg.collect_limit)
                .unwrap_or(crate::synth::COLLECT_LIMIT),
            spurious_cas: cli.spurious_cas.or(cfg.spurious_cas).unwrap_or(false),
            leaks: cli.leaks.or(cfg.leaks).unwrap_or(false),
            liveness: cli.liveness.or(cfg.liveness),
            comments: cli.comments.or(cfg.comments).unwrap_or(true),
            equiv: cli.equiv.or(cfg.equiv),
            jobs: cli
                .jobs
                .or(cfg.jobs)
                .unwrap_or_else(crate::checker::default_jobs),
            defines: cli.defines.clone(),
            pp: crate::ir::PpOptions {
                include_dirs: cli.include.iter().chain(&cfg.include).cloned().collect(),
                defines: Vec::new(),
                undefs: cli.undefs.clone(),
                std: cli.std,
                link: cli.link.clone(),
                recursion: cli.recursion.or(cfg.recursion),
            },
            compile_commands: cli.compile_commands.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key() {
        let c = parse(
            "fensyn.toml",
            "model = \"c11\"\nlang = \"c++\"\nmode = \"fast\"\ncost = \"armv8\"\nunroll = 3\n\
             recursion = 2\nmax_executions = 100\ntimeout = 2\noptimal_timeout = 0.5\ncollect_limit = 7\n\
             spurious_cas = true\ncomments = false\n",
        )
        .unwrap();
        assert_eq!(c.model, Some(Model::C11));
        assert_eq!(c.lang, Some(LangArg::Cpp));
        assert_eq!(c.mode, Some(Mode::Fast));
        assert_eq!(c.cost, Some(Cost::Armv8));
        assert_eq!(c.unroll, Some(3));
        assert_eq!(c.recursion, Some(2));
        assert_eq!(c.max_executions, Some(100));
        assert_eq!(c.timeout, Some(2.0));
        assert_eq!(c.optimal_timeout, Some(0.5));
        assert_eq!(c.collect_limit, Some(7));
        assert_eq!(c.spurious_cas, Some(true));
        assert_eq!(c.comments, Some(false));
        assert_eq!(parse("f", "").unwrap(), Config::default());
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("cfg/fensyn.toml", "model = \"rc11\"\nunrol = 3\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1), "{e}");
        assert!(
            e.to_string().starts_with("cfg/fensyn.toml:2:1: error: "),
            "{e}"
        );
        assert!(e.message.contains("unrol"), "{e}");

        let e = parse("f", "unroll = 3\nmodel = \"x86\"\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 9), "{e}");
        assert!(e.message.contains("\"rc11\""), "{e}");

        let e = parse("f", "unroll = -1\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 10), "{e}");

        let e = parse("f", "\ncomments = \"no\"\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 12), "{e}");

        let e = parse("f", "timeout = -2.5\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 11), "{e}");
        assert!(e.message.contains("seconds"), "{e}");

        let e = parse("f", "model = \n").unwrap_err();
        assert_eq!(e.line, 1, "{e}");
    }

    #[test]
    fn command_line_beats_file_beats_default() {
        let file = Config {
            model: Some(Model::Sc),
            unroll: Some(2),
            comments: Some(false),
            ..Config::default()
        };
        let cli = Config {
            model: Some(Model::C11),
            ..Config::default()
        };
        let s = Settings::resolve(&cli, Some(&file));
        assert_eq!(s.model, Model::C11);
        assert_eq!(s.unroll, 2);
        assert!(!s.comments);
        assert_eq!(s.cost, Cost::Count);
        let d = Settings::resolve(&Config::default(), None);
        assert_eq!(d.unroll, crate::checker::DEFAULT_UNROLL);
        assert!(d.comments);
        assert_eq!(d.lang, LangArg::Auto);
    }

    #[test]
    fn exclude_and_per_file_globs_are_relative_to_the_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "a.c",
            "vendor/x/b.c",
            "gen/c_gen.c",
            "src/d.c",
            "src/gen/e.c",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
        }
        let cfg_path = root.join("fensyn.toml");
        let c = parse(
            &cfg_path.to_string_lossy(),
            "exclude = [\"vendor\", \"gen/*_gen.c\"]\n[[per-file]]\npath = \"src/**/*.c\"\n\
             unroll = 3\n[[per-file]]\npath = \"*.c\"\nunroll = 5\n",
        )
        .unwrap();
        assert!(c.excludes(&root.join("vendor/x/b.c")));
        assert!(c.excludes(&root.join("gen/c_gen.c")));
        assert!(!c.excludes(&root.join("a.c")));
        // `gen/*_gen.c` is anchored at the configuration's directory.
        assert!(!c.excludes(&root.join("src/gen/e.c")));
        assert_eq!(c.unroll_for(&root.join("src/d.c")), Some(3));
        assert_eq!(c.unroll_for(&root.join("src/gen/e.c")), Some(3));
        assert_eq!(c.unroll_for(&root.join("a.c")), Some(5));
        let s = Settings::for_file(&Config::default(), Some(&c), &root.join("src/d.c"));
        assert_eq!(s.unroll, 3);
        let cli = Config {
            unroll: Some(2),
            ..Config::default()
        };
        assert_eq!(
            Settings::for_file(&cli, Some(&c), &root.join("src/d.c")).unroll,
            2
        );

        let e = parse("f", "exclude = [\"a[\"]\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 11), "{e}");
        let e = parse("f", "[[per-file]]\npath = \"*.c\"\nunrol = 2\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
    }
}
