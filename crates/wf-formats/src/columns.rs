//! The projected columns of one batch, as Arrow builders.
//!
//! Strings go into `Utf8View` columns: a value of at most 12 bytes (status
//! words, methods, most IPv4 clients) is stored inline in its 16-byte view with
//! no buffer copy at all, and DataFusion groups and compares views without
//! materialising them. The views are made here ([`Views`]), not with arrow's
//! `StringViewBuilder`, whose per-value `memcpy` call and block bookkeeping were
//! 12% of a 1BRC query's cycles (perf).
//!
//! A value longer than 12 bytes is copied into the batch's data buffer, not
//! viewed where it lies in the scan's read buffer. Views into the read buffers
//! (each kept alive by the batches pointing into it, a new one read while it
//! was held) made the Wide Finder 2 report as SQL 41% slower (0.746 to 1.049 s,
//! medians of 9, 1 GiB log, 2026-11-27): the operators above the scan read each
//! value several times (hash, compare, regex), and packed values share cache
//! lines, where a value in place brings in the rest of its record; hashing,
//! comparing and the regex took twice the cycles, and the scan alone was no
//! faster (0.276 against 0.279 s).

use std::sync::Arc;

use arrow_array::builder::BooleanBuilder;
use arrow_array::types::{
    ArrowPrimitiveType, Decimal128Type, Float64Type, Int64Type, TimestampMicrosecondType,
};
use arrow_array::{ArrayRef, PrimitiveArray, StringViewArray};
use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_buffer::NullBufferBuilder;
use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_schema::ArrowError;
use arrow_schema::DataType;
use arrow_schema::SchemaRef;

use super::Kind;

/// The longest value [`Views::push_at`] copies as one fixed-size block.
const LONG: usize = 32;

/// `KEEP[n]`: the low `n` bytes of a 16-byte block (an inline view's value).
/// A table, where a shift by `8 * n` of a `u128` took a dozen instructions
/// with conditional moves (perf annotate).
const KEEP: [u128; 13] = {
    let mut keep = [0u128; 13];
    let mut n = 1;
    while n <= 12 {
        keep[n] = u128::MAX >> (128 - 8 * n);
        n += 1;
    }
    keep
};

/// The view of a value of `len` bytes whose first 16 (or fewer) are `head`:
/// inline when it has at most 12, else its length, prefix, and place (`offset`
/// in data buffer `buffer`), chosen without a branch.
#[inline(always)]
fn view(head: u128, len: usize, buffer: usize, offset: usize) -> u128 {
    let inline = ((head & KEEP[len.min(12)]) << 32) | len as u128;
    let long =
        len as u128 | (head as u32 as u128) << 32 | (buffer as u128) << 64 | (offset as u128) << 96;
    // Half of 1BRC's station names are longer than 12 bytes: an `if` here
    // became a branch in `Views::extend_fast`, mispredicted every other row
    // (the two instructions after it had 42% of the function's samples; perf
    // annotate).
    std::hint::select_unpredictable(len > 12, long, inline)
}

/// A `Utf8View` column built view by view (the module comment says why): an
/// inline view is one masked 16-byte load where the piece has the bytes, and a
/// long value one copy into a single buffer per batch.
struct Views {
    views: Vec<u128>,
    data: Vec<u8>,
    /// Full data buffers (a buffer's offsets are 32-bit).
    full: Vec<Buffer>,
    nulls: NullBufferBuilder,
}

impl Views {
    fn new() -> Self {
        Views {
            views: Vec::new(),
            data: Vec::new(),
            full: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        }
    }

    /// Append `v`, which must be valid UTF-8.
    #[inline(always)]
    fn push(&mut self, v: &[u8]) {
        let view = if v.len() <= 12 {
            let mut b = [0u8; 16];
            b[4..4 + v.len()].copy_from_slice(v);
            u128::from_le_bytes(b) | v.len() as u128
        } else {
            self.long_view(v)
        };
        self.views.push(view);
        self.nulls.append_non_null();
    }

    /// Append `piece[s..e]` (valid UTF-8). Where the piece holds [`LONG`] bytes
    /// from `s` and the value is no longer, without a branch on its length
    /// ([`Views::view_of`]); otherwise as [`Views::push`]. (Values of up to
    /// twice [`LONG`] copied as two blocks, no `memmove` call: no fewer
    /// cycles for six columns of the 1 GiB log, 1% more instructions.)
    #[inline(always)]
    fn push_at(&mut self, piece: &[u8], s: usize, e: usize) {
        let len = e - s;
        match piece.get(s..s + LONG) {
            Some(w) if len <= LONG && self.data.len() + LONG <= u32::MAX as usize => {
                let view = self.view_of(w.try_into().expect("LONG bytes"), len);
                self.views.push(view);
                self.nulls.append_non_null();
            }
            _ => self.push(&piece[s..e]),
        }
    }

