//! The meter as a picture: a self-contained SVG, readable in any browser and small enough to
//! paste into an issue. Bars of each server's up-front tokens on each path (a log scale: eager
//! loading is thousands of times the rest), and the session model's billed tokens turn by turn.
//! Every figure drawn is also written as a label, the same number the text table prints.

use std::fmt::Write;

/// One path's colour and name.
const PATHS: [(&str, &str); 4] = [
    ("MCP eager", "#d9534f"),
    ("MCP deferred", "#f0ad4e"),
    ("ferry CLI", "#5cb85c"),
    ("ferry proxy", "#428bca"),
];

/// What the picture shows.
pub struct Picture {
    pub title: String,
    /// Per server: its name and its up-front tokens on each path, in [`PATHS`] order (`None`
    /// for a path not measured).
    pub servers: Vec<(String, [Option<f64>; 4])>,
    /// Per path, the billed tokens after each turn of the session model.
    pub session: Vec<(usize, Vec<f64>)>,
    pub session_title: String,
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn figure(value: f64) -> String {
    let n = value.round() as i64;
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Renders the SVG.
pub fn render(picture: &Picture) -> String {
    let width = 760.0;
    let label_w = 170.0;
    let bar_h = 9.0;
    let row_h = bar_h * 4.0 + 10.0;
    let max = picture
        .servers
        .iter()
        .flat_map(|(_, v)| v.iter().flatten())
        .fold(1.0f64, |m, v| m.max(*v));
    let log_max = (max.max(10.0)).log10();
    let scale = |v: f64| (v.max(1.0).log10() / log_max) * (width - label_w - 90.0);
    let bars_h = 60.0 + row_h * picture.servers.len() as f64;
    let chart_h = 220.0;
    let height = bars_h + chart_h + 70.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#,
        escape(&picture.title)
    );
    for (i, (name, colour)) in PATHS.iter().enumerate() {
        let x = 10.0 + i as f64 * 150.0;
        let _ = writeln!(
            out,
            r#"<rect x="{x}" y="30" width="10" height="10" fill="{colour}"/><text x="{}" y="39">{name}</text>"#,
            x + 14.0
        );
    }
    for (row, (server, values)) in picture.servers.iter().enumerate() {
        let y = 55.0 + row as f64 * row_h;
        let _ = writeln!(
            out,
            r#"<text x="10" y="{}">{}</text>"#,
            y + row_h / 2.0,
            escape(server)
        );
        for (i, value) in values.iter().enumerate() {
            let Some(value) = value else { continue };
            let by = y + i as f64 * bar_h;
            let w = scale(*value);
            let _ = writeln!(
                out,
                r#"<rect x="{label_w}" y="{by}" width="{w:.1}" height="{}" fill="{}"><title>{}: {}</title></rect><text x="{:.1}" y="{}" font-size="9">{}</text>"#,
                bar_h - 1.0,
                PATHS[i].1,
                PATHS[i].0,
                figure(*value),
                label_w + w + 4.0,
                by + bar_h - 1.5,
                figure(*value)
            );
        }
    }
    // The session, turn by turn.
    let top = bars_h + 30.0;
    let _ = writeln!(
        out,
        r#"<text x="10" y="{}" font-size="13" font-weight="bold">{}</text>"#,
        top - 8.0,
        escape(&picture.session_title)
    );
    let turns = picture
        .session
        .iter()
        .map(|(_, v)| v.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let peak = picture
        .session
        .iter()
        .flat_map(|(_, v)| v.iter())
        .fold(1.0f64, |m, v| m.max(*v));
    let low = picture
        .session
        .iter()
        .flat_map(|(_, v)| v.iter())
        .fold(peak, |m, v| m.min(*v))
        .max(1.0);
    // A log scale from the power of ten below the lowest figure to the peak.
    let (floor, ceiling) = (low.log10().floor(), peak.max(10.0).log10());
    let span = (ceiling - floor).max(1.0);
    let plot_w = width - label_w - 170.0;
    let x_of = |turn: usize| label_w + plot_w * (turn as f64) / (turns as f64);
    let y_of = |v: f64| top + chart_h - ((v.max(1.0).log10() - floor) / span) * chart_h;
    let _ = writeln!(
        out,
        "<line x1=\"{label_w}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>",
        top + chart_h,
        label_w + plot_w,
        top + chart_h
    );
    let _ = writeln!(
        out,
        r#"<text x="{label_w}" y="{}">turn 1</text><text x="{}" y="{}" text-anchor="end">turn {turns}</text>"#,
        top + chart_h + 14.0,
        label_w + plot_w,
        top + chart_h + 14.0
    );
    let mut ends: Vec<(f64, String)> = Vec::new();
    for (path, totals) in &picture.session {
        let (name, colour) = PATHS[*path];
        let points: Vec<String> = totals
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{:.1},{:.1}", x_of(i + 1), y_of(*v)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
            points.join(" ")
        );
        if let Some(last) = totals.last() {
            ends.push((
                y_of(*last) + 4.0,
                format!(r#"fill="{colour}">{name}: {}"#, figure(*last)),
            ));
        }
    }
    // End labels, moved apart where lines end close together.
    ends.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut previous = f64::MIN;
    for (y, label) in ends {
        let y = y.max(previous + 13.0);
        previous = y;
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{y:.1}" {label}</text>"#,
            x_of(turns) + 6.0
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_grouped_and_text_is_escaped() {
        assert_eq!(figure(67065.0), "67,065");
        assert_eq!(figure(51.0), "51");
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
