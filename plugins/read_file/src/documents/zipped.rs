//! The ZIP container of DOCX and XLSX files, checked before a parser reads it.

use std::io::{Cursor, Read};

use zip::ZipArchive;

use super::budget::{Budget, Stop};

/// At most this many entries in a container (a real document has a few dozen).
pub const MAX_ENTRIES: usize = 10_000;

/// Opens the container and inflates every entry once under the budget, so that a parser that
/// reads the same entries later cannot expand more than was counted: an entry that inflates
/// beyond the size its header declares is refused, and so is a container whose entries expand
/// beyond the budget together.
pub fn open_checked<'a>(
    bytes: &'a [u8],
    budget: &Budget,
) -> Result<ZipArchive<Cursor<&'a [u8]>>, Stop> {
    let invalid =
        |e: zip::result::ZipError| Stop::Invalid(format!("not a valid ZIP container ({e})"));
    let mut archive = ZipArchive::new(Cursor::new(bytes)).map_err(invalid)?;
    if archive.len() > MAX_ENTRIES {
        return Err(Stop::Invalid(format!(
            "the container has more than {MAX_ENTRIES} entries"
        )));
    }
    for index in 0..archive.len() {
        budget.check()?;
        let entry = archive.by_index(index).map_err(invalid)?;
        let declared = entry.size();
        if declared > budget.expansion_left() {
            return Err(Stop::Expands(budget.limits().max_expanded_bytes));
        }
        let mut sink = CountingSink::default();
        let limit = declared.saturating_add(1);
        let copied = std::io::copy(&mut entry.take(limit), &mut sink).unwrap_or(sink.0);
        if copied > declared {
            return Err(Stop::Invalid(
                "an entry of the container is larger than its header says".to_string(),
            ));
        }
        budget.expand(copied)?;
    }
    Ok(archive)
}

/// One entry's bytes (already counted by [`open_checked`]); `None` when there is no such entry.
pub fn read_entry(
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    name: &str,
) -> Result<Option<Vec<u8>>, Stop> {
    let mut entry = match archive.by_name(name) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(Stop::Invalid(format!("cannot read {name} ({e})"))),
    };
    let mut data = Vec::new();
    entry
        .read_to_end(&mut data)
        .map_err(|e| Stop::Invalid(format!("cannot read {name} ({e})")))?;
    Ok(Some(data))
}

/// A writer that only counts.
#[derive(Default)]
struct CountingSink(u64);

impl std::io::Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += u64::try_from(buf.len()).unwrap_or(u64::MAX);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