    /// Append entry `k` of each `stride` spans of `piece` (see [`Texts::extend`]):
    /// runs of plain values by [`Views::extend_fast`], the others one by one.
    fn extend_spans(&mut self, piece: &[u8], spans: &[[u32; 2]], stride: usize, k: usize) {
        let rows = spans.len() / stride;
        let mut r = 0;
        while r < rows {
            r += self.extend_fast(piece, &spans[r * stride..], stride, k);
            if r < rows {
                match spans[r * stride + k] {
                    NULL_SPAN => self.null(),
                    [s, e] => self.push(&piece[s as usize..e as usize]),
                }
                r += 1;
            }
        }
    }

    /// As [`Views::extend_spans`] for as long as the values are plain: not
    /// NULL, with [`LONG`] bytes of the piece from their start, and room left
    /// in the data buffer (made once for a block per value). A value of at
    /// most [`LONG`] bytes is one fixed-size copy, kept only when longer than
    /// 12 bytes, the inline or long view chosen without a branch; a longer one
    /// is copied as it is. Returns how many values it appended.
    #[inline(always)]
    fn extend_fast(&mut self, piece: &[u8], spans: &[[u32; 2]], stride: usize, k: usize) -> usize {
        let n = spans.len() / stride;
        self.views.reserve(n);
        self.data.reserve((n + 1) * LONG);
        let (views, data) = (self.views.as_mut_ptr(), self.data.as_mut_ptr());
        let (mut vl, mut dl) = (self.views.len(), self.data.len());
        let room = self.data.capacity().min(u32::MAX as usize);
        let buffer = self.full.len();
        for c in spans.chunks_exact(stride) {
            let [s, e] = c[k];
            let (s, len) = (s as usize, e.wrapping_sub(s) as usize);
            // NULL_SPAN starts past any piece.
            let Some(w) = piece.get(s..s + LONG) else {
                break;
            };
            if dl + len.max(2 * LONG) > room {
                break;
            }
            let head = u128::from_le_bytes(w[..16].try_into().expect("16 bytes"));
            let view = view(head, len, buffer, dl);
            // SAFETY: room was reserved for `n` views, and `dl` plus the bytes
            // copied is at most the data's capacity (checked above).
            unsafe {
                std::ptr::copy_nonoverlapping(w.as_ptr(), data.add(dl), LONG);
                if len > LONG {
                    match piece.get(s + LONG..s + 2 * LONG) {
                        Some(w) if len <= 2 * LONG => {
                            std::ptr::copy_nonoverlapping(w.as_ptr(), data.add(dl + LONG), LONG)
                        }
                        _ => {
                            let v = &piece[s + LONG..s + len];
                            std::ptr::copy_nonoverlapping(v.as_ptr(), data.add(dl + LONG), v.len())
                        }
                    }
                }
                views.add(vl).write(view);
            }
            dl += len * (len > 12) as usize;
            vl += 1;
        }
        let done = vl - self.views.len();
        // SAFETY: the views and the kept bytes up to these lengths were written.
        unsafe {
            self.views.set_len(vl);
            self.data.set_len(dl);
        }
        self.nulls.append_n_non_nulls(done);
        done
    }

    /// The view of the first `len` bytes of `w`: the block is copied to the
    /// data buffer as one fixed-size copy and kept only for a value longer than
    /// 12 bytes, and the inline or the long view is chosen without a branch.
    /// Half of 1BRC's station names are longer than 12 bytes: a branch on the
    /// length mispredicted every other row, and a `memmove` call per long value
    /// was 6% of the query's cycles (perf).
    #[inline(always)]
    fn view_of(&mut self, w: &[u8; LONG], len: usize) -> u128 {
        let head = u128::from_le_bytes(w[..16].try_into().expect("16 bytes"));
        let offset = self.data.len();
        self.data.reserve(LONG);
        // SAFETY: `reserve` made room for LONG bytes after `offset`; the bytes
        // kept (`len` of them, or none) are among those just written.
        unsafe {
            std::ptr::copy_nonoverlapping(w.as_ptr(), self.data.as_mut_ptr().add(offset), LONG);
            self.data.set_len(offset + len * (len > 12) as usize);
        }
        view(head, len, self.full.len(), offset)
    }

    /// The view of a value longer than 12 bytes, copied into the data buffer.
    fn long_view(&mut self, v: &[u8]) -> u128 {
        if self.data.len() + v.len() > u32::MAX as usize {
            let full = std::mem::take(&mut self.data);
            self.full.push(Buffer::from_vec(full));
        }
        let offset = self.data.len() as u128;
        self.data.extend_from_slice(v);
        let prefix = u32::from_le_bytes(v[..4].try_into().expect("4 bytes")) as u128;
        v.len() as u128 | prefix << 32 | (self.full.len() as u128) << 64 | offset << 96
    }

    fn null(&mut self) {
        self.views.push(0);
        self.nulls.append_null();
    }

