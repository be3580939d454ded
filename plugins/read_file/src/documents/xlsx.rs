//! XLSX text in Cline's layout (its ExcelJS walk): each visible worksheet as
//! `--- Sheet: <name> ---`, then every row with content as its cells' texts joined by tabs (from
//! the first column to the row's last cell), a blank line after each sheet, the whole trimmed.
//! Past row 50,000 a sheet stops with `[... truncated at row N ...]`.
//!
//! Cell texts as Cline writes them: numbers as JavaScript prints them, dates `YYYY-MM-DD`, rich
//! text flattened, errors `[Error: #DIV/0!]`, a formula's cached result or else
//! `[Formula: SUM(A1:A2)]`, booleans `true`/`false`; every cell of a merged range shows the
//! range's value. Cells are streamed (calamine's cell reader), never laid out as a dense grid,
//! so a sheet whose cells are far apart costs no memory.
//!
//! Differences from Cline: hyperlinks show their text without ` (url)` (calamine does not read
//! them); a cell that only carries a style adds no trailing tab; a formula whose cached result is
//! an error or a date shows it as such a cell would (ExcelJS prints `[object Object]` and
//! JavaScript's long date text); and a sheet stops at the first row past 50,000 (Cline's loop
//! cannot stop, so it writes the notice once for every further row).

use std::collections::{BTreeMap, HashMap};
use std::io::Cursor;

use calamine::{DataRef, Dimensions, Reader, SheetType, SheetVisible, Xlsx};

use super::budget::{Budget, Stop};
use super::output::Output;
use super::zipped;

/// The last row a sheet shows (Cline's 50,000).
pub const MAX_ROWS: u32 = 50_000;

/// The text of an XLSX file.
pub fn extract(bytes: &[u8], budget: &Budget) -> Result<String, Stop> {
    // Inflates every entry once under the budget: calamine then reads what was counted.
    let mut archive = zipped::open_checked(bytes, budget)?;
    let date1904 = zipped::read_entry(&mut archive, "xl/workbook.xml")?
        .is_some_and(|xml| uses_1904_dates(&xml));
    drop(archive);
    let failed = |e: calamine::XlsxError| Stop::Invalid(e.to_string());
    let mut workbook = Xlsx::new(Cursor::new(bytes)).map_err(failed)?;
    let sheets: Vec<String> = workbook
        .sheets_metadata()
        .iter()
        .filter(|s| s.typ == SheetType::WorkSheet && s.visible == SheetVisible::Visible)
        .map(|s| s.name.clone())
        .collect();
    let mut out = Output::new(budget.limits().max_text_bytes);
    for name in sheets {
        budget.check()?;
        if !out.push(&format!("--- Sheet: {name} ---\n")) {
            break;
        }
        let sheet = read_sheet(&mut workbook, &name, date1904, budget)?;
        if !write_sheet(&sheet, &mut out, budget)? || !out.push("\n") {
            break;
        }
    }
    // JavaScript's trim() of the whole text (the cut notice, when there is one, stays last).
    Ok(tool_api::sdk::js::trim(&out.finish()).to_string())
}

/// Whether `xl/workbook.xml` sets `date1904`.
fn uses_1904_dates(xml: &[u8]) -> bool {
    let text = String::from_utf8_lossy(xml);
    [
        "date1904=\"1\"",
        "date1904=\"true\"",
        "date1904='1'",
        "date1904='true'",
    ]
    .iter()
    .any(|form| text.contains(form))
}

/// One sheet's cells as texts, by 1-based row and column (rows up to one past the cap), and its
/// merged ranges.
struct Sheet {
    rows: BTreeMap<u32, BTreeMap<u32, String>>,
    merges: Vec<Dimensions>,
}

fn read_sheet(
    workbook: &mut Xlsx<Cursor<&[u8]>>,
    name: &str,
    date1904: bool,
    budget: &Budget,
) -> Result<Sheet, Stop> {
    let failed = |e: calamine::XlsxError| Stop::Invalid(e.to_string());
    let merges = match workbook.worksheet_merge_cells(name) {
        Some(merges) => merges.map_err(failed)?,
        None => Vec::new(),
    };
    // Formulas first: a formula cell without a cached value shows the formula.
    let mut formulas: HashMap<(u32, u32), String> = HashMap::new();
    {
        let mut cells = workbook.worksheet_cells_reader(name).map_err(failed)?;
        let mut seen = 0u64;
        while let Some(cell) = cells.next_formula().map_err(failed)? {
            seen += 1;
            if seen & 0xFFF == 0 {
                budget.check()?;
            }
            let (row, col) = cell.get_position();
            if row < MAX_ROWS + 1 && !cell.get_value().is_empty() {
                formulas.insert((row, col), cell.get_value().clone());
            }
        }
    }
    let mut rows: BTreeMap<u32, BTreeMap<u32, String>> = BTreeMap::new();
    let mut cells = workbook.worksheet_cells_reader(name).map_err(failed)?;
    let mut seen = 0u64;
    while let Some(cell) = cells.next_cell().map_err(failed)? {
        seen += 1;
        if seen & 0xFFF == 0 {
            budget.check()?;
        }
        let (row, col) = cell.get_position();
        if row >= MAX_ROWS {
            // Only whether some row lies past the cap matters.
            rows.entry(row + 1).or_default();
            break;
        }
        let text = match cell.get_value() {
            DataRef::Empty => match formulas.remove(&(row, col)) {
                Some(formula) => format!("[Formula: {formula}]"),
                None => continue,
            },
            value => cell_text(value, date1904),
        };
        rows.entry(row + 1).or_default().insert(col + 1, text);
    }
    // Formula cells without any value element at all.
    for ((row, col), formula) in formulas {
        rows.entry(row + 1)
            .or_default()
            .entry(col + 1)
            .or_insert_with(|| format!("[Formula: {formula}]"));
    }
    Ok(Sheet { rows, merges })
}

