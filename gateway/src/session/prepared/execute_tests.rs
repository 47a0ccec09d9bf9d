use super::*;

/// An EXECUTE of statement `id`: `nulls` bitmap, types when given, then `values`.
pub(crate) fn packet(id: u32, flags: u8, params: u16, nulls: &[u8], types: Option<&[u8]>, values: &[u8]) -> Vec<u8> {
    let mut p = vec![0x17];
    p.extend_from_slice(&id.to_le_bytes());
    p.push(flags);
    p.extend_from_slice(&1u32.to_le_bytes());
    if params > 0 {
        let mut bitmap = nulls.to_vec();
        bitmap.resize(usize::from(params).div_ceil(8), 0);
        p.extend_from_slice(&bitmap);
        p.push(u8::from(types.is_some()));
        p.extend_from_slice(types.unwrap_or_default());
        p.extend_from_slice(values);
    }
    p
}

const TYPES: [u8; 4] = [0x08, 0x00, 0xfd, 0x00];
const VALUES: [u8; 12] = [123, 0, 0, 0, 0, 0, 0, 0, 3, b'a', b'b', b'c'];

#[test]
fn header_bitmap_types_and_values() {
    let p = packet(3, CURSOR_TYPE_READ_ONLY, 2, &[0b10], Some(&TYPES), &VALUES[..8]);
    let ex = Execute::parse(&p, 2).unwrap();
    assert_eq!((ex.statement_id, ex.iterations, ex.wants_cursor()), (3, 1, true));
    assert_eq!(ex.types, Some(&TYPES[..]));
    assert!(!ex.is_null(0) && ex.is_null(1));
    assert_eq!(ex.values(), &VALUES[..8]);
    let p2 = packet(3, 0, 2, &[], None, &VALUES);
    let ex = Execute::parse(&p2, 2).unwrap();
    assert_eq!((ex.types, ex.values(), ex.wants_cursor()), (None, &VALUES[..], false));
    let p0 = packet(4, 0, 0, &[], None, &[]);
    let ex = Execute::parse(&p0, 0).unwrap();
    assert_eq!((ex.statement_id, ex.values()), (4, &[][..]));
}

#[test]
fn malformed_packets_get_mariadbs_errors() {
    assert_eq!(statement_id(&[0x17, 1, 0, 0]), Err(PreparedError::Malformed), "shorter than the header");
    let mut bad_flag = packet(1, 0, 2, &[], None, &VALUES);
    bad_flag[11] = 2;
    assert_eq!(Execute::parse(&bad_flag, 2), Err(PreparedError::Malformed));
    let cut_types = packet(1, 0, 2, &[], Some(&TYPES[..3]), &[]);
    assert_eq!(Execute::parse(&cut_types, 2), Err(PreparedError::Malformed));
    let no_flag = &packet(1, 0, 2, &[], None, &[])[..11];
    assert_eq!(Execute::parse(no_flag, 2), Err(PreparedError::WrongArguments("mysqld_stmt_execute")));
    assert_eq!(PreparedError::Malformed.to_err().code, 1835);
}

#[test]
fn rewrite_replaces_only_the_id() {
    for p in [
        packet(1, 0, 2, &[], Some(&TYPES), &VALUES),
        packet(1, 1, 2, &[1], None, &VALUES[8..]),
        packet(1, 0, 0, &[], None, &[]),
    ] {
        let params = if p.len() > 10 { 2 } else { 0 };
        let out = rewrite(&p, 0xAABB_CCDD, params, None).unwrap();
        assert_eq!(out[1..5], 0xAABB_CCDDu32.to_le_bytes());
        assert_eq!(out[..1], p[..1]);
        assert_eq!(out[5..], p[5..], "byte-exact apart from the id");
        // Types the packet already carries are not inserted twice.
        let types = ParamTypes::new(&[0xfe, 0, 0xfe, 0]);
        if params == 2 && p[11] == 1 {
            assert_eq!(rewrite(&p, 0xAABB_CCDD, 2, Some(&types)).unwrap(), out);
        }
    }
}

#[test]
fn rewrite_inserts_remembered_types_for_a_fresh_connection() {
    let client = packet(9, 0, 2, &[], None, &VALUES);
    let types = ParamTypes::new(&TYPES);
    let out = rewrite(&client, 77, 2, Some(&types)).unwrap();
    assert_eq!(out, packet(77, 0, 2, &[], Some(&TYPES), &VALUES), "same as the client sending types itself");
    // And back: the rewritten packet parses to the same values region.
    let ex = Execute::parse(&out, 2).unwrap();
    assert_eq!((ex.types, ex.values()), (Some(&TYPES[..]), &VALUES[..]));
    let wrong = ParamTypes::new(&TYPES[..2]);
    assert!(rewrite(&client, 77, 2, Some(&wrong)).is_err());
}

#[test]
fn set_statement_id_works_on_every_statement_command() {
    let mut fetch = vec![0x1c, 1, 0, 0, 0, 10, 0, 0, 0];
    set_statement_id(&mut fetch, 0x0102_0304).unwrap();
    assert_eq!(fetch, [0x1c, 4, 3, 2, 1, 10, 0, 0, 0]);
    assert!(set_statement_id(&mut [0x19, 1], 5).is_err());
}