    fn finish(&mut self) -> StringViewArray {
        let rows = self.views.len();
        let views =
            ScalarBuffer::from(std::mem::replace(&mut self.views, Vec::with_capacity(rows)));
        let mut buffers = std::mem::take(&mut self.full);
        if !self.data.is_empty() {
            let cap = self.data.len();
            buffers.push(Buffer::from_vec(std::mem::replace(
                &mut self.data,
                Vec::with_capacity(cap),
            )));
        }
        // SAFETY: every view was made above: inline values of at most 12 bytes,
        // others pointing at their bytes in `buffers`; all of it valid UTF-8
        // (the callers of `Columns::str` check it or replace what is not).
        unsafe { StringViewArray::new_unchecked(views, buffers, self.nulls.finish()) }
    }
}

/// A number column: values and validity appended in place (arrow's
/// `PrimitiveBuilder::append_value` was an out-of-line call per value, 1.5% of
/// a 1BRC query's cycles in perf).
struct Numbers<T: ArrowPrimitiveType> {
    values: Vec<T::Native>,
    nulls: NullBufferBuilder,
    data_type: DataType,
}

impl<T: ArrowPrimitiveType> Numbers<T> {
    fn new(data_type: DataType) -> Self {
        Numbers {
            values: Vec::new(),
            nulls: NullBufferBuilder::new(0),
            data_type,
        }
    }

    #[inline(always)]
    fn push(&mut self, v: Option<T::Native>) {
        match v {
            Some(x) => {
                self.values.push(x);
                self.nulls.append_non_null();
            }
            None => {
                self.values.push(T::Native::default());
                self.nulls.append_null();
            }
        }
    }

    /// Entry `k` of each `stride` spans converted by `f` (`f(start, end)`), a
    /// column at a time ([`Columns::extend_floats`]); an empty span or
    /// [`NULL_SPAN`] is NULL, and so is a value `f` rejects. Returns how many
    /// `f` rejected.
    #[inline(always)]
    fn extend_spans(
        &mut self,
        spans: &[[u32; 2]],
        stride: usize,
        k: usize,
        f: impl Fn(usize, usize) -> Option<T::Native>,
    ) -> u64 {
        let n = spans.len() / stride;
        self.values.reserve(n);
        let (mut bad, mut valid) = (0, 0);
        for (slot, c) in self
            .values
            .spare_capacity_mut()
            .iter_mut()
            .zip(spans.chunks_exact(stride))
        {
            let [s, e] = c[k];
            let v = if s < e {
                f(s as usize, e as usize)
            } else {
                None
            };
            bad += (s < e && v.is_none()) as u64;
            // One branch for the rare NULL; the validity of a run of values is
            // appended at once.
            match v {
                Some(x) => {
                    slot.write(x);
                    valid += 1;
                }
                None => {
                    slot.write(T::Native::default());
                    self.nulls.append_n_non_nulls(valid);
                    self.nulls.append_null();
                    valid = 0;
                }
            }
        }
        self.nulls.append_n_non_nulls(valid);
        // SAFETY: `reserve` made room for `n` values, all written above.
        unsafe { self.values.set_len(self.values.len() + n) };
        bad
    }

    fn finish(&mut self) -> ArrayRef {
        let rows = self.values.len();
        let values = std::mem::replace(&mut self.values, Vec::with_capacity(rows));
        let array = PrimitiveArray::<T>::new(ScalarBuffer::from(values), self.nulls.finish());
        Arc::new(array.with_data_type(self.data_type.clone()))
    }
}

enum Builder {
    Str(Views),
    Int(Numbers<Int64Type>),
    Float(Numbers<Float64Type>),
    Dec(Numbers<Decimal128Type>),
    Time(Numbers<TimestampMicrosecondType>),
    Bool(BooleanBuilder),
}

impl Builder {
    fn new(kind: Kind) -> Self {
        let dt = kind.data_type();
        match kind {
            Kind::Str => Builder::Str(Views::new()),
            Kind::Int => Builder::Int(Numbers::new(dt)),
            Kind::Float => Builder::Float(Numbers::new(dt)),
            Kind::Decimal { .. } => Builder::Dec(Numbers::new(dt)),
            Kind::Time => Builder::Time(Numbers::new(dt)),
            Kind::Bool => Builder::Bool(BooleanBuilder::new()),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Str(b) => Arc::new(b.finish()),
            Builder::Int(b) => b.finish(),
            Builder::Float(b) => b.finish(),
            Builder::Dec(b) => b.finish(),
            Builder::Time(b) => b.finish(),
            Builder::Bool(b) => Arc::new(b.finish()),
        }
    }

    fn floats(&mut self) -> Option<&mut Numbers<Float64Type>> {
        match self {
            Builder::Float(n) => Some(n),
            _ => None,
        }
    }

    fn decimals(&mut self) -> Option<&mut Numbers<Decimal128Type>> {
        match self {
            Builder::Dec(n) => Some(n),
            _ => None,
        }
    }

    fn ints(&mut self) -> Option<&mut Numbers<Int64Type>> {
        match self {
            Builder::Int(n) => Some(n),
            _ => None,
        }
    }

    fn null(&mut self) {
        match self {
            Builder::Str(b) => b.null(),
            Builder::Int(b) => b.push(None),
            Builder::Float(b) => b.push(None),
            Builder::Dec(b) => b.push(None),
            Builder::Time(b) => b.push(None),
            Builder::Bool(b) => b.append_null(),
        }
    }
}

