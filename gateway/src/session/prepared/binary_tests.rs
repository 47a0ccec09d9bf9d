use super::*;
use crate::session::prepared::execute::tests::packet;
use crate::session::prepared::execute::Execute;

fn decode(types: &[u8], nulls: &[u8], values: &[u8]) -> Result<Vec<Value<'static>>, PreparedError> {
    let params = (types.len() / 2) as u16;
    let p = packet(1, 0, params, nulls, Some(types), values);
    let ex = Execute::parse(&p, params).unwrap();
    values_of(&ex, None, &LongData::default()).map(|v| v.into_iter().map(Value::into_owned).collect())
}

fn values_of<'a>(
    ex: &Execute<'a>,
    t: Option<&'a ParamTypes>,
    ld: &'a LongData,
) -> Result<Vec<Value<'a>>, PreparedError> {
    values(ex, t, ld)
}

fn one_value(code: u8, flags: u8, bytes: &[u8]) -> Value<'static> {
    decode(&[code, flags], &[], bytes).unwrap().remove(0)
}

fn s(text: &str) -> Value<'static> {
    Value::str(text.as_bytes().to_vec())
}

#[test]
fn integers_signed_and_unsigned() {
    assert_eq!(one_value(ty::TINY, 0, &[0xff]), Value::Int(-1));
    assert_eq!(one_value(ty::TINY, 0x80, &[0xff]), Value::Int(255));
    assert_eq!(one_value(ty::SHORT, 0, &(-300i16).to_le_bytes()), Value::Int(-300));
    assert_eq!(one_value(ty::SHORT, 0x80, &u16::MAX.to_le_bytes()), Value::Int(65535));
    assert_eq!(one_value(ty::LONG, 0, &i32::MIN.to_le_bytes()), Value::Int(i64::from(i32::MIN)));
    assert_eq!(one_value(ty::LONG, 0x80, &u32::MAX.to_le_bytes()), Value::Int(i64::from(u32::MAX)));
    assert_eq!(one_value(ty::LONGLONG, 0, &i64::MIN.to_le_bytes()), Value::Int(i64::MIN));
    assert_eq!(one_value(ty::LONGLONG, 0x80, &u64::MAX.to_le_bytes()), Value::UInt(u64::MAX));
    assert_eq!(one_value(ty::LONGLONG, 0x80, &5u64.to_le_bytes()), Value::Int(5));
}

#[test]
fn floats_decimals_and_strings() {
    assert_eq!(one_value(ty::FLOAT, 0, &1.5f32.to_le_bytes()), Value::Float(1.5));
    assert_eq!(one_value(ty::DOUBLE, 0, &(-2.25f64).to_le_bytes()), Value::Float(-2.25));
    assert_eq!(one_value(ty::NEWDECIMAL, 0, b"\x05-1.50"), Value::Decimal("-1.50".into()));
    assert_eq!(one_value(ty::DECIMAL, 0, b"\x0212"), Value::Decimal("12".into()));
    assert_eq!(one_value(ty::NEWDECIMAL, 0, b"\x03abc"), Value::Unknown);
    for code in [ty::VARCHAR, ty::VAR_STRING, ty::STRING, ty::ENUM, ty::SET] {
        assert_eq!(one_value(code, 0, b"\x03abc"), s("abc"), "{code:#x}");
    }
    let bin = Value::Str { bytes: Cow::Owned(b"ab".to_vec()), charset: Some(Cow::Borrowed("binary")) };
    for code in [ty::TINY_BLOB, ty::MEDIUM_BLOB, ty::LONG_BLOB, ty::BLOB] {
        assert_eq!(one_value(code, 0, b"\x02ab"), bin, "{code:#x}");
    }
    assert_eq!(one_value(ty::GEOMETRY, 0, b"\x02ab"), Value::Unknown);
    // A 300-byte string: 0xFC length prefix.
    let mut long = vec![0xfc, 0x2c, 0x01];
    long.extend(std::iter::repeat_n(b'z', 300));
    assert_eq!(one_value(ty::VAR_STRING, 0, &long), s(&"z".repeat(300)));
    // A length past the end takes what is there (MariaDB's set_param_str).
    assert_eq!(one_value(ty::VAR_STRING, 0, b"\x09ab"), s("ab"));
}

