//! `geomill run`: a pipeline on local files, through the same execution path as the API, with
//! a scratch store that is removed afterwards, a progress bar on stderr, and the run's time and
//! peak memory at the end.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use crate::config::Config;
use crate::datasets::upload::source_for;
use crate::error::AppError;
use crate::execute::{RunRequest, run};
use crate::state::AppState;
use geomill_backends::store::Reader;
use geomill_planner::optimizer::EngineMode;
use geomill_planner::plan::operator::ExportFormat;

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("geomill run: {message}");
    ExitCode::from(code)
}

fn describe(error: &AppError) -> String {
    let problems = error
        .detail
        .as_ref()
        .and_then(|d| d.get("problems"))
        .and_then(|p| p.as_array())
        .map(|problems| {
            problems
                .iter()
                .map(|p| {
                    format!(
                        "\n  {}: {}",
                        p["path"].as_str().unwrap_or(""),
                        p["message"].as_str().unwrap_or("")
                    )
                })
                .collect::<String>()
        })
        .unwrap_or_default();
    if problems.is_empty() {
        error.message.clone()
    } else {
        format!("invalid pipeline:{problems}")
    }
}

fn draw(done: usize, total: usize) {
    let width = 30;
    let filled = (done * width)
        .checked_div(total)
        .unwrap_or(width)
        .min(width);
    eprint!(
        "\r[{}{}] {done}/{total} statements",
        "#".repeat(filled),
        " ".repeat(width - filled)
    );
    let _ = std::io::stderr().flush();
}

/// One `--input`: the source name it gives (`None`: the bare `input`) and the file.
#[derive(Debug, PartialEq)]
struct InputFile {
    name: Option<String>,
    path: PathBuf,
}

/// `NAME=PATH` or `PATH` (a path that exists is taken whole even if it holds `=`).
fn parse_input(text: &str) -> Result<InputFile, String> {
    let named = text.split_once('=').filter(|(name, _)| {
        !Path::new(text).exists()
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    });
    let input = match named {
        Some((name, path)) => InputFile {
            name: Some(name.to_owned()),
            path: PathBuf::from(path),
        },
        None => InputFile {
            name: None,
            path: PathBuf::from(text),
        },
    };
    if input.path.as_os_str().is_empty() {
        return Err(format!("--input {text:?} names no file"));
    }
    Ok(input)
}

/// The process's peak resident memory in MiB (Linux), for the closing line.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

/// The files `geomill run` reads: `--input [NAME=]PATH` and GISPulse's `--ref-source NAME:PATH`.
pub struct Inputs<'a> {
    pub inputs: &'a [String],
    pub ref_sources: &'a [String],
}

/// The inputs a GISPulse document's reference layers add: each `--ref-source NAME:PATH` (in a
/// v2 pipeline written into `ref_layers.NAME`, as GISPulse's `run` does), and each `ref_layers`
/// path of a v2 pipeline as the layer the planner reads it as (its file name without extension),
/// unless an input already has that name.
fn reference_inputs(
    document: &mut serde_json::Value,
    ref_sources: &[String],
    inputs: &mut Vec<InputFile>,
) -> Result<(), String> {
    use geomill_planner::gispulse::{Form, detect, lower::layer_of};
    let form = detect(document);
    for entry in ref_sources {
        let Some((name, path)) = entry
            .split_once(':')
            .filter(|(n, p)| !n.is_empty() && !p.is_empty())
        else {
            return Err(format!("--ref-source must be NAME:PATH, got {entry:?}"));
        };
        if form == Some(Form::PipelineV2) {
            if let Some(object) = document.as_object_mut() {
                let layers = object
                    .entry("ref_layers")
                    .or_insert_with(|| serde_json::json!({}));
                if let Some(layers) = layers.as_object_mut() {
                    layers.insert(name.to_owned(), serde_json::Value::String(path.to_owned()));
                }
            }
        } else {
            inputs.push(InputFile {
                name: Some(name.to_owned()),
                path: PathBuf::from(path),
            });
        }
    }
    if form == Some(Form::PipelineV2)
        && let Some(layers) = document.get("ref_layers").and_then(|l| l.as_object())
    {
        for path in layers.values().filter_map(|p| p.as_str()) {
            let name = layer_of(path);
            if !inputs
                .iter()
                .any(|i| i.name.as_deref() == Some(name.as_str()))
            {
                inputs.push(InputFile {
                    name: Some(name),
                    path: PathBuf::from(path),
                });
            }
        }
    }
    Ok(())
}