/// Every projected column of a batch as text ([`Columns::texts`]), for a
/// parser whose values are all text from a checked piece: a run of records'
/// values goes straight to each column's views, a column at a time, with no
/// match on the column's kind and builder per value.
pub struct Texts<'a> {
    cols: Vec<&'a mut Views>,
}

impl Texts<'_> {
    /// Column `o`'s values of a run of records: entry `k` of each `stride`
    /// spans (`[start, end]` in `piece`, valid UTF-8; [`NULL_SPAN`] for NULL).
    pub fn extend(&mut self, o: usize, piece: &[u8], spans: &[[u32; 2]], stride: usize, k: usize) {
        self.cols[o].extend_spans(piece, spans, stride, k);
    }
}

/// The span of a NULL value for [`Texts::extend`].
pub const NULL_SPAN: [u32; 2] = [u32::MAX, u32::MAX];

/// Builders for the projected columns of one batch, plus the row count (a
/// projection may be empty: `count(*)` needs rows but no column).
pub struct Columns {
    builders: Vec<Builder>,
    kinds: Vec<Kind>,
    rows: usize,
    /// String values that were not valid UTF-8 (replaced with U+FFFD).
    pub invalid_utf8: u64,
    /// Values that did not convert to their column's type (made NULL).
    pub bad_values: u64,
    /// The bytes text values come from are known to be valid UTF-8 (see
    /// [`super::Format::ascii_boundaries`]): no check per value.
    pub utf8_checked: bool,
    /// The first value counted in `bad_values` by [`Columns::bad`]: its
    /// column and bytes (runs of records count without it; `read::job`
    /// parses a record alone to name the value it stops a query at).
    pub first_bad: Option<(usize, Vec<u8>)>,
    /// Records with a key that is not a column (JSON lines and logfmt whose
    /// columns are the keys of a sample): their values under it are not
    /// read, which `wf sql` says ([`UnknownKeys`]).
    pub unknown: UnknownKeys,
}

/// Records whose keys were not all columns, and the first few such keys
/// (by name).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct UnknownKeys {
    pub records: u64,
    pub names: Vec<String>,
    /// More keys than `names` were seen.
    pub more: bool,
}

impl UnknownKeys {
    /// The keys named: enough to say which to add to `--schema`.
    pub const NAMED: usize = 3;

    /// A record with the keys `names` (one or more) that are not columns.
    #[cold]
    pub fn add<'a>(&mut self, names: impl Iterator<Item = &'a [u8]>) {
        self.records += 1;
        for n in names {
            self.name(String::from_utf8_lossy(n).into_owned());
        }
    }

    /// Keeps the first [`UnknownKeys::NAMED`] names in sorted order, so that
    /// the names said are the same at every thread count.
    fn name(&mut self, name: String) {
        if let Err(i) = self.names.binary_search(&name) {
            self.names.insert(i, name);
            self.more |= self.names.len() > Self::NAMED;
            self.names.truncate(Self::NAMED);
        }
    }

    pub fn merge(&mut self, o: UnknownKeys) {
        self.records += o.records;
        self.more |= o.more;
        for n in o.names {
            self.name(n);
        }
    }
}

impl Columns {
    pub fn new(kinds: &[Kind]) -> Self {
        Columns {
            builders: kinds.iter().map(|&k| Builder::new(k)).collect(),
            kinds: kinds.to_vec(),
            rows: 0,
            invalid_utf8: 0,
            bad_values: 0,
            utf8_checked: false,
            first_bad: None,
            unknown: UnknownKeys::default(),
        }
    }

    /// Some projected column is text.
    pub fn has_text(&self) -> bool {
        self.kinds.contains(&Kind::Str)
    }

    /// The kind of projected column `i`.
    pub fn kind(&self, i: usize) -> Kind {
        self.kinds[i]
    }

    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Rows appended since the last [`Columns::finish`].
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// One row is complete (every column got exactly one value).
    pub fn end_row(&mut self) {
        self.rows += 1;
    }