/// Writes the sheet's rows; false once the text limit is reached.
///
/// The rows are those with cells of their own and those inside merged ranges, in order: a sweep
/// over the ranges sorted by their first row keeps only the ranges of the current row at hand.
fn write_sheet(sheet: &Sheet, out: &mut Output, budget: &Budget) -> Result<bool, Stop> {
    let mut merges: Vec<&Dimensions> = sheet.merges.iter().collect();
    merges.sort_by_key(|m| m.start.0);
    let mut next_merge = 0;
    let mut active: Vec<&Dimensions> = Vec::new();
    let mut own = sheet.rows.keys().copied().peekable();
    let mut current = 0u32;
    let mut done = 0u64;
    loop {
        done += 1;
        if done & 0x3FF == 0 {
            budget.check()?;
        }
        let candidates = [
            own.peek().copied(),
            merges.get(next_merge).map(|m| m.start.0 + 1),
            (!active.is_empty()).then(|| current + 1),
        ];
        let Some(row) = candidates.into_iter().flatten().min() else {
            return Ok(true);
        };
        current = row;
        while own.peek().is_some_and(|&r| r <= row) {
            own.next();
        }
        while merges.get(next_merge).is_some_and(|m| m.start.0 < row) {
            active.push(merges[next_merge]);
            next_merge += 1;
        }
        active.retain(|m| m.end.0 + 1 >= row);
        if row > MAX_ROWS {
            return Ok(out.push(&format!("[... truncated at row {row} ...]\n")));
        }
        let cells = row_cells(sheet, row, &active);
        let Some(&width) = cells.keys().next_back() else {
            continue;
        };
        let has_content = cells
            .values()
            .any(|text| !tool_api::sdk::js::trim(text).is_empty());
        if !has_content {
            continue;
        }
        let mut line = String::new();
        for col in 1..=width {
            if col > 1 {
                line.push('\t');
            }
            if let Some(text) = cells.get(&col) {
                line.push_str(text);
            }
        }
        line.push('\n');
        if !out.push(&line) {
            return Ok(false);
        }
    }
}

/// The cells of one row: its own, with every cell of the merged ranges `active` on it showing
/// the range's value (its top left cell's).
fn row_cells(sheet: &Sheet, row: u32, active: &[&Dimensions]) -> BTreeMap<u32, String> {
    let mut cells = sheet.rows.get(&row).cloned().unwrap_or_default();
    for merge in active {
        let (top, left) = (merge.start.0 + 1, merge.start.1 + 1);
        let right = merge.end.1 + 1;
        let master = sheet
            .rows
            .get(&top)
            .and_then(|r| r.get(&left))
            .cloned()
            .unwrap_or_default();
        // At most a sheet's full width (XFD, 16,384 columns).
        for col in left..=right.min(16_384) {
            if (row, col) != (top, left) {
                cells.insert(col, master.clone());
            }
        }
    }
    cells
}

/// A cell's text as Cline's `formatCellValue` writes it.
fn cell_text(value: &DataRef<'_>, date1904: bool) -> String {
    match value {
        DataRef::Int(n) => n.to_string(),
        DataRef::Float(x) => js_number(*x),
        DataRef::String(s) => s.clone(),
        DataRef::SharedString(s) => (*s).to_string(),
        DataRef::Bool(b) => b.to_string(),
        DataRef::DateTime(dt) => excel_date(dt.as_f64(), date1904),
        DataRef::DateTimeIso(s) => s.split('T').next().unwrap_or_default().to_string(),
        DataRef::DurationIso(s) => s.clone(),
        DataRef::Error(e) => format!("[Error: {e}]"),
        DataRef::Empty => String::new(),
    }
}

/// A number as JavaScript's `Number.prototype.toString` prints it: the shortest digits that
/// read back the same, plain between 1e-6 and 1e21, else with an exponent (`1e+21`, `1.5e-7`).
pub fn js_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let magnitude = x.abs();
    if (1e-6..1e21).contains(&magnitude) {
        return format!("{x}");
    }
    let exponent = format!("{x:e}");
    match exponent.split_once('e') {
        Some((digits, power)) if !power.starts_with('-') => format!("{digits}e+{power}"),
        _ => exponent,
    }
}

/// An Excel date serial as ExcelJS turns it into a date (milliseconds rounded, UTC), printed as
/// `YYYY-MM-DD`.
pub fn excel_date(serial: f64, date1904: bool) -> String {
    let offset = if date1904 { 1462.0 } else { 0.0 };
    let ms = ((serial - 25569.0 + offset) * 86_400_000.0).round();
    let days = (ms / 86_400_000.0).floor();
    if !days.is_finite() || days.abs() > 1e8 {
        return js_number(serial);
    }
    // Whole days since 1970-01-01; the cast is exact within the check above.
    #[allow(clippy::cast_possible_truncation)]
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_in_javascript() {
        let cases = [
            (1.0, "1"),
            (1.5, "1.5"),
            (-42.25, "-42.25"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (123_456_789_012.0, "123456789012"),
            (0.000_001, "0.000001"),
            (1.5e-7, "1.5e-7"),
            (0.0, "0"),
        ];
        for (x, text) in cases {
            assert_eq!(js_number(x), text, "{x}");
        }
    }

    #[test]
    fn dates_are_their_utc_day() {
        assert_eq!(excel_date(45306.0, false), "2024-01-15");
        assert_eq!(excel_date(45306.75, false), "2024-01-15");
        assert_eq!(excel_date(1.0, false), "1899-12-31");
        assert_eq!(excel_date(43844.0, true), "2024-01-15");
    }
}