/// Runs `file` on the inputs with `engine`; exports go under the current directory; `output`
/// also receives the result as a GeoPackage.
pub fn main(
    file: &Path,
    files: &Inputs<'_>,
    engine: &str,
    vars: &[String],
    output: Option<&Path>,
) -> ExitCode {
    let inputs = files.inputs;
    let mut document = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(document) => document,
        Err(error) => return fail(2, &format!("cannot read {}: {error}", file.display())),
    };
    let vars = match geomill_planner::spec::Vars::from_pairs(vars.iter().map(String::as_str)) {
        Ok(vars) => vars.values,
        Err(error) => return fail(2, &error),
    };
    let mut inputs = match inputs
        .iter()
        .map(|i| parse_input(i))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(inputs) => inputs,
        Err(error) => return fail(2, &error),
    };
    if let Err(error) = reference_inputs(&mut document, files.ref_sources, &mut inputs) {
        return fail(2, &error);
    }
    if inputs.iter().filter(|i| i.name.is_none()).count() > 1 {
        return fail(
            2,
            "only one --input may be a bare PATH; name the others NAME=PATH",
        );
    }
    let Some(engine) = EngineMode::parse(engine) else {
        return fail(
            2,
            &format!("--engine {engine}: use embedded, native, postgis, hybrid or distributed"),
        );
    };
    let mut config = Config::with_data_dir(std::env::temp_dir());
    if engine.on_postgis() {
        match std::env::var("GEOMILL_POSTGIS_DSN") {
            Ok(dsn) if !dsn.is_empty() => config.postgis_dsn = Some(dsn),
            _ => {
                return fail(
                    2,
                    &format!("--engine {} needs GEOMILL_POSTGIS_DSN", engine.as_str()),
                );
            }
        }
    }
    if engine == EngineMode::Distributed {
        // The cluster's scheduler, and the directory its executors read staged layers from.
        let url = std::env::var("GEOMILL_BALLISTA_URL").ok();
        let shared = std::env::var_os("GEOMILL_DISTRIBUTED_DIR");
        let (Some(url), Some(shared)) = (url.filter(|u| u.starts_with("df://")), shared) else {
            return fail(
                2,
                "--engine distributed needs GEOMILL_BALLISTA_URL (df://host:port) and GEOMILL_DISTRIBUTED_DIR",
            );
        };
        config.ballista_url = Some(url);
        config.distributed_dir = Some(PathBuf::from(shared));
    }
    let scratch = std::env::temp_dir().join(format!("geomill-run-{}", uuid::Uuid::new_v4()));
    config.data_dir = scratch.clone();
    config.store_in_memory = true;
    // The embedded database reaches the inputs' folders and the working directory (exports,
    // `--output`) besides its scratch folders, nothing else.
    config.file_dirs = inputs
        .iter()
        .filter_map(|input| {
            std::path::absolute(&input.path)
                .ok()?
                .parent()
                .map(Path::to_path_buf)
        })
        .chain(std::env::current_dir().ok())
        .chain(output.and_then(|o| std::path::absolute(o).ok()?.parent().map(Path::to_path_buf)))
        .collect();
    let started = std::time::Instant::now();
    let code = run_in(config, document, &inputs, engine, vars, output);
    let _ = std::fs::remove_dir_all(&scratch);
    let memory = peak_rss_mib().map_or_else(String::new, |m| format!(", peak memory {m:.0} MiB"));
    eprintln!(
        "{} in {:.2} s on {}{memory}",
        if code == ExitCode::SUCCESS {
            "done"
        } else {
            "stopped"
        },
        started.elapsed().as_secs_f64(),
        engine.as_str()
    );
    code
}

/// A GeoPackage input of a native run read natively and written as a GeoParquet file under
/// `folder`, which the run then reads in place: no GDAL read into DuckDB and export back out.
/// `None` when the native reader declines the file (it then loads through GDAL).
fn geopackage_as_geoparquet(folder: &Path, path: &Path) -> Option<PathBuf> {
    let read = geomill_native::geopackage::read_geopackage(path).ok()?;
    // The file's stem is the layer's name: a name that is not a plain file name goes to GDAL.
    if read.name.is_empty() || read.name.contains(['/', '\\', '\0']) || read.name.starts_with('.') {
        return None;
    }
    let types: &[&str] = match read.geometry_type.as_str() {
        "POINT" => &["Point"],
        "LINESTRING" => &["LineString"],
        "POLYGON" => &["Polygon"],
        "MULTIPOINT" => &["MultiPoint"],
        "MULTILINESTRING" => &["MultiLineString"],
        "MULTIPOLYGON" => &["MultiPolygon"],
        "GEOMETRYCOLLECTION" => &["GeometryCollection"],
        // Any type: every one of them.
        _ => &[
            "Point",
            "LineString",
            "Polygon",
            "MultiPoint",
            "MultiLineString",
            "MultiPolygon",
            "GeometryCollection",
        ],
    };
    std::fs::create_dir_all(folder).ok()?;
    let file = folder.join(format!("{}.parquet", read.name));
    geomill_native::write_typed_geoparquet(&read.layer, &file, types).ok()?;
    Some(file)
}