    /// The columns as [`Texts`], when every one is text and the values come
    /// from a piece checked as a whole (`utf8_checked`). The caller counts the
    /// rows it completes with [`Columns::add_rows`].
    pub fn texts(&mut self) -> Option<Texts<'_>> {
        if !self.utf8_checked {
            return None;
        }
        let cols = self.builders.iter_mut().map(|b| match b {
            Builder::Str(v) => Some(v),
            _ => None,
        });
        Some(Texts {
            cols: cols.collect::<Option<Vec<_>>>()?,
        })
    }

    /// `n` rows were completed through [`Columns::texts`] or the `extend_`
    /// methods.
    pub fn add_rows(&mut self, n: usize) {
        self.rows += n;
    }

    /// Column `i`'s values of a run of records, a column at a time: entry `k`
    /// of each `stride` spans of `piece` ([`NULL_SPAN`] for NULL). A text
    /// column of a piece checked as UTF-8 takes them as views in one loop;
    /// any other column converts each as [`Columns::text_at`] does. Number
    /// columns have faster conversions ([`Columns::extend_floats`]). The
    /// caller counts the rows with [`Columns::add_rows`].
    pub fn extend_texts(
        &mut self,
        i: usize,
        piece: &[u8],
        spans: &[[u32; 2]],
        stride: usize,
        k: usize,
    ) {
        if let (Builder::Str(b), true) = (&mut self.builders[i], self.utf8_checked) {
            return b.extend_spans(piece, spans, stride, k);
        }
        for c in spans.chunks_exact(stride) {
            match c[k] {
                NULL_SPAN => self.null(i),
                [s, e] => self.text_at(i, piece, s as usize, e as usize),
            }
        }
    }

    /// Float column `i`'s values of a run of records (as in
    /// [`Columns::extend_texts`]), each converted by `f(start, end)`: a value
    /// `f` rejects is NULL and counted in [`Columns::bad_values`]. False, and
    /// nothing appended, when the column is of another type.
    #[inline(always)]
    pub fn extend_floats(
        &mut self,
        i: usize,
        spans: &[[u32; 2]],
        stride: usize,
        k: usize,
        f: impl Fn(usize, usize) -> Option<f64>,
    ) -> bool {
        let f = |s, e| f(s, e).map(canonical);
        self.extend_with(i, Builder::floats, spans, stride, k, f)
    }

    /// As [`Columns::extend_floats`], for a decimal column (`f` gives the
    /// unscaled integer).
    #[inline(always)]
    pub fn extend_decimals(
        &mut self,
        i: usize,
        spans: &[[u32; 2]],
        stride: usize,
        k: usize,
        f: impl Fn(usize, usize) -> Option<i128>,
    ) -> bool {
        self.extend_with(i, Builder::decimals, spans, stride, k, f)
    }

    /// As [`Columns::extend_floats`], for an integer column.
    #[inline(always)]
    pub fn extend_ints(
        &mut self,
        i: usize,
        spans: &[[u32; 2]],
        stride: usize,
        k: usize,
        f: impl Fn(usize, usize) -> Option<i64>,
    ) -> bool {
        self.extend_with(i, Builder::ints, spans, stride, k, f)
    }

    /// The `extend_` methods of number columns: the builder `pick` finds in
    /// column `i`, if any, takes the run.
    #[inline(always)]
    fn extend_with<T: ArrowPrimitiveType>(
        &mut self,
        i: usize,
        pick: fn(&mut Builder) -> Option<&mut Numbers<T>>,
        spans: &[[u32; 2]],
        stride: usize,
        k: usize,
        f: impl Fn(usize, usize) -> Option<T::Native>,
    ) -> bool {
        let Some(b) = pick(&mut self.builders[i]) else {
            return false;
        };
        self.bad_values += b.extend_spans(spans, stride, k, f);
        true
    }

    /// Text for column `i` (which must be a string column).
    pub fn str(&mut self, i: usize, v: &[u8]) {
        let Builder::Str(b) = &mut self.builders[i] else {
            unreachable!("column {i} is not text")
        };
        // The caller checked the whole record (`utf8_checked`), and the value is
        // cut at ASCII bytes of it.
        if self.utf8_checked || std::str::from_utf8(v).is_ok() {
            return b.push(v);
        }
        self.invalid_utf8 += 1;
        b.push(String::from_utf8_lossy(v).as_bytes());
    }

    /// Text `piece[s..e]` for column `i` (a string column); as [`Columns::str`],
    /// with the inline views read from the piece.
    #[inline(always)]
    pub fn str_at(&mut self, i: usize, piece: &[u8], s: usize, e: usize) {
        match &mut self.builders[i] {
            Builder::Str(b) if self.utf8_checked => b.push_at(piece, s, e),
            _ => self.str(i, &piece[s..e]),
        }
    }

    #[inline(always)]
    pub fn int(&mut self, i: usize, v: Option<i64>) {
        match (&mut self.builders[i], v) {
            (Builder::Int(b), v) => b.push(v),
            (other, None) => other.null(),
            (Builder::Float(b), Some(v)) => b.push(Some(v as f64)),
            _ => unreachable!("column {i} is not a number"),
        }
    }

    #[inline(always)]
    pub fn float(&mut self, i: usize, v: Option<f64>) {
        match (&mut self.builders[i], v) {
            (Builder::Float(b), v) => b.push(v.map(canonical)),
            (other, None) => other.null(),
            _ => unreachable!("column {i} is not a float"),
        }
    }

    /// A decimal as its unscaled integer (`12.3` at scale 1 is 123).
    #[inline(always)]
    pub fn decimal(&mut self, i: usize, v: Option<i128>) {
        match (&mut self.builders[i], v) {
            (Builder::Dec(b), v) => b.push(v),
            (other, None) => other.null(),
            _ => unreachable!("column {i} is not a decimal"),
        }
    }

    /// Microseconds since the Unix epoch, UTC.
    pub fn time(&mut self, i: usize, v: Option<i64>) {
        match (&mut self.builders[i], v) {
            (Builder::Time(b), v) => b.push(v),
            (other, None) => other.null(),
            _ => unreachable!("column {i} is not a timestamp"),
        }
    }

    pub fn bool(&mut self, i: usize, v: Option<bool>) {
        match (&mut self.builders[i], v) {
            (Builder::Bool(b), v) => b.append_option(v),
            (other, None) => other.null(),
            _ => unreachable!("column {i} is not a bool"),
        }
    }

    pub fn null(&mut self, i: usize) {
        self.builders[i].null();
    }

    /// [`Columns::text_as_kind`] of `piece[s..e]`: a text column reads inline
    /// views from the piece ([`Columns::str_at`]).
    #[inline(always)]
    pub fn text_at(&mut self, i: usize, piece: &[u8], s: usize, e: usize) {
        match self.kinds[i] {
            Kind::Str => self.str_at(i, piece, s, e),
            _ => self.text_as_kind(i, &piece[s..e]),
        }
    }

    /// Text for column `i` converted to the column's kind; a value that does not
    /// convert is NULL and counted in [`Columns::bad_values`] (used by formats
    /// whose types are inferred or given: CSV, fields, logfmt, regex).
    pub fn text_as_kind(&mut self, i: usize, v: &[u8]) {
        let ok = match self.kinds[i] {
            Kind::Str => return self.str(i, v),
            Kind::Int => self.put(i, parse_int(v), Self::int),
            Kind::Float => self.put(i, parse_float(v), Self::float),
            Kind::Decimal { precision, scale } => {
                self.put(i, parse_decimal(v, precision, scale), Self::decimal)
            }
            Kind::Time => self.put(i, super::time::parse_any(v), Self::time),
            Kind::Bool => self.put(i, parse_bool(v), Self::bool),
        };
        if !ok {
            self.bad(i, v);
        }
    }

    /// Count `v`, a value of column `i` that did not convert to its type (the
    /// caller appended NULL instead).
    #[cold]
    pub fn bad(&mut self, i: usize, v: &[u8]) {
        self.bad_values += 1;
        if self.first_bad.is_none() {
            self.first_bad = Some((i, v.to_vec()));
        }
    }

    /// Append a converted value (NULL if it did not convert); false if it did not.
    #[inline(always)]
    pub fn put<T>(&mut self, i: usize, v: Option<T>, f: fn(&mut Self, usize, Option<T>)) -> bool {
        let ok = v.is_some();
        f(self, i, v);
        ok
    }

    /// Take the rows built so far: one array per column, and the row count.
    pub fn take(&mut self) -> (Vec<ArrayRef>, usize) {
        let arrays = self.builders.iter_mut().map(Builder::finish).collect();
        (arrays, std::mem::take(&mut self.rows))
    }

    /// Take the rows built so far as a batch of `schema` (the projected schema).
    pub fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch, ArrowError> {
        let (arrays, rows) = self.take();
        let opts = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(schema.clone(), arrays, &opts)
    }
}

