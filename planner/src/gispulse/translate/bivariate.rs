//! GISPulse's `bivariate_choropleth` onto two native classifications: each field classed on its
//! own (`bins` = `grid`), the cell written `"y_x"` (from 1) with its colour from GISPulse's
//! Stevens matrices, resampled bilinearly for grids other than 3. Native
//! `bivariate_choropleth` is another rule (breaks over rows having both values, an integer
//! class, blended ColorBrewer schemes), so it is not used.

use serde_json::json;

use super::classes::native_method;
use super::{Args, Emitted, Scope, Translator, params};
use crate::sql::quote::{ident, string};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "bivariate_choropleth" => bivariate_choropleth,
        _ => return None,
    })
}

/// Native class columns the translation uses for a moment.
const CLASS_X: &str = "__geomill_gispulse_class_x";
const CLASS_Y: &str = "__geomill_gispulse_class_y";

/// GISPulse's 3×3 matrices, rows from low `y` to high, columns from low `x`.
const MATRICES: [(&str, [[&str; 3]; 3]); 3] = [
    (
        "BlueOrange",
        [
            ["#e8e8e8", "#e4acac", "#c85a5a"],
            ["#b0d5df", "#ad9ea5", "#985356"],
            ["#64acbe", "#627f8c", "#574249"],
        ],
    ),
    (
        "PurpleGreen",
        [
            ["#e8e8e8", "#ace4e4", "#5ac8c8"],
            ["#dfb0d6", "#a5add3", "#5698b9"],
            ["#be64ac", "#8c62aa", "#3b4994"],
        ],
    ),
    (
        "BluePink",
        [
            ["#e8e8e8", "#e4d9ac", "#c8b35a"],
            ["#cbb8d7", "#c8ada0", "#af8e53"],
            ["#9972af", "#976b82", "#804d36"],
        ],
    ),
];

fn bivariate_choropleth(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let (Some(field_x), Some(field_y)) = (args.string("field_x"), args.string("field_y")) else {
        args.problem("field_x", "field_x and field_y are required");
        return;
    };
    let grid = args.integer("grid").unwrap_or(3);
    if !(2..=5).contains(&grid) {
        args.problem("grid", "must be from 2 to 5");
        return;
    }
    let grid = grid as usize;
    let name = args
        .string("palette")
        .unwrap_or_else(|| "BlueOrange".into());
    let Some((_, base)) = MATRICES.iter().find(|(known, _)| *known == name) else {
        let known: Vec<&str> = MATRICES.iter().map(|(known, _)| *known).collect();
        args.problem(
            "palette",
            format!("{name:?} is not a bivariate palette ({})", known.join(", ")),
        );
        return;
    };
    let (Some(method_x), Some(method_y)) = (
        native_method(args, "method_x"),
        native_method(args, "method_y"),
    ) else {
        return;
    };
    let class = args
        .string("class_col")
        .unwrap_or_else(|| "bi_class".into());
    let color = args
        .string("color_col")
        .unwrap_or_else(|| "bi_color".into());
    for (field, method, output) in [(&field_x, method_x, CLASS_X), (&field_y, method_y, CLASS_Y)] {
        out.main(
            "classify",
            params([
                ("field", json!(field)),
                ("method", json!(method)),
                ("classes", json!(grid)),
                ("output", json!(output)),
            ]),
        );
    }
    let matrix = resampled(base, grid);
    let (x, y) = (ident(CLASS_X), ident(CLASS_Y));
    let mut cells = String::new();
    let mut colors = String::new();
    for (yi, row) in matrix.iter().enumerate() {
        for (xi, hex) in row.iter().enumerate() {
            let when = format!(" WHEN {y} = {yi} AND {x} = {xi} THEN");
            cells.push_str(&format!(
                "{when} {}",
                string(&format!("{}_{}", yi + 1, xi + 1))
            ));
            colors.push_str(&format!("{when} {}", string(hex)));
        }
    }
    out.main(
        "calculate",
        params([(
            "expressions",
            json!({class: format!("CASE{cells} END"), color: format!("CASE{colors} END")}),
        )]),
    );
    let scratch: Vec<String> = [CLASS_X, CLASS_Y]
        .iter()
        .flat_map(|c| [c.to_string(), format!("{c}_lower"), format!("{c}_upper")])
        .collect();
    out.main("drop_field", params([("fields", json!(scratch))]));
}

