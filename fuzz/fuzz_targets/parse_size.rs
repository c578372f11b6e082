//! Size arguments (`--chunk-size 64M`, `--size 1G`): any string is either an error
//! message or a size of at least one byte, never a panic; plain numbers parse exactly.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: &str| {
    match wf_core::scan::parse_size(s) {
        Ok(v) => assert!(v >= 1),
        Err(m) => assert!(m.to_string().contains("invalid size")),
    }
    if !s.is_empty() && s.len() <= 15 && s.bytes().all(|b| b.is_ascii_digit()) {
        let n: u64 = s.parse().unwrap();
        if n >= 1 {
            assert_eq!(wf_core::scan::parse_size(s), Ok(n));
        }
    }
});