/// A decimal integer with an optional sign; anything else is `None`.
#[inline]
pub fn parse_int(v: &[u8]) -> Option<i64> {
    let (neg, digits) = match v.first()? {
        b'-' => (true, &v[1..]),
        b'+' => (false, &v[1..]),
        _ => (false, v),
    };
    if digits.is_empty() || digits.len() > 18 {
        return std::str::from_utf8(v).ok()?.parse().ok();
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (d - b'0') as i64;
    }
    Some(if neg { -n } else { n })
}

/// The integer `buf[at..end]` writes, as [`parse_int`] reads it. A field of
/// 1 to 8 plain digits with 8 bytes of `buf` from `at` is read in one word
/// (a log's status and size: with [`parse_int`]'s loop, reading both took
/// ~180 of the report's ~2,900 instructions a line, in one word ~153,
/// cachegrind).
#[inline]
pub fn parse_int_in(buf: &[u8], at: usize, end: usize) -> Option<i64> {
    let n = end.wrapping_sub(at);
    if let (1..=8, Some(word)) = (n, buf.get(at..at.wrapping_add(8))) {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        if let Some(x) = eight_digits(word, n) {
            return Some(x as i64);
        }
    }
    parse_int(&buf[at..end])
}

/// The number the first `n` (1 to 8) bytes of `word` (little-endian) write
/// if they are all ASCII digits: they are moved up and `0`s put before them,
/// then read eight digits at a time (Lemire's "parse eight digits" SWAR).
#[inline(always)]
fn eight_digits(word: u64, n: usize) -> Option<u64> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let shift = 8 * (8 - n as u32);
    let x = word.checked_shl(shift).unwrap_or(0) | ZEROS.checked_shr(64 - shift).unwrap_or(0);
    // Each byte 0x30..=0x39: high nibble 3, and still 3 with 6 added (a
    // carry out of a byte comes only from one that already failed).
    let high = 0xF0F0_F0F0_F0F0_F0F0;
    if x & high != ZEROS || x.wrapping_add(0x0606_0606_0606_0606) & high != ZEROS {
        return None;
    }
    let x = (x & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
    let x = (x & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    Some((x & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32)
}

/// A float as a column holds it: every NaN as the one positive quiet NaN.
/// SQL holds NaNs equal (DuckDB groups them as one), but `GROUP BY f` of
/// `NaN` and `-NaN` made two groups, and DataFusion 55's `count(DISTINCT f)`
/// beside another aggregate counted them apart. (`-0.0` keeps its sign: its
/// distinct counts are mended in the query, `wf_sql`'s `distinct_zero`.)
#[inline(always)]
pub fn canonical(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else {
        x
    }
}

/// A float as Rust's parser reads it (`1.5`, `-2e3`, `inf`); `None` otherwise.
pub fn parse_float(v: &[u8]) -> Option<f64> {
    std::str::from_utf8(v).ok()?.trim().parse().ok()
}

/// A plain decimal (`-12.34`, `7`, `.5`; spaces around it allowed) as an
/// integer of `scale` decimal places, rounded half away from zero as DuckDB
/// casts text to DECIMAL; `None` if it is no such number or needs more than
/// `precision` digits.
///
/// The common shape (at most 18 digits, no more decimals than the scale) is
/// read with two tight digit loops: the general path below was 26% of a 1BRC
/// query over `t:decimal(3,1)` in perf, this one keeps it near the float parse.
pub fn parse_decimal(v: &[u8], precision: u8, scale: i8) -> Option<i128> {
    let p = plain_number(v)?;
    let (digits, scale_u) = (p.int_digits + p.decimals, scale.max(0) as usize);
    if p.whole && (1..=18).contains(&digits) && p.decimals <= scale_u {
        let n = (p.m as i128).checked_mul(POW10[scale_u - p.decimals])?;
        return (n < POW10[precision as usize]).then_some(if p.neg { -n } else { n });
    }
    decimal_general(v, precision, scale_u)
}

/// `[-+]digits[.digits]` at the start of a value, read with two tight digit
/// loops (one loop that tests for the dot at every byte was slower); shared by
/// the CSV float parse and [`parse_decimal`].
pub struct PlainNumber {
    pub neg: bool,
    /// The digits as one integer (wrapping past 18 digits: callers that take
    /// more go to a general parse).
    pub m: i64,
    /// Digits before the dot, and after it.
    pub int_digits: usize,
    pub decimals: usize,
    /// The shape is the whole value.
    pub whole: bool,
}

pub fn plain_number(v: &[u8]) -> Option<PlainNumber> {
    let (neg, body) = match v.first()? {
        b'-' => (true, &v[1..]),
        b'+' => (false, &v[1..]),
        _ => (false, v),
    };
    let digits_from = |mut i: usize, mut m: i64| {
        while let Some(&c) = body.get(i).filter(|c| c.is_ascii_digit()) {
            m = m.wrapping_mul(10).wrapping_add((c - b'0') as i64);
            i += 1;
        }
        (i, m)
    };
    let (int_end, m) = digits_from(0, 0);
    let (end, m) = match body.get(int_end) {
        Some(b'.') => digits_from(int_end + 1, m),
        _ => (int_end, m),
    };
    Some(PlainNumber {
        neg,
        m,
        int_digits: int_end,
        decimals: end.saturating_sub(int_end + 1),
        whole: end == body.len(),
    })
}

/// Powers of ten up to 10^38 (the largest decimal precision).
pub const POW10: [i128; 39] = {
    let mut p = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// [`parse_decimal`] for every other shape: spaces, many digits, decimals to
/// round away.
fn decimal_general(v: &[u8], precision: u8, scale: usize) -> Option<i128> {
    let v = v.trim_ascii();
    let (neg, body) = match v.first()? {
        b'-' => (true, &v[1..]),
        b'+' => (false, &v[1..]),
        _ => (false, v),
    };
    let (int, frac) = match body.iter().position(|&c| c == b'.') {
        Some(d) => (&body[..d], &body[d + 1..]),
        None => (body, &body[..0]),
    };
    if int.len() + frac.len() == 0 || !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return None;
    }
    let mut n: i128 = 0;
    let kept = frac.iter().chain(std::iter::repeat(&b'0')).take(scale);
    for &d in int.iter().chain(kept) {
        n = n.checked_mul(10)?.checked_add((d - b'0') as i128)?;
    }
    if frac.get(scale).is_some_and(|&d| d >= b'5') {
        n += 1;
    }
    (n < POW10[precision as usize]).then_some(if neg { -n } else { n })
}

pub fn parse_bool(v: &[u8]) -> Option<bool> {
    match v {
        b"true" | b"TRUE" | b"True" | b"t" | b"1" => Some(true),
        b"false" | b"FALSE" | b"False" | b"f" | b"0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An integer read from its buffer gives what `parse_int` gives of the
    /// field alone: fields of 0 to 10 bytes, mostly digits, the others
    /// those that pass one of the digits' two checks (0x2A-0x2F, 0x3A-0x3F)
    /// or neither (a space, 0x00, 0xC0, 0xF9, 0xFF), with and without 8
    /// bytes after their start; and every number under 10^5 written with
    /// and without leading zeros.
    #[test]
    fn an_int_read_in_its_buffer_is_parse_ints() {
        let alphabet = b"0123456789*+,-./:;<=>? \x00\xff\xf9\xc0";
        let mut s = 11u64;
        for _ in 0..300_000 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = (s >> 60) as usize % 11;
            let pick = |k: usize| alphabet[((s >> (5 * k % 55)) as usize + k * 7) % alphabet.len()];
            // Mostly digits, so that many fields are numbers.
            let field: Vec<u8> = (0..len)
                .map(|k| match (s >> (k + 3)) & 3 {
                    0 => pick(k),
                    _ => b'0' + ((s >> (3 * k % 60)) % 10) as u8,
                })
                .collect();
            for (before, after) in [(0, 0), (3, 0), (0, 9), (2, 5)] {
                let mut buf = vec![b'9'; before];
                buf.extend_from_slice(&field);
                buf.extend((0..after).map(|k| pick(k + 20)));
                let got = parse_int_in(&buf, before, before + len);
                assert_eq!(got, parse_int(&field), "{:?} in {:?}", field, buf);
            }
        }
        for n in 0..100_000u32 {
            for text in [format!("{n}"), format!("{n:08}"), format!("{n:07} ")] {
                let t = text.trim_end().as_bytes();
                let buf = format!("{text}        ");
                assert_eq!(parse_int_in(buf.as_bytes(), 0, t.len()), Some(n as i64));
            }
        }
    }

    /// The fast path gives what the general one gives, on every short shape.
    #[test]
    fn decimal_fast_path_equals_the_general_one() {
        let alphabet = b"0123456789.-+ e";
        let mut s = 7u64;
        for _ in 0..200_000 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = (s >> 60) as usize;
            let v: Vec<u8> = (0..len)
                .map(|k| alphabet[((s >> (4 * k % 56)) as usize + k) % alphabet.len()])
                .collect();
            for (p, sc) in [(3u8, 1i8), (38, 10), (5, 0), (18, 18)] {
                assert_eq!(
                    parse_decimal(&v, p, sc),
                    decimal_general(&v, p, sc as usize),
                    "{:?} decimal({p},{sc})",
                    String::from_utf8_lossy(&v)
                );
            }
        }
    }

    /// A column appended from spans ([`Views::extend_spans`]: runs of inline,
    /// one-block, two-block and copied values, NULLs, and values near the
    /// piece's end, which end a run) holds what [`Views::push`] gives, with
    /// every stride and entry, and with data left from an earlier batch.
    #[test]
    fn views_from_spans_equal_pushed_values() {
        let piece: Vec<u8> = (0..300u32).map(|i| b'a' + (i * 7 % 26) as u8).collect();
        let mut spans = Vec::new();
        for s in [0u32, 1, 5, 130, 200, 230, 250, 262, 268, 280, 299, 300] {
            for len in 0..=(2 * LONG as u32 + 3).min(300 - s) {
                spans.push([s, s + len]);
                if len % 9 == 4 {
                    spans.push(NULL_SPAN);
                }
            }
        }
        for stride in 1..=3 {
            for k in 0..stride {
                let (mut got, mut want) = (Views::new(), Views::new());
                got.push(b"an earlier value longer than twelve bytes");
                want.push(b"an earlier value longer than twelve bytes");
                let rows = &spans[..spans.len() / stride * stride];
                got.extend_spans(&piece, rows, stride, k);
                for c in rows.chunks_exact(stride) {
                    match c[k] {
                        NULL_SPAN => want.null(),
                        [s, e] => want.push(&piece[s as usize..e as usize]),
                    }
                }
                assert_eq!(got.finish(), want.finish(), "stride {stride} entry {k}");
            }
        }
    }

    /// Views read from a piece ([`Views::push_at`]: inline, the fixed-size
    /// block, and the plain copy near the piece's end) hold the values
    /// [`Views::push`] gives, at every length up to past twice [`LONG`].
    #[test]
    fn views_from_the_piece_equal_pushed_values() {
        let piece: Vec<u8> = (0..200u32).map(|i| b'a' + (i * 7 % 26) as u8).collect();
        let (mut at, mut pushed) = (Views::new(), Views::new());
        let mut want = Vec::new();
        for s in [0, 1, 130, 136, 137, 150, 160, 170, 185, 199] {
            for len in 0..=(2 * LONG + 3).min(piece.len() - s) {
                at.push_at(&piece, s, s + len);
                pushed.push(&piece[s..s + len]);
                want.push(String::from_utf8(piece[s..s + len].to_vec()).unwrap());
            }
        }
        let (at, pushed) = (at.finish(), pushed.finish());
        let got: Vec<&str> = at.iter().map(|v| v.unwrap()).collect();
        assert_eq!(got, want);
        assert_eq!(at, pushed);
    }
}
