/// Many byte strings in one buffer.
#[derive(Default)]
pub(super) struct Strs {
    buf: Vec<u8>,
    ends: Vec<u32>,
}

impl Strs {
    pub(super) fn push(&mut self, s: &[u8]) -> u32 {
        self.buf.extend_from_slice(s);
        self.ends.push(self.buf.len() as u32);
        self.ends.len() as u32 - 1
    }
    #[inline]
    pub(super) fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.buf[start..self.ends[i] as usize]
    }
}