/// The point cloud at `path` as a GeoParquet point layer in the run's scratch folder `id`, with
/// its columns only: its rows are written when a statement first reads them, and a step that
/// reduces points natively streams the file itself (`SourceFile::point_cloud`). Answers the
/// file and how many points the cloud holds.
fn pointcloud_as_geoparquet(
    state: &AppState,
    id: &str,
    path: &Path,
) -> Result<(PathBuf, u64), ExitCode> {
    let folder = state.config().data_dir.join("tmp").join(id);
    std::fs::create_dir_all(&folder).map_err(|e| fail(1, &format!("{}: {e}", folder.display())))?;
    let stem = path
        .file_stem()
        .map_or_else(|| "points".to_owned(), |s| s.to_string_lossy().into_owned());
    let target = folder.join(format!("{stem}.parquet"));
    let info = geomill_native::pointcloud::columns_as_geoparquet(path, &target)
        .map_err(|e| fail(2, &format!("{}: {e}", path.display())))?;
    Ok((target, info.points))
}

/// Loads one input as a dataset named `name` (from `converted`, its native GeoParquet copy,
/// when there is one); answers its id.
fn load(
    state: &AppState,
    input: &InputFile,
    converted: Option<PathBuf>,
) -> Result<String, ExitCode> {
    let started = std::time::Instant::now();
    let id = uuid::Uuid::new_v4().to_string();
    let file_name = input
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = input.name.clone().unwrap_or_else(|| file_name.clone());
    let readable = if input
        .path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("zip"))
    {
        let folder = state.config().data_dir.join("tmp").join(&id);
        crate::datasets::unpack::unpack(&input.path, &folder, u64::MAX)
            .map_err(|e| fail(2, &format!("{}: {e}", input.path.display())))?
    } else {
        input.path.clone()
    };
    // A LAS/LAZ input is a GeoParquet point layer written from it when first read.
    let is_cloud = crate::datasets::pointcloud::is_pointcloud_path(&readable);
    let mut points = None;
    let converted = match converted {
        None if is_cloud => {
            let (file, count) = pointcloud_as_geoparquet(state, &id, &readable)?;
            points = Some(count);
            Some(file)
        }
        other => other,
    };
    let mut source = source_for(converted.as_deref().unwrap_or(&readable));
    if is_cloud {
        source.format = crate::datasets::pointcloud::format_of(&readable).map(str::to_owned);
        source.point_cloud = std::path::absolute(&readable).ok();
    }
    // The scratch store lives no longer than the run and the file outlasts it: a GeoParquet
    // layer is read where it is, not copied first.
    if source.reader == Reader::Parquet {
        source.reader = Reader::ParquetInPlace;
    }
    match state
        .store()
        .ingest(&id, &name, &input.path.display().to_string(), &source)
    {
        Ok(Ok(dataset)) => {
            let layers: Vec<String> = dataset
                .layers
                .iter()
                .map(|l| {
                    let count = points.or(l.feature_count.and_then(|c| u64::try_from(c).ok()));
                    format!("{} ({} features)", l.name, count.unwrap_or(0))
                })
                .collect();
            let as_source = input
                .name
                .as_ref()
                .map_or_else(String::new, |n| format!(" as {n}"));
            eprintln!(
                "loaded {file_name}{as_source}: {} in {:.2} s",
                layers.join(", "),
                started.elapsed().as_secs_f64()
            );
            Ok(id)
        }
        Ok(Err(rejected)) => Err(fail(2, &rejected.0)),
        Err(error) => Err(fail(1, &error.to_string())),
    }
}

