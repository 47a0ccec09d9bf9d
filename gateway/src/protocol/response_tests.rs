//! Unit tests of the response tracker: packet sequences as servers send them.

use super::*;
use crate::protocol::message::{ErrPacket, OkPacket};

fn ok(st: u16) -> Vec<u8> {
    OkPacket::with_status(st).encode(0)
}
fn eof(st: u16) -> Vec<u8> {
    let mut v = vec![0xFE, 0, 0];
    v.extend_from_slice(&st.to_le_bytes());
    v
}
fn ok_term(st: u16) -> Vec<u8> {
    let mut v = ok(st);
    v[0] = 0xFE;
    v
}
fn col() -> Vec<u8> {
    b"\x03def\x00\x01t\x01t\x01c\x01c\x0c\x3f\x00\x0b\x00\x00\x00\x03\x00\x00\x00\x00\x00".to_vec()
}
fn row(v: &[u8]) -> Vec<u8> {
    let mut out = vec![v.len() as u8];
    out.extend_from_slice(v);
    out
}

/// Feeds packets; returns the steps, checking that only the last one is Done.
fn run(shape: Shape, deprecate: bool, packets: &[Vec<u8>]) -> (Vec<Step>, ResponseTracker) {
    let mut t = ResponseTracker::new(shape, deprecate);
    let steps: Vec<Step> = packets.iter().map(|p| t.on_frame(p).unwrap()).collect();
    (steps, t)
}

fn assert_ends_at_last(steps: &[Step]) {
    let (last, rest) = steps.split_last().unwrap();
    assert_eq!(*last, Step::Done, "{steps:?}");
    assert!(rest.iter().all(|s| *s == Step::More), "{steps:?}");
}

#[test]
fn classic_result_set_ends_at_second_eof() {
    let (steps, t) = run(Shape::Results, false, &[vec![2], col(), col(), eof(2), row(b"a"), row(b"b"), eof(2)]);
    assert_ends_at_last(&steps);
    assert_eq!(t.last_status, Some(2));
}

#[test]
fn deprecate_eof_result_set_ends_at_ok_terminator() {
    let (steps, _) = run(Shape::Results, true, &[vec![1], col(), row(b"x"), ok_term(2)]);
    assert_ends_at_last(&steps);
}

#[test]
fn multi_results_continue_while_more_results_flag_is_set() {
    let more = status::MORE_RESULTS_EXISTS | 2;
    let (steps, _) =
        run(Shape::Results, true, &[vec![1], col(), row(b"1"), ok_term(more), ok(more), vec![1], col(), ok_term(2)]);
    assert_ends_at_last(&steps);
}

#[test]
fn error_ends_results_even_mid_rows() {
    let err = ErrPacket::new(1317, "interrupted").encode();
    let (steps, t) = run(Shape::Results, false, &[vec![1], col(), eof(2), row(b"1"), err]);
    assert_ends_at_last(&steps);
    assert!(t.failed);
}

#[test]
fn row_with_fe_prefix_and_long_length_is_not_a_terminator() {
    let mut big_row = vec![0xFE];
    big_row.extend_from_slice(&[0u8; 20]);
    let (steps, _) = run(Shape::Results, false, &[vec![1], col(), eof(2), big_row, eof(2)]);
    assert_ends_at_last(&steps);
}

#[test]
fn local_infile_request_is_reported_then_ok_ends() {
    let mut t = ResponseTracker::new(Shape::Results, true);
    assert_eq!(t.on_frame(b"\xFBdata.csv").unwrap(), Step::LocalInfile);
    assert_eq!(t.on_frame(&ok(2)).unwrap(), Step::Done);
}

#[test]
fn prepare_counts_definitions_and_eofs() {
    let prep = |cols: u16, params: u16| {
        let mut v = vec![0, 7, 0, 0, 0];
        v.extend_from_slice(&cols.to_le_bytes());
        v.extend_from_slice(&params.to_le_bytes());
        v.extend_from_slice(&[0, 0, 0]);
        v
    };
    let (steps, t) = run(Shape::Prepare, false, &[prep(2, 1), col(), eof(2), col(), col(), eof(2)]);
    assert_ends_at_last(&steps);
    assert_eq!(t.prepared, Some(Prepared { statement_id: 7, columns: 2, params: 1 }));
    let (steps, _) = run(Shape::Prepare, true, &[prep(1, 2), col(), col(), col()]);
    assert_ends_at_last(&steps);
    let (steps, _) = run(Shape::Prepare, false, &[prep(0, 0)]);
    assert_ends_at_last(&steps);
}

#[test]
fn cursor_execute_ends_after_column_eof() {
    let execute_with_cursor = [0x17, 1, 0, 0, 0, 0x01, 1, 0, 0, 0];
    let mut t = ResponseTracker::for_command(Shape::Results, &execute_with_cursor, false);
    let steps: Vec<Step> =
        [vec![1], col(), eof(status::CURSOR_EXISTS | 2)].iter().map(|p| t.on_frame(p).unwrap()).collect();
    assert_ends_at_last(&steps);
    let (steps, _) = run(Shape::Fetch, false, &[vec![0, 0, 1, b'a'], eof(status::LAST_ROW_SENT | 2)]);
    assert_ends_at_last(&steps);
}

