//! How snapshots are stored: a magic line, a JSON header line, then one
//! binary record per path in tree order, each path front-coded against the
//! one before (trees repeat long prefixes), all gzipped. The launcher reads
//! a baseline after every session, so this stays small and quick even for
//! a tree of 100,000 files; JSON per entry was not.

use super::kinds::{Kind, TABLE};
use super::settings::Item;
use super::walk::{Meta, Ty};
use super::{Fp, Rec};
use flate2::{read::GzDecoder, write::GzEncoder, Compression};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;

const MAGIC: &[u8] = b"agent-sandbox review snapshot 1\n";
const REMOVED: u8 = 255;

/// Which moment a snapshot records (kept in its header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum How {
    /// Recorded by the launcher before the workspace's first session.
    FirstSession,
    /// Recorded by `agent-sandbox review --ack`.
    Acknowledged,
    /// The state at the end of a session.
    SessionEnd,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Header {
    pub how: How,
    pub session: Option<String>,
    pub(crate) started_ns: u64,
    pub taken_ns: u64,
    pub complete: bool,
    pub workspace: PathBuf,
    pub shared: Vec<PathBuf>,
    /// For a session's difference: the baseline it was taken against.
    pub(crate) base_ns: Option<u64>,
    /// The kind names, in the order the records number them (so a later
    /// table can still read them).
    pub kinds: Vec<String>,
    /// The agent settings' items, by path (`settings`): whole, also in a
    /// session's difference (they are few).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub commands: BTreeMap<String, Vec<Item>>,
}

/// Up to this many bytes a snapshot is stored in gzip's uncompressed
/// blocks: a session's difference is usually a few hundred bytes, and
/// setting up the compressor (hundreds of KB of tables) cost more of every
/// launch than the bytes it saved.
const STORED_MAX: usize = 1 << 16;

pub(super) fn write<'a, W: Write>(w: W, header: &Header, entries: impl Iterator<Item = (&'a str, Option<&'a Rec>)>) -> std::io::Result<()> {
    let mut raw = Vec::with_capacity(1 << 12);
    raw.extend_from_slice(MAGIC);
    let mut h = header.clone();
    h.kinds = TABLE.iter().map(|i| i.name.to_string()).collect();
    serde_json::to_writer(&mut raw, &h)?;
    raw.push(b'\n');
    let mut prev = "";
    for (key, rec) in entries {
        encode(&mut raw, prev, key, rec);
        prev = key;
    }
    let mut w = std::io::BufWriter::new(w);
    if raw.len() <= STORED_MAX {
        write_stored(&mut w, &raw)?;
    } else {
        let mut gz = GzEncoder::new(&mut w, Compression::fast());
        gz.write_all(&raw)?;
        gz.finish()?;
    }
    w.flush()
}

/// `data` as a gzip member (RFC 1952) of stored deflate blocks (RFC 1951
/// 3.2.4: a header byte, the length and its complement, the bytes).
fn write_stored(w: &mut impl Write, data: &[u8]) -> std::io::Result<()> {
    // Magic, deflate, no flags, no time, no extra flags, OS unknown.
    w.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])?;
    let mut chunks = data.chunks(usize::from(u16::MAX)).peekable();
    if chunks.peek().is_none() {
        w.write_all(&[1, 0, 0, 0xff, 0xff])?;
    }
    while let Some(chunk) = chunks.next() {
        let last = u8::from(chunks.peek().is_none());
        let len = chunk.len() as u16;
        w.write_all(&[last])?;
        w.write_all(&len.to_le_bytes())?;
        w.write_all(&(!len).to_le_bytes())?;
        w.write_all(chunk)?;
    }
    let mut crc = flate2::Crc::new();
    crc.update(data);
    w.write_all(&crc.sum().to_le_bytes())?;
    w.write_all(&(data.len() as u32).to_le_bytes())
}

fn varint(buf: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        buf.push((n as u8) | 0x80);
        n >>= 7;
    }
    buf.push(n as u8);
}

fn encode(buf: &mut Vec<u8>, prev: &str, key: &str, rec: Option<&Rec>) {
    let shared = prev.bytes().zip(key.bytes()).take_while(|(a, b)| a == b).count();
    varint(buf, shared);
    varint(buf, key.len() - shared);
    buf.extend_from_slice(&key.as_bytes()[shared..]);
    let Some(r) = rec else {
        buf.push(REMOVED);
        return;
    };
    buf.push(Ty::ALL.iter().position(|t| *t == r.ty).unwrap_or(0) as u8);
    buf.push(r.kind.map_or(0, |k| k as u8 + 1));
    match r.fp {
        Fp::Meta(m) => {
            buf.push(0);
            buf.extend_from_slice(&m.mode.to_le_bytes());
            buf.extend_from_slice(&m.ino.to_le_bytes());
            buf.extend_from_slice(&m.size.to_le_bytes());
            buf.extend_from_slice(&m.mtime_ns.to_le_bytes());
            buf.extend_from_slice(&m.ctime_ns.to_le_bytes());
        }
        Fp::Content(d) => {
            buf.push(1);
            buf.extend_from_slice(&d);
        }
    }
}

