//! The check a library file passes before the dynamic loader sees it: an ELF shared object for
//! this machine, and complete. A truncated or half-written library would otherwise be mapped
//! as it is, and the loader's first touch of a page past the end of the file (applying
//! relocations, running initializers) ends the process with SIGBUS.
//!
//! Only the headers are read, through one open handle whose length is the file's size at that
//! moment; the file is not mapped. The file header must parse as ELF of this machine's class,
//! byte order and architecture, of type `ET_DYN`; every program header's file range
//! (`p_offset + p_filesz`: the segments the loader maps, `PT_LOAD` and `PT_DYNAMIC` above all)
//! and the section header table must lie within the file.

use std::fs::File;
use std::path::Path;

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader};
use object::read::ReadRef;
use object::{Endianness, ReadCache};

use super::error::LoadError;

#[cfg(target_pointer_width = "64")]
type Header = elf::FileHeader64<Endianness>;
#[cfg(not(target_pointer_width = "64"))]
type Header = elf::FileHeader32<Endianness>;

/// Why a library file is not a complete ELF shared object for this machine.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// The file cannot be opened.
    #[error("cannot open it: {0}")]
    Open(#[source] std::io::Error),
    /// Its size cannot be read.
    #[error("its size cannot be read")]
    Size,
    /// It does not start with the ELF magic.
    #[error("not an ELF file")]
    NotElf,
    /// It ends before a part the loader reads.
    #[error("truncated: {what} needs {needed} bytes, the file has {size}")]
    Truncated {
        /// The part (`the ELF header`, `program header 0 (PT_LOAD)`).
        what: String,
        /// Where the part ends.
        needed: u64,
        /// The file's size.
        size: u64,
    },
    /// Its header is not of this machine's class (32 or 64 bits).
    #[error("not an ELF file of this machine's class: {0}")]
    Class(#[source] object::Error),
    /// Its header is malformed.
    #[error("invalid ELF header: {0}")]
    Header(#[source] object::Error),
    /// Its byte order is not this machine's.
    #[error("an ELF file of the other byte order than this machine's")]
    ByteOrder,
    /// It is an ELF file, but no shared object (an executable, say).
    #[error("not an ELF shared object (ELF type {0})")]
    NotShared(u16),
    /// It was built for another architecture.
    #[error("built for another machine (ELF machine {machine}, this one is {ours})")]
    Machine {
        /// Its ELF machine.
        machine: u16,
        /// This machine's.
        ours: u16,
    },
    /// It has no program headers.
    #[error("no program headers: nothing the dynamic loader could map")]
    NoProgramHeaders,
    /// A header table's count or entries are malformed.
    #[error("invalid {what}: {source}")]
    Table {
        /// What (`program headers`, `section header count`).
        what: &'static str,
        /// What the parser found.
        source: object::Error,
    },
    /// A segment's file range overflows.
    #[error("program header {0} has an impossible file range")]
    SegmentRange(usize),
    /// A header table's size overflows.
    #[error("a header table has an impossible size")]
    TableSize,
}

impl From<ElfError> for LoadError {
    fn from(error: ElfError) -> Self {
        match error {
            ElfError::Open(_) => Self::Open(error.to_string()),
            _ => Self::Elf(error.to_string()),
        }
    }
}

/// Checks that the file at `path` is a complete ELF shared object for this machine.
pub fn check(path: &Path) -> Result<(), ElfError> {
    let file = File::open(path).map_err(ElfError::Open)?;
    check_headers(&ReadCache::new(file))
}

/// The check on a file's bytes (read on demand: only the headers are asked for).
fn check_headers<'data, R: ReadRef<'data>>(data: R) -> Result<(), ElfError> {
    let size = data.len().map_err(|()| ElfError::Size)?;
    let magic = data.read_bytes_at(0, 4).ok();
    if magic != Some(&elf::ELFMAG[..]) {
        return Err(ElfError::NotElf);
    }
    let header_size = std::mem::size_of::<Header>() as u64;
    if size < header_size {
        return Err(truncated("the ELF header", header_size, size));
    }
    let header = Header::parse(data).map_err(ElfError::Class)?;
    let endian = header.endian().map_err(ElfError::Header)?;
    if endian != Endianness::default() {
        return Err(ElfError::ByteOrder);
    }
    let kind = header.e_type(endian);
    if kind != elf::ET_DYN {
        return Err(ElfError::NotShared(kind));
    }
    let machine = header.e_machine(endian);
    if let Some(ours) = this_machine() {
        if machine != ours {
            return Err(ElfError::Machine { machine, ours });
        }
    }
    check_program_headers(header, endian, data, size)?;
    check_section_table(header, endian, data, size)
}

fn check_program_headers<'data, R: ReadRef<'data>>(
    header: &Header,
    endian: Endianness,
    data: R,
    size: u64,
) -> Result<(), ElfError> {
    let offset = wide(header.e_phoff(endian));
    if offset == 0 {
        return Err(ElfError::NoProgramHeaders);
    }
    let count = header
        .phnum(endian, data)
        .map_err(|source| ElfError::Table {
            what: "program header count",
            source,
        })? as u64;
    let entry = u64::from(header.e_phentsize(endian));
    let table_end = table_end(offset, count, entry)?;
    if table_end > size {
        return Err(truncated("the program header table", table_end, size));
    }
    let program_headers =
        header
            .program_headers(endian, data)
            .map_err(|source| ElfError::Table {
                what: "program headers",
                source,
            })?;
    for (index, segment) in program_headers.iter().enumerate() {
        let start = wide(segment.p_offset(endian));
        let length = wide(segment.p_filesz(endian));
        let end = start
            .checked_add(length)
            .ok_or(ElfError::SegmentRange(index))?;
        if end > size {
            let what = format!(
                "program header {index} ({})",
                segment_kind(segment.p_type(endian))
            );
            return Err(truncated(&what, end, size));
        }
    }
    Ok(())
}

fn check_section_table<'data, R: ReadRef<'data>>(
    header: &Header,
    endian: Endianness,
    data: R,
    size: u64,
) -> Result<(), ElfError> {
    let offset = wide(header.e_shoff(endian));
    if offset == 0 {
        return Ok(());
    }
    let entry = u64::from(header.e_shentsize(endian));
    // The count may live in section 0 (many sections): section 0 must be there to say.
    let first_end = table_end(offset, 1, entry)?;
    if first_end > size {
        return Err(truncated("the section header table", first_end, size));
    }
    let count = header
        .shnum(endian, data)
        .map_err(|source| ElfError::Table {
            what: "section header count",
            source,
        })? as u64;
    let table_end = table_end(offset, count, entry)?;
    if table_end > size {
        return Err(truncated("the section header table", table_end, size));
    }
    Ok(())
}

/// An ELF word of this machine's class (32 or 64 bits) as a `u64`.
fn wide(word: impl Into<u64>) -> u64 {
    word.into()
}

/// Where a table of `count` entries of `entry` bytes at `offset` ends.
fn table_end(offset: u64, count: u64, entry: u64) -> Result<u64, ElfError> {
    count
        .checked_mul(entry)
        .and_then(|length| length.checked_add(offset))
        .ok_or(ElfError::TableSize)
}

fn truncated(what: &str, needed: u64, size: u64) -> ElfError {
    ElfError::Truncated {
        what: what.to_string(),
        needed,
        size,
    }
}

fn segment_kind(kind: u32) -> String {
    match kind {
        elf::PT_LOAD => "PT_LOAD".to_string(),
        elf::PT_DYNAMIC => "PT_DYNAMIC".to_string(),
        elf::PT_INTERP => "PT_INTERP".to_string(),
        elf::PT_NOTE => "PT_NOTE".to_string(),
        elf::PT_PHDR => "PT_PHDR".to_string(),
        elf::PT_TLS => "PT_TLS".to_string(),
        elf::PT_GNU_EH_FRAME => "PT_GNU_EH_FRAME".to_string(),
        elf::PT_GNU_RELRO => "PT_GNU_RELRO".to_string(),
        other => format!("type {other:#x}"),
    }
}

/// The ELF machine of the architecture this host was built for, where it is known.
fn this_machine() -> Option<u16> {
    Some(match std::env::consts::ARCH {
        "x86_64" => elf::EM_X86_64,
        "x86" => elf::EM_386,
        "aarch64" => elf::EM_AARCH64,
        "arm" => elf::EM_ARM,
        "riscv64" | "riscv32" => elf::EM_RISCV,
        "powerpc64" => elf::EM_PPC64,
        "powerpc" => elf::EM_PPC,
        "s390x" => elf::EM_S390,
        "loongarch64" => elf::EM_LOONGARCH,
        "mips" | "mips64" => elf::EM_MIPS,
        "sparc64" => elf::EM_SPARCV9,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use object::endian::{U16, U32, U64};
    use object::pod::bytes_of;

    use super::*;

    const SEGMENT_END: u64 = 4096;
    const SECTIONS: u64 = 3;

    /// A minimal 64-bit shared object: the file header, a `PT_LOAD` of the first 4096 bytes
    /// and a `PT_DYNAMIC` at their end, then a table of three section headers.
    fn library(
        edit: impl FnOnce(
            &mut elf::FileHeader64<Endianness>,
            &mut [elf::ProgramHeader64<Endianness>; 2],
        ),
    ) -> Vec<u8> {
        let e = Endianness::default();
        let mut header = elf::FileHeader64 {
            e_ident: elf::Ident {
                magic: elf::ELFMAG,
                class: elf::ELFCLASS64,
                data: if e == Endianness::Little {
                    elf::ELFDATA2LSB
                } else {
                    elf::ELFDATA2MSB
                },
                version: elf::EV_CURRENT,
                os_abi: elf::ELFOSABI_SYSV,
                abi_version: 0,
                padding: [0; 7],
            },
            e_type: U16::new(e, elf::ET_DYN),
            e_machine: U16::new(e, this_machine().unwrap_or(elf::EM_X86_64)),
            e_version: U32::new(e, u32::from(elf::EV_CURRENT)),
            e_entry: U64::new(e, 0),
            e_phoff: U64::new(e, 64),
            e_shoff: U64::new(e, SEGMENT_END),
            e_flags: U32::new(e, 0),
            e_ehsize: U16::new(e, 64),
            e_phentsize: U16::new(e, 56),
            e_phnum: U16::new(e, 2),
            e_shentsize: U16::new(e, 64),
            e_shnum: U16::new(e, SECTIONS as u16),
            e_shstrndx: U16::new(e, 0),
        };
        let segment = |kind: u32, offset: u64, size: u64| elf::ProgramHeader64 {
            p_type: U32::new(e, kind),
            p_flags: U32::new(e, elf::PF_R),
            p_offset: U64::new(e, offset),
            p_vaddr: U64::new(e, offset),
            p_paddr: U64::new(e, offset),
            p_filesz: U64::new(e, size),
            p_memsz: U64::new(e, size),
            p_align: U64::new(e, 8),
        };
        let mut segments = [
            segment(elf::PT_LOAD, 0, SEGMENT_END),
            segment(elf::PT_DYNAMIC, SEGMENT_END - 256, 256),
        ];
        edit(&mut header, &mut segments);
        let mut bytes = bytes_of(&header).to_vec();
        for segment in &segments {
            bytes.extend_from_slice(bytes_of(segment));
        }
        bytes.resize((SEGMENT_END + SECTIONS * 64) as usize, 0);
        bytes
    }

    /// The check's verdict, as the error reads.
    fn verdict(bytes: &[u8]) -> Result<(), String> {
        check_headers(bytes).map_err(|e| e.to_string())
    }

    #[test]
    fn a_complete_shared_object_passes() {
        assert_eq!(verdict(&library(|_, _| {})), Ok(()));
    }

    #[test]
    fn a_truncated_library_says_what_is_missing() {
        let whole = library(|_, _| {});
        assert_eq!(
            verdict(&whole[..40]).unwrap_err(),
            "truncated: the ELF header needs 64 bytes, the file has 40"
        );
        assert_eq!(
            verdict(&whole[..100]).unwrap_err(),
            "truncated: the program header table needs 176 bytes, the file has 100"
        );
        assert_eq!(
            verdict(&whole[..2000]).unwrap_err(),
            "truncated: program header 0 (PT_LOAD) needs 4096 bytes, the file has 2000"
        );
        assert_eq!(
            verdict(&whole[..4096]).unwrap_err(),
            "truncated: the section header table needs 4160 bytes, the file has 4096"
        );
        assert_eq!(
            verdict(&whole[..4200]).unwrap_err(),
            "truncated: the section header table needs 4288 bytes, the file has 4200"
        );
    }

    #[test]
    fn every_segment_must_lie_within_the_file() {
        let e = Endianness::default();
        let bytes = library(|_, segments| segments[1].p_filesz = U64::new(e, 1000));
        assert_eq!(
            verdict(&bytes).unwrap_err(),
            "truncated: program header 1 (PT_DYNAMIC) needs 4840 bytes, the file has 4288"
        );
        let bytes = library(|_, segments| segments[1].p_offset = U64::new(e, u64::MAX));
        assert_eq!(
            verdict(&bytes).unwrap_err(),
            "program header 1 has an impossible file range"
        );
    }

    #[test]
    fn only_shared_objects_of_this_machine_pass() {
        let e = Endianness::default();
        assert_eq!(
            verdict(b"MZ\x90\x00 not a library").unwrap_err(),
            "not an ELF file"
        );
        assert_eq!(verdict(b"").unwrap_err(), "not an ELF file");
        let executable = library(|header, _| header.e_type = U16::new(e, elf::ET_EXEC));
        assert_eq!(
            verdict(&executable).unwrap_err(),
            "not an ELF shared object (ELF type 2)"
        );
        let other = if this_machine() == Some(elf::EM_AARCH64) {
            elf::EM_X86_64
        } else {
            elf::EM_AARCH64
        };
        let foreign = library(|header, _| header.e_machine = U16::new(e, other));
        assert!(verdict(&foreign)
            .unwrap_err()
            .starts_with("built for another machine"),);
        let other_class = library(|header, _| header.e_ident.class = elf::ELFCLASS32);
        assert!(verdict(&other_class)
            .unwrap_err()
            .starts_with("not an ELF file of this machine's class"));
    }

    #[test]
    fn a_file_is_checked_through_one_handle_and_named_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libhalf.so");
        let whole = library(|_, _| {});
        std::fs::write(&path, &whole[..2000]).unwrap();
        let error = LoadError::from(check(&path).unwrap_err());
        assert_eq!(
            error.to_string(),
            "not a loadable library: truncated: program header 0 (PT_LOAD) needs 4096 bytes, the file has 2000"
        );
        std::fs::write(&path, &whole).unwrap();
        assert!(check(&path).is_ok());
        let missing = check(&dir.path().join("missing.so")).unwrap_err();
        assert!(matches!(missing, ElfError::Open(_)), "{missing:?}");
        assert!(matches!(LoadError::from(missing), LoadError::Open(_)));
    }
}