#[test]
fn temporal_values_of_every_length() {
    assert_eq!(one_value(ty::DATE, 0, &[0]), s("0000-00-00"));
    assert_eq!(one_value(ty::DATE, 0, &[4, 0xe8, 0x07, 2, 29]), s("2024-02-29"));
    assert_eq!(one_value(ty::DATETIME, 0, &[0]), s("0000-00-00 00:00:00"));
    assert_eq!(one_value(ty::DATETIME, 0, &[4, 0xe8, 0x07, 1, 2]), s("2024-01-02 00:00:00"));
    assert_eq!(one_value(ty::TIMESTAMP, 0, &[7, 0xe8, 0x07, 1, 2, 3, 4, 5]), s("2024-01-02 03:04:05"));
    let mut dt = vec![11, 0xe8, 0x07, 1, 2, 3, 4, 5];
    dt.extend_from_slice(&1500u32.to_le_bytes());
    assert_eq!(one_value(ty::DATETIME, 0, &dt), s("2024-01-02 03:04:05.001500"));
    assert_eq!(one_value(ty::TIME, 0, &[0]), s("00:00:00"));
    assert_eq!(one_value(ty::TIME, 0, &[8, 1, 1, 0, 0, 0, 2, 3, 4]), s("-26:03:04"));
    let mut tm = vec![12, 0, 0, 0, 0, 0, 10, 20, 30];
    tm.extend_from_slice(&7u32.to_le_bytes());
    assert_eq!(one_value(ty::TIME, 0, &tm), s("10:20:30.000007"));
    assert_eq!(one_value(ty::TIME, 0, &[8, 0, 40, 0, 0, 0, 0, 0, 0]), s("838:59:59"), "MariaDB's cap");
}

#[test]
fn nulls_types_without_values_and_malformed_values() {
    let v = decode(&[ty::LONGLONG, 0, ty::NULL, 0, ty::VAR_STRING, 0], &[0b001], b"\x01x").unwrap();
    assert_eq!(v, vec![Value::Null, Value::Null, s("x")]);
    let wrong = Err(PreparedError::WrongArguments("mysqld_stmt_execute"));
    assert_eq!(decode(&[ty::LONGLONG, 0], &[], &[1, 2, 3]), wrong, "short integer");
    assert_eq!(decode(&[ty::LONG, 0, ty::LONG, 0], &[], &[1, 0, 0, 0]), wrong, "values end early");
    assert_eq!(decode(&[0x11, 0], &[], &[1]), wrong, "TIMESTAMP2 is not a parameter type");
    assert_eq!(decode(&[ty::JSON, 0], &[], b"\x02{}"), wrong, "MariaDB has no JSON parameter type");
    assert_eq!(decode(&[ty::LONG, 0x01], &[], &[1, 0, 0, 0]), wrong, "flags other than unsigned");
    assert_eq!(decode(&[ty::VAR_STRING, 0], &[], &[0xff]), wrong, "bad length prefix");
}

#[test]
fn remembered_types_long_data_and_no_types() {
    let types = ParamTypes::new(&[ty::LONGLONG, 0, ty::BLOB, 0]);
    let mut ld = LongData::default();
    ld.push(1, b"big");
    ld.push(1, b"ger");
    let p = packet(1, 0, 2, &[], None, &42i64.to_le_bytes());
    let ex = Execute::parse(&p, 2).unwrap();
    let v = values_of(&ex, Some(&types), &ld).unwrap();
    assert_eq!(v[0], Value::Int(42));
    assert_eq!(v[1], Value::Str { bytes: Cow::Owned(b"bigger".to_vec()), charset: Some(Cow::Borrowed("binary")) });
    assert_eq!(values_of(&ex, None, &LongData::default()).unwrap(), vec![Value::Unknown, Value::Unknown]);
    // Long data for a numeric parameter: refused like the server does.
    let mut ld0 = LongData::default();
    ld0.push(0, b"1");
    assert!(values_of(&ex, Some(&types), &ld0).is_err());
}

#[test]
fn odd_integer_types_stop_decoding() {
    // Measured on MariaDB 11: INT24, YEAR and BIT do not take the bytes the protocol documents.
    for code in [ty::INT24, ty::YEAR, ty::BIT] {
        let mut vals = 7i64.to_le_bytes().to_vec();
        vals.extend_from_slice(&[1, 2, 3, 4, 3, b'a', b'b', b'c']);
        let v = decode(&[ty::LONGLONG, 0, code, 0, ty::VAR_STRING, 0], &[], &vals).unwrap();
        assert_eq!(v, vec![Value::Int(7), Value::Unknown, Value::Unknown], "{code:#x}");
    }
    // A NULL one is no problem.
    let v = decode(&[ty::INT24, 0, ty::VAR_STRING, 0], &[0b01], b"\x01x").unwrap();
    assert_eq!(v, vec![Value::Null, s("x")]);
}