type Entries = Vec<(String, Option<Rec>)>;

pub(super) fn read<R: Read>(r: R) -> Result<(Header, Entries), String> {
    let mut bytes = Vec::new();
    GzDecoder::new(r).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    let rest = bytes.strip_prefix(MAGIC).ok_or("not a review snapshot (or one of another version)")?;
    let nl = rest.iter().position(|b| *b == b'\n').ok_or("no header")?;
    let header: Header = serde_json::from_slice(&rest[..nl]).map_err(|e| e.to_string())?;
    let kinds: Vec<Option<Kind>> = header.kinds.iter().map(|n| Kind::from_name(n)).collect();
    let mut c = Cursor { b: &rest[nl + 1..], at: 0 };
    let mut out: Entries = Vec::new();
    while c.at < c.b.len() {
        let prev = out.last().map_or("", |(k, _)| k.as_str());
        let shared = c.varint()?;
        let len = c.varint()?;
        let tail = c.take(len)?;
        let mut key = prev.as_bytes().get(..shared).ok_or("bad prefix")?.to_vec();
        key.extend_from_slice(tail);
        let key = String::from_utf8(key).map_err(|e| e.to_string())?;
        let rec = c.rec(&kinds)?;
        out.push((key, rec));
    }
    Ok((header, out))
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let s = self.b.get(self.at..self.at + n).ok_or("truncated")?;
        self.at += n;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().map_err(|_| "truncated")?))
    }

    fn varint(&mut self) -> Result<usize, String> {
        let (mut n, mut shift) = (0usize, 0);
        loop {
            let b = self.byte()?;
            n |= usize::from(b & 0x7f).checked_shl(shift).ok_or("bad length")?;
            if b & 0x80 == 0 {
                return Ok(n);
            }
            shift += 7;
        }
    }

    fn rec(&mut self, kinds: &[Option<Kind>]) -> Result<Option<Rec>, String> {
        let ty = self.byte()?;
        if ty == REMOVED {
            return Ok(None);
        }
        let ty = *Ty::ALL.get(usize::from(ty)).ok_or("bad type")?;
        let kind = match self.byte()? {
            0 => None,
            k => *kinds.get(usize::from(k) - 1).ok_or("bad kind")?,
        };
        let fp = match self.byte()? {
            0 => {
                let mode = u32::from_le_bytes(self.take(4)?.try_into().map_err(|_| "truncated")?);
                let (ino, size) = (self.u64()?, self.u64()?);
                let (mtime_ns, ctime_ns) = (self.u64()? as i64, self.u64()? as i64);
                Fp::Meta(Meta { mode, ino, size, mtime_ns, ctime_ns })
            }
            _ => Fp::Content(self.take(16)?.try_into().map_err(|_| "truncated")?),
        };
        Ok(Some(Rec { ty, fp, kind }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let meta = Meta { mode: 0o100644, ino: 7, size: 3, mtime_ns: -5, ctime_ns: 1 << 60 };
        let recs = [
            ("a", Some(Rec { ty: Ty::File, fp: Fp::Meta(meta), kind: None })),
            ("a/b", Some(Rec { ty: Ty::Symlink, fp: Fp::Meta(meta), kind: Some(Kind::SpecialFile) })),
            ("a/bé/c", Some(Rec { ty: Ty::File, fp: Fp::Content([9; 16]), kind: Some(Kind::BuildCache) })),
            ("b", None),
        ];
        let header = Header {
            how: How::SessionEnd,
            session: Some("1-2".into()),
            started_ns: 1,
            taken_ns: 2,
            complete: true,
            workspace: "/w".into(),
            shared: vec!["/h/.cache".into()],
            base_ns: Some(3),
            kinds: Vec::new(),
            commands: BTreeMap::from([("/h/.claude/settings.json".to_string(), vec![Item { key: "hooks".into(), shown: "x".into(), digest: "d".into() }])]),
        };
        let mut file = Vec::new();
        write(&mut file, &header, recs.iter().map(|(k, r)| (*k, r.as_ref()))).unwrap();
        let (h, got) = read(file.as_slice()).unwrap();
        assert_eq!((h.session.as_deref(), h.base_ns, h.kinds.len()), (Some("1-2"), Some(3), TABLE.len()));
        assert_eq!(h.commands, header.commands);
        let want: Vec<(String, Option<Rec>)> = recs.iter().map(|(k, r)| (k.to_string(), *r)).collect();
        assert_eq!(got, want);
        assert!(read(&b"junk"[..]).is_err());
    }
}

/// Stored and compressed members both read back as written.
#[cfg(test)]
mod stored_tests {
    use super::*;

    #[test]
    fn stored_members_read_back_at_every_size() {
        for n in [0usize, 1, 100, 65535, 65536, 200_000] {
            let data: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
            let mut out = Vec::new();
            write_stored(&mut out, &data).unwrap();
            let mut back = Vec::new();
            GzDecoder::new(out.as_slice()).read_to_end(&mut back).unwrap();
            assert_eq!(back, data, "{n} bytes");
        }
    }
}