fn run_in(
    config: Config,
    document: serde_json::Value,
    inputs: &[InputFile],
    engine: EngineMode,
    vars: std::collections::BTreeMap<String, String>,
    output: Option<&Path>,
) -> ExitCode {
    // GeoPackages of a native run are read natively while the store opens.
    let conversions: Vec<Option<std::thread::JoinHandle<Option<PathBuf>>>> = inputs
        .iter()
        .enumerate()
        .map(|(position, input)| {
            let is_geopackage = input
                .path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("gpkg"));
            (engine == EngineMode::Native && is_geopackage).then(|| {
                let folder = config
                    .data_dir
                    .join("tmp")
                    .join(format!("native-{position}"));
                let path = input.path.clone();
                std::thread::spawn(move || geopackage_as_geoparquet(&folder, &path))
            })
        })
        .collect();
    let opening = std::time::Instant::now();
    let state = match AppState::open(config) {
        Ok(state) => state,
        Err(error) => return fail(1, &error.to_string()),
    };
    eprintln!(
        "opened the scratch store in {:.2} s",
        opening.elapsed().as_secs_f64()
    );
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(1, &error.to_string()),
    };
    let mut first_named = None;
    let mut bare = None;
    for (input, conversion) in inputs.iter().zip(conversions) {
        // A GeoTIFF is a raster dataset the raster steps name (by its file name, or NAME).
        if crate::datasets::raster::is_raster_path(&input.path) {
            let name = input.name.clone().unwrap_or_else(|| {
                input
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
            let id = uuid::Uuid::new_v4().to_string();
            let registered = runtime.block_on(crate::datasets::raster::register(
                &state,
                &id,
                name.clone(),
                &input.path,
            ));
            match registered {
                Ok(_) => eprintln!("loaded {name}: a raster"),
                Err(error) => return fail(2, &describe(&error)),
            }
            continue;
        }
        let converted = conversion.and_then(|c| c.join().ok().flatten());
        let id = match load(&state, input, converted) {
            Ok(id) => id,
            Err(code) => return code,
        };
        match input.name {
            Some(_) => {
                first_named.get_or_insert(id);
            }
            None => bare = Some(id),
        }
    }
    let outputs_root = std::env::current_dir().ok();
    let output_format = output.and_then(|o| ExportFormat::from_extension(&o.display().to_string()));
    let request = RunRequest {
        document,
        dataset_id: bare.or(first_named),
        vars,
        outputs_root,
        progress: Some(Arc::new(draw)),
        engine,
        result_as_geoparquet: output_format == Some(ExportFormat::Parquet),
        ..RunRequest::default()
    };
    let running = std::time::Instant::now();
    let execution = match runtime.block_on(run(&state, request)) {
        Ok(execution) => execution,
        Err(error) => {
            eprintln!();
            return fail(1, &describe(&error));
        }
    };
    eprintln!(
        "\r[{}] done in {:.2} s{}",
        "#".repeat(30),
        running.elapsed().as_secs_f64(),
        " ".repeat(12)
    );
    for stage in &execution.native {
        match (&stage.declined, stage.seconds) {
            (Some(reason), _) => eprintln!("{}: ran as SQL ({reason})", stage.relation),
            (None, Some(seconds)) => eprintln!(
                "{}: native, read {:.2} s, kernels {:.2} s, stored {:.2} s",
                stage.relation, seconds.read, seconds.kernels, seconds.store
            ),
            (None, None) => {}
        }
    }
    println!(
        "completed: {} step(s), {} feature(s) in the result",
        execution.steps_executed, execution.result_features
    );
    for path in &execution.outputs {
        println!("wrote {path}");
    }
    // The rasters the run wrote, from the scratch store to the current directory.
    for raster in &execution.rasters {
        let Ok(Some(record)) = state.store().dataset(&raster.id) else {
            continue;
        };
        let target = PathBuf::from(format!("{}.tif", raster.name));
        if let Err(error) = std::fs::copy(&record.path, &target) {
            return fail(1, &format!("cannot write {}: {error}", target.display()));
        }
        println!("wrote {}", target.display());
    }
    if let Some(output) = output {
        // The result is in the format asked when the engine wrote it so (a GeoPackage, or
        // GeoParquet on the engines that write it).
        let written = ExportFormat::from_extension(&execution.result_path);
        let format = output_format.filter(|f| *f != ExportFormat::Gpkg && Some(*f) != written);
        // The scratch folder goes after the run: its result is moved out when it is in the
        // format asked; another format named by the extension is written from it.
        let moved = match format {
            Some(format) => crate::datasets::export::write_file(
                &state.store(),
                &state.embedded(),
                &crate::datasets::export::ExportSource::File {
                    path: execution.result_path.clone(),
                    layer_name: "result".into(),
                },
                &output.display().to_string(),
                format,
            )
            .map_err(|e| std::io::Error::other(describe(&e))),
            None => std::fs::rename(&execution.result_path, output)
                .or_else(|_| std::fs::copy(&execution.result_path, output).map(|_| ())),
        };
        if let Err(error) = moved {
            return fail(1, &format!("cannot write {}: {error}", output.display()));
        }
        println!("wrote {}", output.display());
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_named_or_bare() {
        assert_eq!(
            parse_input("points=data/p.parquet"),
            Ok(InputFile {
                name: Some("points".into()),
                path: "data/p.parquet".into()
            })
        );
        assert_eq!(
            parse_input("data/world.gpkg"),
            Ok(InputFile {
                name: None,
                path: "data/world.gpkg".into()
            })
        );
        // Not a name before `=`: the whole text is the path.
        assert_eq!(parse_input("a b=c.gpkg").map(|i| i.name), Ok(None));
        assert!(parse_input("points=").is_err());
    }
}