#[test]
fn cursor_flag_of_a_procedure_result_set_does_not_end_it() {
    // MariaDB, inside a procedure with an open cursor: CURSOR_EXISTS on an ordinary result set.
    let flagged = status::CURSOR_EXISTS | 2;
    for payload in [&b"\x03CALL p()"[..], &[0x17, 1, 0, 0, 0, 0x00, 1, 0, 0, 0]] {
        let mut t = ResponseTracker::for_command(Shape::Results, payload, false);
        let packets = [vec![1], col(), eof(flagged), row(b"a"), eof(flagged | status::MORE_RESULTS_EXISTS), ok(2)];
        let steps: Vec<Step> = packets.iter().map(|p| t.on_frame(p).unwrap()).collect();
        assert_ends_at_last(&steps);
    }
}

#[test]
fn large_packet_continuation_frames_are_not_inspected() {
    let mut t = ResponseTracker::new(Shape::Results, false);
    for p in [vec![1], col(), eof(2)] {
        t.on_frame(&p).unwrap();
    }
    let mut first = vec![0xFFu8; MAX_FRAME]; // starts like ERR, but is a row's first frame
    first[0] = 0xFD;
    assert_eq!(t.on_frame(&first).unwrap(), Step::More);
    assert_eq!(t.on_frame(&[0xFE, 0, 0, 2, 0]).unwrap(), Step::More, "continuation, not EOF");
    assert_eq!(t.on_frame(&eof(2)).unwrap(), Step::Done);
}

#[test]
fn single_and_field_list() {
    let (steps, _) = run(Shape::Single, false, &[b"Uptime: 5  Threads: 1".to_vec()]);
    assert_ends_at_last(&steps);
    let (steps, _) = run(Shape::FieldList, false, &[col(), col(), eof(2)]);
    assert_ends_at_last(&steps);
    assert!(ResponseTracker::new(Shape::None, false).is_done());
}

#[test]
fn garbage_answers_are_errors() {
    let mut t = ResponseTracker::new(Shape::Results, false);
    assert!(t.on_frame(&[]).is_err());
    let mut t = ResponseTracker::new(Shape::Results, false);
    assert!(t.on_frame(&[0xFE]).is_err(), "a truncated column count");
    let mut t = ResponseTracker::new(Shape::Single, false);
    t.on_frame(&ok(2)).unwrap();
    assert!(t.on_frame(&ok(2)).is_err(), "nothing may follow a complete answer");
}

#[test]
fn reports_the_final_ok_and_the_error_code() {
    use crate::protocol::status::{AUTOCOMMIT, MORE_RESULTS_EXISTS};
    // Two results: the second OK is the final one.
    let (_, t) = run(Shape::Results, false, &[ok(AUTOCOMMIT | MORE_RESULTS_EXISTS), ok(AUTOCOMMIT | 1)]);
    assert_eq!(t.last_ok.as_deref(), Some(&ok(AUTOCOMMIT | 1)[..]));
    assert_eq!((t.failed, t.error_code), (false, None));
    // A result set ended by a classic EOF carries no OK; with DEPRECATE_EOF its OK is kept.
    let (_, t) = run(Shape::Results, false, &[vec![1], col(), eof(AUTOCOMMIT), row(b"x"), eof(AUTOCOMMIT)]);
    assert_eq!(t.last_ok, None);
    let (_, t) = run(Shape::Results, true, &[vec![1], col(), row(b"x"), ok_term(AUTOCOMMIT)]);
    assert_eq!(t.last_ok.as_deref(), Some(&ok_term(AUTOCOMMIT)[..]));
    let (_, t) = run(Shape::Results, false, &[ErrPacket::new(1146, "no table").encode()]);
    assert_eq!((t.failed, t.error_code), (true, Some(1146)));
    let (_, t) = run(Shape::Single, false, &[ErrPacket::new(1049, "no db").encode()]);
    assert_eq!(t.error_code, Some(1049));
}

#[test]
fn mariadb_progress_reports_do_not_end_the_answer() {
    // 0xFF, error code 0xFFFF, stage 1 of 2, progress 50 %, state "copy".
    let progress = vec![0xFF, 0xFF, 0xFF, 1, 1, 2, 0x20, 0xA1, 0x07, 4, b'c', b'o', b'p', b'y'];
    let (steps, t) = run(Shape::Results, false, &[progress.clone(), progress, ok(2)]);
    assert_ends_at_last(&steps);
    assert!(!t.failed);
    let err = ErrPacket::new(1064, "x").encode();
    let (steps, t) = run(Shape::Results, false, &[err]);
    assert_ends_at_last(&steps);
    assert!(t.failed);
}