/// GISPulse's `grid`×`grid` matrix: the 3×3 one itself, else each cell's colour a bilinear
/// blend of the 3×3 cells around its place (Python's float arithmetic, rounded half to even).
fn resampled(base: &[[&str; 3]; 3], grid: usize) -> Vec<Vec<String>> {
    if grid == 3 {
        return base
            .iter()
            .map(|row| row.iter().map(|c| c.to_string()).collect())
            .collect();
    }
    let rgb = |y: usize, x: usize| -> [f64; 3] {
        let hex = base[y.min(2)][x.min(2)].trim_start_matches('#');
        let channel = |k: usize| {
            u8::from_str_radix(hex.get(2 * k..2 * k + 2).unwrap_or("00"), 16).unwrap_or(0) as f64
        };
        [channel(0), channel(1), channel(2)]
    };
    (0..grid)
        .map(|y| {
            let ty = y as f64 / (grid - 1) as f64 * 2.0;
            (0..grid)
                .map(|x| {
                    let tx = x as f64 / (grid - 1) as f64 * 2.0;
                    let (lo_y, lo_x) = (ty as usize, tx as usize);
                    let (fy, fx) = (ty - lo_y as f64, tx - lo_x as f64);
                    let (c00, c10) = (rgb(lo_y, lo_x), rgb(lo_y + 1, lo_x));
                    let (c01, c11) = (rgb(lo_y, lo_x + 1), rgb(lo_y + 1, lo_x + 1));
                    let channel = |k: usize| {
                        let v = (1.0 - fy) * ((1.0 - fx) * c00[k] + fx * c01[k])
                            + fy * ((1.0 - fx) * c10[k] + fx * c11[k]);
                        v.round_ties_even() as u8
                    };
                    format!("#{:02x}{:02x}{:02x}", channel(0), channel(1), channel(2))
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn translated(given: Value) -> (Vec<String>, Emitted) {
        super::super::translated_by(bivariate_choropleth, given)
    }

    #[test]
    fn two_classifications_then_a_cell_and_its_colour() {
        let (problems, out) = translated(
            json!({"field_x": "a", "field_y": "b", "method_y": "equal_interval", "grid": 2}),
        );
        assert!(problems.is_empty(), "{problems:?}");
        let steps: Vec<&str> = out.steps.iter().map(|(c, _, _)| c.as_str()).collect();
        assert_eq!(steps, ["classify", "classify", "calculate", "drop_field"]);
        assert_eq!(out.steps[0].1["method"], "qcut");
        assert_eq!(out.steps[1].1["method"], "equal_interval");
        let expressions = &out.steps[2].1["expressions"];
        let cells = expressions["bi_class"].as_str().unwrap();
        assert!(
            cells.contains("= 1 AND \"__geomill_gispulse_class_x\" = 0 THEN '2_1'"),
            "{cells}"
        );
        // A 2×2 grid is the 3×3 matrix's corners.
        let colors = expressions["bi_color"].as_str().unwrap();
        assert!(
            colors.contains("= 1 AND \"__geomill_gispulse_class_x\" = 1 THEN '#574249'"),
            "{colors}"
        );
    }

    #[test]
    fn a_larger_grid_blends_the_matrix_as_gispulse() {
        // GISPulse 2.2.3's `_bivariate_palette` for these grids.
        assert_eq!(
            resampled(&MATRICES[0].1, 4)[0],
            ["#e8e8e8", "#e5c0c0", "#db9191", "#c85a5a"]
        );
        assert_eq!(
            resampled(&MATRICES[1].1, 4)[2],
            ["#d497c8", "#af95c6", "#828dbd", "#4d7ead"]
        );
        assert_eq!(
            resampled(&MATRICES[2].1, 5)[3],
            ["#b295c3", "#b190aa", "#b08c91", "#a47d6b", "#986e44"]
        );
    }

    #[test]
    fn unknown_palettes_and_methods_are_named() {
        let (problems, _) = translated(json!({"field_x": "a", "field_y": "b", "palette": "Reds"}));
        assert!(problems[0].contains("BluePink"), "{problems:?}");
        let (problems, _) =
            translated(json!({"field_x": "a", "field_y": "b", "method_x": "jenks"}));
        assert!(problems[0].contains("jenks"), "{problems:?}");
    }
}
